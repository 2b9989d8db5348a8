#pragma once
//! \file
//! Runs the implicit diffusion problem (`relax/problem/diffusion.hpp`) on the GPU with any
//! `relax::Solver`: per step, the fused right-hand side b = uⁿ + Δt f, then one linear solve that
//! starts from uⁿ.

#include <relax/control/report.hpp>
#include <relax/core/stream.hpp>
#include <relax/primitives/blas1.cuh>
#include <relax/problem/diffusion.hpp>
#include <relax/domain/device_grid.hpp>

#include <functional>

namespace relax {

//! The device state of a diffusion run: the iterate u (with its boundary ring), the source Δt f
//! and the right-hand side b.
template <class T>
class DiffusionState {
 public:
  DiffusionState(const DiffusionParams& p, cudaStream_t stream)
      : params_((p.validate(), p)),
        u_(to_device(initial_state<T>(p), stream)),
        f_(to_device(source_term<T>(p), stream)),
        b_(u_.layout(), stream) {}

  const DiffusionParams& params() const { return params_; }
  DeviceGrid<T>& u() { return u_; }
  const DeviceGrid<T>& u() const { return u_; }
  const DeviceGrid<T>& b() const { return b_; }

  //! b = u + Δt f, over the whole allocation.
  void form_rhs(cudaStream_t stream) {
    add(u_.layout().size(), u_.data(), f_.data(), b_.data(), stream);
  }

 private:
  DiffusionParams params_;
  DeviceGrid<T> u_;
  DeviceGrid<T> f_;
  DeviceGrid<T> b_;
};

//! Runs `state.params().steps` steps with `solver` on the solver's stream. Stops after a step
//! that does not converge. `on_step(step, report)` is called after each step.
template <class SolverT, class T = typename SolverT::value_type>
RunReport run_diffusion(SolverT& solver, DiffusionState<T>& state,
                        const std::function<void(int, const SolveReport&)>& on_step = {}) {
  const cudaStream_t stream = solver.stream();
  RunReport run;
  detail::require(state.params().dims == SolverT::Stencil::rank, "dims", state.params().dims,
                  "the rank of the solver's stencil");
  run.points = state.u().layout().points();
  EventTimer timer;
  timer.start(stream);
  for (int step = 0; step < state.params().steps; ++step) {
    state.form_rhs(stream);
    run.steps.push_back(solver.solve(state.u(), state.b(), stream));
    if (on_step) on_step(step, run.steps.back());
    if (!run.steps.back().converged()) break;
  }
  timer.stop(stream);
  run.time_ms = timer.milliseconds();
  return run;
}

}  // namespace relax
