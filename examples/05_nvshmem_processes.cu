// Ten implicit diffusion steps on a 257 × 257 grid with one process per GPU (NVSHMEM PEs), no host
// in the loop: each process holds two slabs of the box on its GPU and runs
// relax::MultiSolver<Stencil5<float>, DeviceLoop<Sync>, Nvshmem>; the kernels exchange halos
// through NVSHMEM and take the stop decision among themselves. Every process then checks its
// rows against the one-domain run on its own GPU: the same sweeps and ρ for every step and the
// same bits in every row it holds.
//
//   build/examples/relax_example_05_nvshmem_processes             # one process (one PE)
//   mpirun -np 2 build/examples/relax_example_05_nvshmem_processes  # one process per GPU
//
// Built where CMake finds NVSHMEM (relax::nvshmem, relocatable device code). Without a GPU it
// says so and exits with 77 (skipped).

#include <relax/multi/nvshmem.cuh>
#include <relax/relax.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

int main() {
  const int gpus = relax::device_count();
  if (gpus == 0) {
    std::printf("no CUDA device is present: this example needs one GPU per process\n");
    return 77;
  }
  // NVSHMEM first (before any solver or grid): from the launcher when one started us, else alone.
  const relax::NvshmemRuntime runtime(relax::NvshmemRuntime::FromEnvironment{});
  const int pe = runtime.pe();

  relax::DiffusionParams p;
  p.n = 257;
  p.r = 10.0;
  p.source = relax::Source::gaussian;
  const relax::Stencil5<float> stencil(p.r);
  bool ok = true;
  {
    // The one-domain run, on this process's GPU.
    relax::Solver<relax::Stencil5<float>, relax::DeviceLoop<relax::Sync>, relax::Fixed> one(p.n, stencil, relax::Fixed(8));
    relax::DiffusionState<float> whole(p, one.stream());
    const relax::RunReport want = relax::run_diffusion(one, whole, {}, relax::StepLaunch::per_step);
    const relax::HostGrid<float> want_u = relax::to_host(whole.u(), one.stream());

    // Two slabs on this PE's GPU, the box split over every PE (collective from here on).
    relax::MultiSolver<relax::Stencil5<float>, relax::DeviceLoop<relax::Sync>, relax::Nvshmem> solver(
        p.extents(), {runtime.device(), runtime.device()}, stencil, relax::Fixed(8));
    relax::DistributedDiffusionState<float> split(p, solver);
    const relax::RunReport got = relax::run_diffusion(solver, split);

    // This process's rows against the same rows of the one-domain run.
    relax::HostGrid<float> got_u = want_u;
    split.u().gather(got_u);  // overwrites the rows this process holds
    ok = got.steps.size() == want.steps.size() &&
         std::memcmp(got_u.storage().data(), want_u.storage().data(), got_u.storage().size() * sizeof(float)) == 0;
    for (std::size_t k = 0; ok && k < got.steps.size(); ++k)
      ok = got.steps[k].sweeps == want.steps[k].sweeps && got.steps[k].rho == want.steps[k].rho;
    const auto& d = split.u().decomposition();
    std::printf("PE %d of %d (GPU %d): sub-domains %d to %d of %d, %zu steps, %lld sweeps in the last, %s %s\n", pe,
                runtime.pes(), runtime.device(), split.u().first(), split.u().first() + split.u().held() - 1, d.size(),
                got.steps.size(), got.steps.empty() ? 0LL : static_cast<long long>(got.steps.back().sweeps),
                solver.stored_directly() ? "(halos stored through NVSHMEM's mapping):" : "(halos put with a signal):",
                ok ? "OK, the one-domain run bit for bit" : "MISMATCH");
  }  // solvers and grids (symmetric memory) go before NVSHMEM does
  return ok ? 0 : 1;
}
