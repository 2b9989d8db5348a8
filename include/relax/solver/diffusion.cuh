#pragma once
//! \file
//! Runs the implicit diffusion problem (`relax/problem/diffusion.hpp`) on the GPU with any
//! `relax::Solver`: per step, the fused right-hand side b = uⁿ + Δt f, then one linear solve that
//! starts from uⁿ. Where `Solver::steps_fused()` holds, all steps run in one launch by default
//! (`StepLaunch::fused`), each step's b formed on the device.

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
  //! Δt f (zero on the ring and the padding).
  const DeviceGrid<T>& source() const { return f_; }

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

//! How `run_diffusion` launches the steps.
enum class StepLaunch {
  //! One launch for every step where the solver can (`Solver::steps_fused()`: the on-chip device
  //! loop, and `Auto` where it runs that loop; each b is formed on the device and `state.b()` is
  //! left as it was), else as `per_step`. The reports and the final state are those of `per_step`, bit for bit.
  fused,
  per_step,  //!< per step: b formed (`form_rhs`), then one solve
};

//! Runs `state.params().steps` steps with `solver` on the solver's stream. Stops after a step
//! that does not converge. `on_step(step, report)` is called after each step (after the launch,
//! for each step, when the steps are fused).
template <class SolverT, class T = typename SolverT::value_type>
RunReport run_diffusion(SolverT& solver, DiffusionState<T>& state,
                        const std::function<void(int, const SolveReport&)>& on_step = {},
                        StepLaunch launch = StepLaunch::fused) {
  const cudaStream_t stream = solver.stream();
  RunReport run;
  detail::require(state.params().dims == SolverT::Stencil::rank, "dims", state.params().dims,
                  "the rank of the solver's stencil");
  run.points = state.u().layout().points();
  EventTimer timer;
  timer.start(stream);
  bool fused = false;
  if constexpr (SolverT::fuses_steps) {
    if (launch == StepLaunch::fused && solver.steps_fused()) {
      run.steps = solver.solve_steps(state.u(), state.source(), state.params().steps, stream);
      fused = true;
    }
  }
  for (int step = 0; !fused && step < state.params().steps; ++step) {
    state.form_rhs(stream);
    run.steps.push_back(solver.solve(state.u(), state.b(), stream));
    if (on_step) on_step(step, run.steps.back());
    if (!run.steps.back().converged()) break;
  }
  timer.stop(stream);
  run.time_ms = timer.milliseconds();
  if (fused && on_step)
    for (std::size_t k = 0; k < run.steps.size(); ++k) on_step(static_cast<int>(k), run.steps[k]);
  return run;
}

}  // namespace relax
