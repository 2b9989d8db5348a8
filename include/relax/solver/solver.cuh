#pragma once
//! \file
//! `relax::Solver<Stencil, Strategy, Controller>`: Jacobi for A u = b on one GPU, composed from
//! three independent policies:
//!
//! - `Stencil` — the operator and its arithmetic (`Stencil5<T>` in 2D, `Stencil7<T>` in 3D);
//! - `Strategy` — how sweeps are scheduled (`Sync`, `TemporalBlock<D>`, ...);
//! - `Controller` — when ρ is checked (`Fixed`), and D for strategies whose depth is
//!   `relax::dynamic` (`Ladder`, `Feedback`), and the family for `Adaptive` (`Feedback`).
//!
//! The solver allocates its workspace once, at construction; a solve allocates nothing.

#include <relax/control/fixed.hpp>
#include <relax/control/ladder.hpp>
#include <relax/control/stop.hpp>
#include <relax/core/device.hpp>
#include <relax/control/report.hpp>
#include <relax/core/stream.hpp>
#include <relax/domain/device_grid.hpp>
#include <relax/stencil/traits.hpp>
#include <relax/strategy/sweepers.cuh>
#include <relax/strategy/residual.cuh>
#include <relax/strategy/traits.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

namespace relax {

namespace detail {
// Whether Sweeper<Strategy> can load its kernels ahead of the first launch (`preload<S, T>()`).
template <class Sweeper, class S, class T, class = void>
struct has_preload : std::false_type {};
template <class Sweeper, class S, class T>
struct has_preload<Sweeper, S, T, std::void_t<decltype(Sweeper::template preload<S, T>())>>
    : std::true_type {};
// Whether Sweeper<Strategy> knows its deepest D on the current device (`deepest_depth<S, T>()`).
template <class Sweeper, class S, class T, class = void>
struct has_deepest_depth : std::false_type {};
template <class Sweeper, class S, class T>
struct has_deepest_depth<Sweeper, S, T, std::void_t<decltype(Sweeper::template deepest_depth<S, T>())>>
    : std::true_type {};
// Whether a device-loop sweeper computes ‖b‖ in its kernel (`rhs_norm_on_device`).
template <class Sweeper, class = void>
struct rhs_norm_on_device : std::false_type {};
template <class Sweeper>
struct rhs_norm_on_device<Sweeper, std::void_t<decltype(Sweeper::rhs_norm_on_device)>>
    : std::bool_constant<Sweeper::rhs_norm_on_device> {};
// Whether a device-loop sweeper runs the ladder on the device (`takes_ladder`).
template <class Sweeper, class = void>
struct takes_ladder : std::false_type {};
template <class Sweeper>
struct takes_ladder<Sweeper, std::void_t<decltype(Sweeper::takes_ladder)>> : std::bool_constant<Sweeper::takes_ladder> {};
// Whether a device-loop sweeper runs several implicit steps in one launch (`fuses_steps`).
template <class Sweeper, class = void>
struct fuses_steps : std::false_type {};
template <class Sweeper>
struct fuses_steps<Sweeper, std::void_t<decltype(Sweeper::fuses_steps)>> : std::bool_constant<Sweeper::fuses_steps> {};
}  // namespace detail

template <class Stencil_, class Strategy_, class Controller_ = Fixed>
class Solver {
  static_assert(is_stencil_v<Stencil_>,
                "relax::Solver<Stencil, Strategy, Controller>: the first argument (Stencil) is not "
                "a stencil; see relax/stencil/traits.hpp for what a stencil provides");
  static_assert(is_strategy_v<Strategy_>,
                "relax::Solver<Stencil, Strategy, Controller>: the second argument (Strategy) is "
                "not a strategy such as relax::Sync (is its header included?)");
  static_assert(is_controller_v<Controller_>,
                "relax::Solver<Stencil, Strategy, Controller>: the third argument (Controller) is "
                "not a convergence controller such as relax::Fixed");
  static_assert(!chooses_depth_v<Controller_> || has_dynamic_depth_v<Strategy_> || runs_on_device_v<Strategy_>,
                "relax::Solver<Stencil, Strategy, Controller>: the Controller chooses the depth D, "
                "so the Strategy must take D at run time (BlockAsync<relax::dynamic>, "
                "TemporalBlock<relax::dynamic>); Sync and fixed-depth strategies have no D to set");
  static_assert(chooses_depth_v<Controller_> || !has_dynamic_depth_v<Strategy_>,
                "relax::Solver<Stencil, Strategy, Controller>: the Strategy has D = relax::dynamic, "
                "so the Controller must choose D (relax::Ladder, relax::Feedback), not relax::Fixed");
  static_assert(!runs_on_device_v<Strategy_> || std::is_same_v<Controller_, Fixed> ||
                    (std::is_same_v<Controller_, Ladder> && detail::takes_ladder<Sweeper<Strategy_>>::value),
                "relax::Solver<Stencil, DeviceLoop<Inner>, Controller>: the device loop decides on "
                "the device, with the Controller relax::Fixed (check every M sweeps), or relax::Ladder "
                "where the inner schedule has a depth (TemporalBlock<D, OnChip>, TemporalBlock<D, InRegisters>, "
                "TemporalBlock<D, ColumnStream>)");
  static_assert(!detail::in_registers_v<Strategy_> || Stencil_::rank == 2,
                "relax::Solver<Stencil, DeviceLoop<TemporalBlock<D, InRegisters>>, Controller>: "
                "TemporalBlock<D, InRegisters> runs 2D stencils only; in 3D use TemporalBlock<D, OnChip>");
  static_assert(!runs_chosen_family_v<Strategy_> || chooses_family_v<Controller_>,
                "relax::Solver<Stencil, Adaptive, Controller>: Adaptive runs the family the "
                "Controller chooses, so the Controller must choose it (relax::Feedback); "
                "relax::Ladder chooses only D");

 public:
  using Stencil = Stencil_;
  using Strategy = Strategy_;
  using Controller = Controller_;
  using value_type = typename Stencil::value_type;
  //! Whether `solve_steps` can run several implicit steps in one launch: the on-chip device
  //! loop, and `Auto` (where it runs the on-chip loop: `steps_fused()`).
  static constexpr bool fuses_steps = detail::fuses_steps<Sweeper<Strategy>>::value || picks_device_loop_v<Strategy>;
  //! Whether the solver may offer its controller a device loop for a solve (on chip, or streamed:
  //! `adaptive_device_loop`): `Adaptive` with a controller that can choose it (`Feedback`), for 2D
  //! stencils.
  static constexpr bool offers_device_loop =
      runs_chosen_family_v<Strategy_> && detail::chooses_device_loop<Controller_>::value && Stencil_::rank == 2;

  //! A solver for grids of the box `extents` (of the stencil's rank) on the current device.
  //! Allocates one grid of workspace.
  //! \throws relax::unavailable_error if there is no CUDA device;
  //!         relax::invalid_argument for bad extents, controller or option.
  Solver(const Extents& extents, Stencil stencil, Controller controller = {}, SolveOptions options = {})
      : stencil_(require_device(stencil)), controller_(controller), options_(options) {
    controller_.validate();
    options_.validate();
    extents.validate();
    detail::require(extents.rank == Stencil::rank, "extents", extents.to_text(),
                    Stencil::rank == 3 ? "a 3D box (the stencil is 3D)" : "a 2D box (the stencil is 2D)");
    scratch_ = DeviceGrid<value_type>(extents, stream_);
    stream_.synchronize();  // the zeroing must not land after a solve on another stream
    // u, the workspace and b, as Auto counts them.
    working_set_over_l2_ = 3.0 * static_cast<double>(extents.points()) * sizeof(value_type) /
                           static_cast<double>(current_l2_bytes());
    // A controller that chooses D times the batches at each depth: a kernel's lazy load at its
    // first launch must not count against that depth.
    if constexpr (chooses_depth_v<Controller> &&
                  detail::has_preload<Sweeper<Strategy>, Stencil, value_type>::value)
      Sweeper<Strategy>::template preload<Stencil, value_type>();
    if constexpr (runs_on_device_v<Strategy>) {
      // The norm of every check, when kept: at most one per M sweeps up to the cap (allocated
      // here, device and pinned host memory: ceil(max_sweeps / M) values of T).
      loop_ = std::make_unique<DeviceLoopWorkspace<value_type>>(history_per_solve());
      Sweeper<Strategy>::template preload<Stencil, value_type>();
    }
    if constexpr (picks_device_loop_v<Strategy> || offers_device_loop) {
      // Auto runs every solve as the device loop it picks for this grid (on chip, or streamed
      // where its tree says so: auto_device_loop); Adaptive with a controller that can send a
      // solve to a device loop is offered one (adaptive_device_loop).
      if constexpr (Stencil::rank == 2) {
        if constexpr (picks_device_loop_v<Strategy>)
          device_loop_ = auto_device_loop<Stencil, value_type>(stencil_, extents);
        else if (detail::takes_device_loop(controller_))  // else no workspace and no kernels loaded
          device_loop_ = adaptive_device_loop<Stencil, value_type>(extents);
        if (device_loop_ != AutoLoop::none) {
          loop_ = std::make_unique<DeviceLoopWorkspace<value_type>>(history_per_solve());
          detail::visit_auto_loop(device_loop_, [](auto loop) {
            Sweeper<decltype(loop)>::template preload<Stencil, value_type>();
          });
        }
      }
    }
    if constexpr (detail::has_deepest_depth<Sweeper<Strategy>, Stencil, value_type>::value) {
      const int deepest = Sweeper<Strategy>::template deepest_depth<Stencil, value_type>();
      if (deepest > 0 && (depth_limit_ == 0 || deepest < depth_limit_)) depth_limit_ = deepest;
    }
  }

  //! A solver for the `n × n` square (2D stencils) or the `n × n × n` cube (3D stencils).
  Solver(std::int64_t n, Stencil stencil, Controller controller = {}, SolveOptions options = {})
      : Solver(square_or_cube(n), stencil, controller, options) {}

  const Stencil& stencil() const { return stencil_; }
  const Controller& controller() const { return controller_; }
  const SolveOptions& options() const { return options_; }
  //! The solver's own stream, used when a call names none.
  cudaStream_t stream() const { return stream_.get(); }
  const Extents& extents() const { return scratch_.extents(); }
  //! Whether the solves run as an on-chip device loop: the strategy `DeviceLoop<TemporalBlock<D,
  //! OnChip>>` or `DeviceLoop<TemporalBlock<D, InRegisters>>`, or `Auto` where it chose the
  //! on-chip loop for this grid (`auto_runs_on_chip`).
  bool runs_on_chip() const {
    if constexpr (picks_device_loop_v<Strategy>) return device_loop_ == AutoLoop::on_chip;
    else return detail::fuses_steps<Sweeper<Strategy>>::value;
  }
  //! The device loop `Auto` runs every solve as on this grid (`auto_device_loop`), or the one
  //! offered to `Adaptive`'s controller (`adaptive_device_loop`; none where the controller
  //! declines it: `Feedback::device_loop` false); `AutoLoop::none` for every other strategy.
  AutoLoop device_loop() const { return device_loop_; }
  //! Whether the last solve ran as the on-chip device loop (an on-chip device-loop strategy; `Auto`
  //! where it runs that loop; `Adaptive` where its controller sent the solve there).
  bool last_solve_on_chip() const {
    if constexpr (offers_device_loop) return last_in_loop_ && device_loop_ == AutoLoop::on_chip;
    else return runs_on_chip();
  }
  //! Whether the last solve ran as one cooperative kernel: a device-loop strategy, `Auto` where
  //! it runs a device loop, `Adaptive` where its controller sent the solve to the one offered.
  bool last_solve_in_device_loop() const {
    if constexpr (offers_device_loop) return last_in_loop_;
    else if constexpr (picks_device_loop_v<Strategy>) return device_loop_ != AutoLoop::none;
    else return runs_on_device_v<Strategy>;
  }
  //! Whether the solver offers its controller the on-chip device loop (`Adaptive` with a
  //! controller that can choose it, on a 2D grid that fits on chip here).
  bool offers_on_chip() const { return offers_loop() && device_loop_ == AutoLoop::on_chip; }
  //! Whether `solve_steps` runs its steps in one launch on this grid and device.
  bool steps_fused() const {
    if constexpr (picks_device_loop_v<Strategy>) return device_loop_ == AutoLoop::on_chip;
    else return fuses_steps;
  }

  //! Solves A u = b from the initial guess in `u`, whose ring holds the boundary values. On
  //! return `u` holds the last iterate (its storage may have been exchanged with the solver's
  //! workspace; views taken before the call are stale). Blocks until the solve is done.
  SolveReport solve(DeviceGrid<value_type>& u, const DeviceGrid<value_type>& b) {
    return solve(u, b, stream_.get());
  }

  SolveReport solve(DeviceGrid<value_type>& u, const DeviceGrid<value_type>& b,
                    cudaStream_t stream) {
    detail::require_layout(u.layout(), scratch_.layout(), "u");
    detail::require_layout(b.layout(), scratch_.layout(), "b");
    if constexpr (runs_on_device_v<Strategy>) {
      return device_solve<Strategy>(u, b, stream);
    } else {
      if constexpr (picks_device_loop_v<Strategy>)
        if (device_loop_ != AutoLoop::none) return loop_solve(u, b, stream);
      if constexpr (offers_device_loop)
        if (offers_loop()) return adaptive_solve(u, b, stream);
      return host_solve(u, b, stream);
    }
  }

  //! Runs up to `steps` implicit steps in one launch (solvers with `fuses_steps`): step k solves
  //! A u = uᵏ + source from uᵏ, the iterate that ended the step before (u for the first), with
  //! b = uᵏ + source formed on the device (`arith::add`, so with the bits of
  //! `DiffusionState::form_rhs`); the options apply to each step. Stops after a step that does not
  //! converge. Returns one report per step performed, each with what a `solve` of that step
  //! reports (its time from the GPU's timer, from the step's start to its decision); `u` holds the
  //! last iterate (its storage may have been exchanged with the solver's workspace). With
  //! `record_history`, the first call for more steps than before allocates room for their checks.
  std::vector<SolveReport> solve_steps(DeviceGrid<value_type>& u, const DeviceGrid<value_type>& source, int steps,
                                       cudaStream_t stream) {
    static_assert(fuses_steps,
                  "relax::Solver::solve_steps: the strategy does not run several steps in one launch "
                  "(only the on-chip loops, DeviceLoop<TemporalBlock<D, OnChip>> and DeviceLoop<TemporalBlock<D, "
                  "InRegisters>>, and Auto where it runs them, do); call "
                  "solve once per step");
    if constexpr (fuses_steps) {
      using Loop = std::conditional_t<picks_device_loop_v<Strategy>, AutoOnChip, Strategy>;
      if (!steps_fused())
        throw invalid_argument("strategy", "Auto (on a grid that does not fit on chip here)",
                               "a solver whose steps_fused() is true; call solve once per step");
      detail::require_layout(u.layout(), scratch_.layout(), "u");
      detail::require_layout(source.layout(), scratch_.layout(), "source");
      detail::require(steps >= 1, "steps", steps, "at least 1 step");
      loop_->reserve(steps, steps * history_per_solve());
      (void)begin(u, source, stream, false);
      detail::DeviceLoopPlan plan = device_plan<Loop>(0.0);
      plan.steps = steps;
      plan.history_capacity = loop_->history_capacity();
      Sweeper<Loop>::solve_steps(stencil_, u, scratch_, source, plan, *loop_, options_.record_history, stream);
      timer_.stop(stream);
      std::vector<SolveReport> reports;
      for (int k = 0; k < loop_->steps_done(); ++k) {
        const detail::DeviceLoopResult r = loop_->result(k);
        reports.push_back(device_report<Loop>(r, plan.check_every));
        reports.back().time_ms = r.time_ms;
      }
      return reports;
    }
    return {};
  }

 private:
  // The norms a solve's history keeps: one per M sweeps up to the cap (0 without a history).
  std::int64_t history_per_solve() const {
    return options_.record_history ? detail::tile_count(options_.max_sweeps, controller_.sweeps_before_check()) : 0;
  }

  // Whether a device loop is offered to the controller (Adaptive; see the constructor).
  bool offers_loop() const { return offers_device_loop && device_loop_ != AutoLoop::none; }

  // A solve as the device loop `device_loop_` (Auto's, or the one offered to Adaptive).
  SolveReport loop_solve(DeviceGrid<value_type>& u, const DeviceGrid<value_type>& b, cudaStream_t stream,
                         bool tell_controller = true) {
    if constexpr (Stencil::rank == 2) {
      return detail::visit_auto_loop(device_loop_, [&](auto loop) {
        return device_solve<decltype(loop)>(u, b, stream, tell_controller);
      });
    } else {
      detail::require(false, "the device loop", to_string(device_loop_), "none in 3D (auto_device_loop)");
      return {};
    }
  }

  // Adaptive where a device loop is offered: the controller, told so, sends the solve to the
  // device loop or to the host loop, and hears what a device-loop solve took.
  SolveReport adaptive_solve(DeviceGrid<value_type>& u, const DeviceGrid<value_type>& b, cudaStream_t stream) {
    detail::begin_solve(controller_, context());
    last_in_loop_ = controller_.runs_device_loop();
    if (!last_in_loop_) return host_solve(u, b, stream, false);
    const SolveReport report = loop_solve(u, b, stream, false);
    controller_.observe_device_solve(report.time_ms, report.sweeps, std::isfinite(report.rho));
    return report;
  }

  // What the controller is told at the start of a solve.
  SolveContext context() const {
    return {is_exact_strategy_v<Strategy>, runs_chosen_family_v<Strategy>, working_set_over_l2_, depth_limit_,
            options_.tol, offers_loop()};
  }

  // The host loop: batches of sweeps launched from here, ρ read back at every check (blocking,
  // or overlapped with the next batch). `tell_controller`: begin the controller's solve (false
  // where the caller has).
  SolveReport host_solve(DeviceGrid<value_type>& u, const DeviceGrid<value_type>& b, cudaStream_t stream,
                         bool tell_controller = true) {
    using clock = std::chrono::steady_clock;
    SolveReport report = begin(u, b, stream, true, tell_controller);
    const StopCriterion stop = criterion(options_);
    const bool overlap = options_.checks == CheckMode::overlapped;
    int batch_slot = 0;      // timing of the last batch queued (two alternate: overlap)
    int in_flight_slot = 0;  // timing of the batch behind the check in flight
    // Queues the next batch of sweeps (none at the cap); returns its size.
    auto launch_batch = [&] {
      const Batch next = next_batch(std::min(controller_.sweeps_before_check(), options_.max_sweeps - report.sweeps));
      if (next.sweeps <= 0) return std::int64_t{0};
      if constexpr (chooses_depth_v<Controller>) {
        // A controller that chooses D compares depths: give it the GPU time of the batches it
        // asks to time, and of their steady part after the first launch (CheckSample::steady_ms).
        batch_slot ^= 1;
        BatchTiming& t = batches_[batch_slot];
        t.timed = detail::times_batch(controller_);
        if (t.timed) {
          const std::int64_t first = std::min<std::int64_t>(next.sweeps, std::max(next.depth, 1));
          t.start.record(stream);
          sweep(u, b, {first, next.depth, next.family}, stream);
          t.steady.record(stream);
          if (next.sweeps > first) sweep(u, b, {next.sweeps - first, next.depth, next.family}, stream);
          t.end.record(stream);
          t.steady_sweeps = next.sweeps - first;
        } else {
          sweep(u, b, next, stream);
          t.steady_sweeps = 0;
        }
        t.info = {next.sweeps, next.depth, next.family == Family::temporal};
        detail::notify_launch(controller_, t.info);
      } else {
        sweep(u, b, next, stream);
      }
      report.sweeps += next.sweeps;
      return next.sweeps;
    };
    auto request_check = [&] {
      request_residual_norm(stencil_, u, b, slot_, stream);
      in_flight_slot = batch_slot;
    };
    launch_batch();
    request_check();
    double predicted = std::numeric_limits<double>::infinity();  // ρ expected at the check in flight
    double previous = std::numeric_limits<double>::quiet_NaN();
    auto last_check = clock::now();  // each check waits for the stream, so host time is device time
    while (true) {
      // Overlapped: queue the next batch before reading the check in flight, unless that check
      // is predicted to be (nearly) the last.
      const std::int64_t ahead = overlap && !(predicted < 4.0 * options_.tol) ? launch_batch() : 0;
      const double norm = static_cast<double>(slot_.wait());
      const double rho = StopCriterion::relative(norm, report.rhs_norm);
      const std::int64_t checked = report.sweeps - ahead;  // sweeps behind the ρ just read
      report.rho = rho;
      ++report.checks;
      if (options_.record_history) report.history.push_back({checked, rho});
      const auto now = clock::now();
      CheckSample sample{checked, rho, std::chrono::duration<double, std::milli>(now - last_check).count(),
                         is_exact_strategy_v<Strategy>};
      if constexpr (chooses_depth_v<Controller>) {
        // The check has arrived, so the batch before it is done.
        const BatchTiming& t = batches_[in_flight_slot];
        sample.exact = t.info.exact;
        sample.depth = t.info.depth;
        sample.steady_sweeps = t.steady_sweeps;
        if (t.timed) {
          sample.batch_ms = elapsed_ms(t.start, t.end);
          if (t.steady_sweeps > 0) sample.steady_ms = elapsed_ms(t.steady, t.end);
        }
      }
      controller_.observe(sample);
      last_check = now;
      report.extra_sweeps = ahead;
      const StopReason decision = stop.decide(norm, report.rhs_norm, checked);
      if (decision != StopReason::go_on) {
        report.status = to_solve_status(decision);
        break;
      }
      predicted = previous > 0.0 ? rho * (rho / previous) : std::numeric_limits<double>::infinity();
      previous = rho;
      if (ahead == 0) launch_batch();
      request_check();
    }
    timer_.stop(stream);
    report.time_ms = timer_.milliseconds();
    detail::notify_solve_time(controller_, report.time_ms);  // what a device-loop solve is compared with
    return report;
  }

  // What every solve does first: start the timer, give the workspace u's boundary ring, tell the
  // controller, and compute ‖b‖ (the report it returns holds it).
  // (A device loop that computes ‖b‖ in its kernel skips it here: one round trip less.)
  SolveReport begin(DeviceGrid<value_type>& u, const DeviceGrid<value_type>& b, cudaStream_t stream,
                    bool with_rhs_norm = true, bool tell_controller = true) {
    timer_.start(stream);
    copy(u, scratch_, stream);
    if (tell_controller) detail::begin_solve(controller_, context());
    SolveReport report;
    if (with_rhs_norm) report.rhs_norm = static_cast<double>(rhs_norm(stencil_, u, b, slot_, stream));
    else detail::require_system<Stencil>(u, b, "u");
    return report;
  }

  // The device loop: one launch runs the solve; the report is read back once. Sweeps, checks, ρ
  // and the iterate are those of the host loop with blocking checks.
  template <class Loop>
  SolveReport device_solve(DeviceGrid<value_type>& u, const DeviceGrid<value_type>& b, cudaStream_t stream,
                           bool tell_controller = true) {
    constexpr bool rhs_on_device = detail::rhs_norm_on_device<Sweeper<Loop>>::value;
    const SolveReport start = begin(u, b, stream, !rhs_on_device, tell_controller);
    const detail::DeviceLoopPlan plan = device_plan<Loop>(start.rhs_norm);
    const detail::DeviceLoopResult r =
        Sweeper<Loop>::solve(stencil_, u, scratch_, b, plan, *loop_, options_.record_history, stream);
    timer_.stop(stream);
    SolveReport report = device_report<Loop>(r, plan.check_every, start.rhs_norm);
    report.time_ms = timer_.milliseconds();
    return report;
  }

  // The plan of a device-loop solve from the options and the controller (‖b‖ from the host, or
  // computed by the kernel where the sweeper does).
  template <class Loop>
  detail::DeviceLoopPlan device_plan(double rhs_norm) const {
    detail::DeviceLoopPlan plan;
    plan.stop = criterion(options_);
    plan.rhs_norm = rhs_norm;
    plan.rhs_on_device = detail::rhs_norm_on_device<Sweeper<Loop>>::value;
    plan.check_every = controller_.sweeps_before_check();
    plan.history_capacity = loop_->history_capacity();
    if constexpr (std::is_same_v<Controller, Ladder>) {
      plan.laddered = true;  // the ladder's levels are taken on the device
      plan.ladder = controller_.rule();
    }
    return plan;
  }

  // A device loop's report of one step as the host loop's (its history from the workspace).
  template <class Loop>
  SolveReport device_report(const detail::DeviceLoopResult& r, std::int64_t check_every, double host_rhs_norm = 0.0) const {
    return detail::device_loop_report(r, detail::rhs_norm_on_device<Sweeper<Loop>>::value ? r.rhs_norm : host_rhs_norm,
                                      check_every, options_.max_sweeps, options_.record_history, *loop_);
  }


  // The batch of `sweeps` sweeps at the depth and in the family the controller chose, or the
  // strategy's own.
  Batch next_batch(std::int64_t sweeps) const {
    Batch batch{sweeps, fixed_depth_v<Strategy>, family_v<Strategy>};
    if constexpr (chooses_depth_v<Controller>) batch.depth = controller_.depth();
    if constexpr (runs_chosen_family_v<Strategy>) {
      const FamilyChoice c = controller_.choice();
      batch.family = c.family;
      batch.depth = c.depth;
    }
    return batch;
  }

  void sweep(DeviceGrid<value_type>& u, const DeviceGrid<value_type>& b, const Batch& batch,
             cudaStream_t stream) {
    Sweeper<Strategy>::run(stencil_, u, scratch_, b, batch, stream);
  }

  static Extents square_or_cube(std::int64_t n) {
    detail::require(n >= 1, "n", n, "at least 1 interior point per side");
    return Extents::cube(n, Stencil::rank);
  }

  // Runs before any member touches the device, so "no GPU" is reported as such.
  static const Stencil& require_device(const Stencil& s) {
    if (device_count() == 0)
      throw unavailable_error("relax::Solver needs a CUDA device and none is present; use the "
                              "reference backend (relax/reference) instead");
    return s;
  }

  Stencil stencil_;
  Controller controller_;
  SolveOptions options_;
  Stream stream_;
  DeviceGrid<value_type> scratch_;
  MaxNormSlot<value_type> slot_;
  EventTimer timer_;
  double working_set_over_l2_ = 0.0;
  // The deepest D the strategy runs here (the tag's limit, or less where shared memory ends).
  int depth_limit_ = max_depth_v<Strategy>;
  // GPU time of a batch and of its steady part, for controllers that choose D.
  struct BatchTiming {
    Event start, steady, end;  // steady: after the first launch
    BatchInfo info;
    bool timed = false;  // the controller asked for the events (detail::times_batch)
    std::int64_t steady_sweeps = 0;
  };
  BatchTiming batches_[2];
  // The device loop's barrier, report and history (strategies that run on the device, and Auto
  // and Adaptive where they run one).
  std::unique_ptr<DeviceLoopWorkspace<value_type>> loop_;
  AutoLoop device_loop_ = AutoLoop::none;  // Auto: the loop every solve runs as; Adaptive: the one offered
  bool last_in_loop_ = false;              // Adaptive: the last solve ran in the loop offered
};

}  // namespace relax
