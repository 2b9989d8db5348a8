#pragma once
//! \file
//! The reference backend's linear solve: Jacobi sweeps of the reference (reference/jacobi.hpp,
//! reference/tiled.hpp) from an initial guess, with a controller choosing the checks (and D) and
//! the stop criterion of control/stop.hpp deciding, in namespace `relax::reference` like the
//! sweeps it drives. The control loop here is written independently of the GPU solver's on
//! purpose: an oracle that shared the solver's loop would share its bugs.

#include <relax/control/controller.hpp>
#include <relax/control/fixed.hpp>
#include <relax/control/report.hpp>
#include <relax/control/stop.hpp>
#include <relax/reference/jacobi.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <type_traits>

namespace relax::reference {

//! Solves A u = b by Jacobi sweeps from the initial guess in `u`. The controller decides how
//! many sweeps run between two checks of ρ (see `SolveOptions`) and, if it chooses depths, the D
//! of the tiled `schedule`'s launches; `schedule` is how sweeps run (`SyncSchedule`, or a
//! `TiledSchedule` from relax/reference/tiled.hpp). `u` holds the last iterate on return;
//! `scratch` is overwritten.
template <class S, class Controller, class T = typename S::value_type, class Schedule = SyncSchedule,
          class = std::enable_if_t<is_controller_v<Controller>>>
SolveReport solve(const S& s, HostGrid<T>& u, HostGrid<T>& scratch, const HostGrid<T>& b,
                  Controller& controller, const SolveOptions& options, Exec exec = {},
                  const Schedule& schedule = {}) {
  static_assert(!chooses_depth_v<Controller> || !std::is_same_v<Schedule, SyncSchedule>,
                "relax::reference::solve: the controller chooses the depth D, so the schedule must "
                "be a TiledSchedule (synchronous sweeps have no D)");
  options.validate();
  controller.validate();
  relax::detail::require_layout(scratch.layout(), u.layout(), "scratch");
  detail::require_distinct(scratch, u, "scratch", "u");
  detail::require_distinct(scratch, b, "scratch", "b");
  detail::require_distinct(b, u, "b", "u");
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto last_check = start;
  scratch = u;  // the ring of both buffers must hold the boundary values
  relax::detail::begin_solve(controller, {schedule.exact, false, 0.0, 0, options.tol});
  SolveReport report;
  report.rhs_norm = static_cast<double>(rhs_norm(s, u, b, exec));
  const StopCriterion stop = criterion(options);
  for (;;) {
    const std::int64_t batch =
        std::min<std::int64_t>(controller.sweeps_before_check(), options.max_sweeps - report.sweeps);
    int depth = 0;
    if constexpr (chooses_depth_v<Controller>) {
      depth = controller.depth();
      sweeps(s, u, scratch, b, with_depth(schedule, depth), batch, exec);
    } else {
      sweeps(s, u, scratch, b, schedule, batch, exec);
    }
    report.sweeps += batch;
    const double norm = static_cast<double>(residual_norm(s, u, b, exec));
    report.rho = StopCriterion::relative(norm, report.rhs_norm);
    ++report.checks;
    if (options.record_history) report.history.push_back({report.sweeps, report.rho});
    const auto now = clock::now();
    controller.observe({report.sweeps, report.rho,
                        std::chrono::duration<double, std::milli>(now - last_check).count(),
                        schedule.exact, depth});
    last_check = now;
    const StopReason decision = stop.decide(norm, report.rhs_norm, report.sweeps);
    if (decision != StopReason::go_on) {
      report.status = to_solve_status(decision);
      break;
    }
  }
  report.time_ms = std::chrono::duration<double, std::milli>(clock::now() - start).count();
  return report;
}

//! `solve` checking every `check_interval` sweeps (the `Fixed` controller).
template <class S, class T = typename S::value_type, class Schedule = SyncSchedule>
SolveReport solve(const S& s, HostGrid<T>& u, HostGrid<T>& scratch, const HostGrid<T>& b,
                  int check_interval, const SolveOptions& options, Exec exec = {},
                  const Schedule& schedule = {}) {
  Fixed fixed;
  fixed.check_interval = check_interval;
  return solve(s, u, scratch, b, fixed, options, exec, schedule);
}

}  // namespace relax::reference
