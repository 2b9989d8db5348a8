#pragma once
// The diffusion problem solved on the GPU by one Solver composition, for tests that compare
// strategies, controllers or loops with each other or with the reference backend.

#include <relax/control/fixed.hpp>
#include <relax/domain/device_grid.hpp>
#include <relax/problem/diffusion.hpp>
#include <relax/solver/diffusion.cuh>
#include <relax/solver/solver.cuh>

namespace relax::testing {

//! `p.steps` implicit steps with `Solver<S, Strategy, Controller>`: the run's report, and the
//! final state in `final_state`.
template <class S, class Strategy, class Controller = Fixed>
RunReport gpu_diffusion(const DiffusionParams& p, HostGrid<typename S::value_type>& final_state,
                        Controller controller = Fixed(8), const SolveOptions& options = {},
                        StepLaunch launch = StepLaunch::fused) {
  Solver<S, Strategy, Controller> solver(p.extents(), S(p.r), controller, options);
  DiffusionState<typename S::value_type> state(p, solver.stream());
  const RunReport run = run_diffusion(solver, state, {}, launch);
  final_state = to_host(state.u(), solver.stream());
  return run;
}

}  // namespace relax::testing
