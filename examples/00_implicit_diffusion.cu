// Solves ten implicit diffusion steps on a 70 × 70 grid (partial 32 × 8 tiles at the edges) with
// relax::Solver<Stencil5<float>, Sync, Fixed> and checks the result against the reference
// backend: the same sweep count for every step and the same bits in the final state. Without a
// GPU it says so and checks the serial reference against the OpenMP one instead.

#include <relax/relax.hpp>

#include <cstdio>
#include <cstring>

namespace {

bool same_bits(const relax::HostGrid<float>& a, const relax::HostGrid<float>& b) {
  return a.storage().size() == b.storage().size() &&
         std::memcmp(a.storage().data(), b.storage().data(), a.storage().size() * sizeof(float)) == 0;
}

bool same_schedule(const relax::RunReport& a, const relax::RunReport& b) {
  if (a.steps.size() != b.steps.size()) return false;
  for (std::size_t k = 0; k < a.steps.size(); ++k)
    if (a.steps[k].sweeps != b.steps[k].sweeps || a.steps[k].rho != b.steps[k].rho) return false;
  return true;
}

}  // namespace

int main() {
  relax::DiffusionParams p;
  p.n = 70;
  p.r = 10.0;
  p.source = relax::Source::gaussian;
  const relax::Fixed every8(8);
  const relax::SolveOptions options;  // tol 1e-5

  relax::HostGrid<float> expected;
  const relax::RunReport ref = relax::reference::run_diffusion<float>(
      p, every8.check_interval, options, relax::reference::Exec::serial(), &expected);

  relax::HostGrid<float> got;
  relax::RunReport run;
  if (relax::device_count() > 0) {
    relax::Solver<relax::Stencil5<float>, relax::Sync, relax::Fixed> solver(
        p.n, relax::Stencil5<float>(p.r), every8, options);
    relax::DiffusionState<float> state(p, solver.stream());
    run = relax::run_diffusion(solver, state);
    got = relax::to_host(state.u(), solver.stream());
    std::printf("GPU (%s) against the serial reference:\n", relax::device_info(0).name.c_str());
  } else {
    run = relax::reference::run_diffusion<float>(p, every8.check_interval, options,
                                                 relax::reference::Exec::openmp(), &got);
    std::printf("no CUDA device is present: checking the OpenMP reference against the serial one\n");
  }
  for (std::size_t k = 0; k < run.steps.size(); ++k)
    std::printf("  step %zu: %lld sweeps, rho %.3e\n", k + 1,
                static_cast<long long>(run.steps[k].sweeps), run.steps[k].rho);

  const bool ok = ref.converged() && run.converged() && same_schedule(ref, run) &&
                  same_bits(expected, got);
  std::printf("%s: %lld sweeps in all, final state %s\n", ok ? "OK" : "MISMATCH",
              static_cast<long long>(run.sweeps()), same_bits(expected, got) ? "bit-identical" : "differs");
  return ok ? 0 : 1;
}
