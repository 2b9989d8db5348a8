// A user program: solves a small diffusion problem with the reference backend and, when a GPU is
// present, with the synchronous GPU solver, and checks that the two agree bit for bit.
#include <relax/relax.hpp>

#include <cstdio>
#include <cstring>

int main() {
  relax::DiffusionParams p;
  p.n = 40;
  p.r = 1.0;
  p.steps = 2;
  relax::HostGrid<float> ref_u;
  const auto ref = relax::reference::run_diffusion<float>(p, 8, {}, {}, &ref_u);
  if (!ref.converged()) return 1;
  if (relax::device_count() == 0) {
    std::printf("consumer: reference solve converged in %lld sweeps (no GPU present)\n",
                static_cast<long long>(ref.sweeps()));
    return 0;
  }
  relax::Solver<relax::Stencil5<float>, relax::Sync> solver(p.n, relax::Stencil5<float>(p.r));
  relax::DiffusionState<float> state(p, solver.stream());
  const auto run = relax::run_diffusion(solver, state);
  const auto u = relax::to_host(state.u(), solver.stream());
  const bool same = std::memcmp(u.storage().data(), ref_u.storage().data(),
                                u.storage().size() * sizeof(float)) == 0;
  std::printf("consumer: GPU %lld sweeps, reference %lld, states %s\n",
              static_cast<long long>(run.sweeps()), static_cast<long long>(ref.sweeps()),
              same ? "identical" : "differ");
  return same && run.sweeps() == ref.sweeps() ? 0 : 1;
}
