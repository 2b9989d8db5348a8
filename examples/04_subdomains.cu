// Ten implicit diffusion steps on a 257 × 257 grid split into three slabs (relax::MultiSolver),
// three times: with host-controlled halo copies (HostCopy) and with no host in the loop
// (PeerStore: one persistent kernel stores the halos and takes the stop decision), the latter
// with Sync's sweeps and with exact temporal blocking (a 4-row halo after every pass of 4
// sweeps), each checked against the one-domain run: the same sweeps and ρ for every step and
// the same bits in the final state. The three slabs go to the GPUs there are in turn (all three
// to GPU 0 on a machine with one). Without a GPU it says so and checks the host
// emulation of the split (relax::reference::solve_split) against the one-domain reference
// solve instead, on one step's system.

#include <relax/relax.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

namespace {

bool same_bits(const relax::HostGrid<float>& a, const relax::HostGrid<float>& b) {
  return a.storage().size() == b.storage().size() &&
         std::memcmp(a.storage().data(), b.storage().data(), a.storage().size() * sizeof(float)) == 0;
}

}  // namespace

int main() {
  relax::DiffusionParams p;
  p.n = 257;
  p.r = 10.0;
  p.source = relax::Source::gaussian;
  const relax::Fixed every8(8);
  const relax::Stencil5<float> stencil(p.r);
  using Strategy = relax::TemporalBlock<4, relax::ColumnStream>;  // a 4-row halo every 4 sweeps

  if (relax::device_count() == 0) {
    std::printf("no CUDA device is present: checking the host emulation of three slabs against one domain\n");
    relax::HostGrid<float> u = relax::initial_state<float>(p), b = u;
    const relax::HostGrid<float> f = relax::source_term<float>(p);
    for (std::size_t k = 0; k < b.storage().size(); ++k) b.storage()[k] = u.storage()[k] + f.storage()[k];
    relax::HostGrid<float> whole = u, scratch = u, split = u;
    const relax::SolveReport one = relax::reference::solve(stencil, whole, scratch, b, 8, {});
    const relax::Decomposition d(p.extents(), 3, 4);
    const relax::SolveReport three = relax::reference::solve_split(stencil, d, split, b, 8, {});
    const bool ok = one.converged() && one.sweeps == three.sweeps && one.rho == three.rho && same_bits(whole, split);
    std::printf("%s: %lld sweeps, rho %.3e, final state %s\n", ok ? "OK" : "MISMATCH",
                static_cast<long long>(three.sweeps), three.rho, same_bits(whole, split) ? "bit-identical" : "differs");
    return ok ? 0 : 1;
  }

  // One domain.
  relax::Solver<relax::Stencil5<float>, Strategy, relax::Fixed> one(p.n, stencil, every8);
  relax::DiffusionState<float> state(p, one.stream());
  const relax::RunReport want = relax::run_diffusion(one, state, {}, relax::StepLaunch::per_step);
  const relax::HostGrid<float> want_u = relax::to_host(state.u(), one.stream());

  // Three slabs, on the GPUs there are in turn.
  std::vector<int> devices;
  for (int s = 0; s < 3; ++s) devices.push_back(s % relax::device_count());
  auto check = [&](auto& solver, const char* how) {
    relax::DistributedDiffusionState<float> split(p, solver.decomposition(), solver.devices());
    const relax::RunReport got = relax::run_diffusion(solver, split);
    relax::HostGrid<float> got_u = relax::initial_state<float>(p);
    split.u().gather(got_u);
    bool same = got.steps.size() == want.steps.size();
    for (std::size_t k = 0; same && k < got.steps.size(); ++k) {
      std::printf("  step %zu: %lld sweeps, rho %.3e\n", k + 1, static_cast<long long>(got.steps[k].sweeps),
                  got.steps[k].rho);
      same = got.steps[k].sweeps == want.steps[k].sweeps && got.steps[k].rho == want.steps[k].rho;
    }
    const bool ok = want.converged() && got.converged() && same && same_bits(got_u, want_u);
    std::printf("%s: 3 sub-domains on devices %d,%d,%d, %s, %.1f ms; final state %s\n", ok ? "OK" : "MISMATCH",
                devices[0], devices[1], devices[2], how, got.time_ms,
                same_bits(got_u, want_u) ? "bit-identical to one domain" : "differs from one domain");
    return ok;
  };
  relax::MultiSolver<relax::Stencil5<float>, Strategy> copied(p.extents(), devices, stencil, every8);
  const bool host_ok = check(copied, "halo copies from the host");
  // The CPU-free solver: Sync's sweeps in one cooperative kernel per GPU (the iterates of any
  // exact strategy are Sync's, so the same one-domain run is the reference).
  relax::MultiSolver<relax::Stencil5<float>, relax::DeviceLoop<relax::Sync>, relax::PeerStore> stored(
      p.extents(), devices, stencil, every8);
  const bool peer_ok = check(stored, "halos stored by the kernels, no host in the loop");
  // The same with temporal blocking: each kernel streams 4 exact sweeps a pass over its slabs'
  // owned rows and stores their 4 edge rows into the neighbours' halos.
  relax::MultiSolver<relax::Stencil5<float>, relax::DeviceLoop<Strategy>, relax::PeerStore> streamed(
      p.extents(), devices, stencil, every8);
  const bool stream_ok = check(streamed, "4-row halos stored by the kernels after every 4 sweeps, no host in the loop");
  return host_ok && peer_ok && stream_ok ? 0 : 1;
}
