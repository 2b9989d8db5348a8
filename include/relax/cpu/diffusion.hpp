#pragma once
//! \file
//! The reference backend's run of implicit diffusion steps (see `relax/problem/diffusion.hpp`):
//! the oracle for the GPU run and the CPU baseline of the benchmarks.

#include <relax/cpu/jacobi.hpp>
#include <relax/problem/diffusion.hpp>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>

#include <chrono>
#include <type_traits>
#include <functional>
#include <utility>

namespace relax::reference {

//! `run_diffusion` with the stencil `stencil` (of the problem's rank).
template <class S, class Controller, class Schedule, class T = typename S::value_type>
RunReport run_diffusion_with(const S& stencil, const DiffusionParams& p, Controller controller,
                             const SolveOptions& options, Exec exec, HostGrid<T>* solution,
                             const std::function<void(int, const SolveReport&)>& on_step,
                             const Schedule& schedule) {
  HostGrid<T> u = initial_state<T>(p);
  const HostGrid<T> f = source_term<T>(p);
  HostGrid<T> b(u.layout()), scratch(u.layout());
  RunReport run;
  run.points = u.layout().points();
  const auto start = std::chrono::steady_clock::now();
  for (int step = 0; step < p.steps; ++step) {
    add(u, f, b);
    run.steps.push_back(solve(stencil, u, scratch, b, controller, options, exec, schedule));
    if (on_step) on_step(step, run.steps.back());
    if (!run.steps.back().converged()) break;
  }
  run.time_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (solution) *solution = std::move(u);
  return run;
}

//! Runs `p.steps` implicit diffusion steps on the host. Stops after a step that does not
//! converge. `controller` decides the checks (and D, with a tiled `schedule`); `on_step(step,
//! report)` is called after each step; `solution`, if given, receives the final state.
template <class T, class Controller, class Schedule = SyncSchedule,
          class = std::enable_if_t<is_controller_v<Controller>>>
RunReport run_diffusion(const DiffusionParams& p, Controller controller, const SolveOptions& options,
                        Exec exec = {}, HostGrid<T>* solution = nullptr,
                        const std::function<void(int, const SolveReport&)>& on_step = {},
                        const Schedule& schedule = {}) {
  p.validate();
  if (p.dims == 3)
    return run_diffusion_with(Stencil7<T>(p.r), p, controller, options, exec, solution, on_step, schedule);
  return run_diffusion_with(Stencil5<T>(p.r), p, controller, options, exec, solution, on_step, schedule);
}

//! `run_diffusion` checking every `check_interval` sweeps (the `Fixed` controller).
template <class T, class Schedule = SyncSchedule>
RunReport run_diffusion(const DiffusionParams& p, int check_interval, const SolveOptions& options,
                        Exec exec = {}, HostGrid<T>* solution = nullptr,
                        const std::function<void(int, const SolveReport&)>& on_step = {},
                        const Schedule& schedule = {}) {
  Fixed fixed;
  fixed.check_interval = check_interval;
  return run_diffusion<T>(p, fixed, options, exec, solution, on_step, schedule);
}

}  // namespace relax::reference
