#pragma once
//! \file
//! `Feedback`: the source study's G-fb hill-climbing controller, with a fallback to synchronous
//! sweeps, and, on `relax::Adaptive`, the choice between the exact and the asynchronous family.
//!
//! The score of a depth D is the convergence rate per millisecond measured while running at D,
//!
//!     rate = −ln(ρ_end / ρ_start) / (t_end − t_start)
//!
//! over a window of `window` checks, where t counts the GPU time of the sweeps
//! (`CheckSample::batch_ms`, CUDA events) when the solver measures it, and the time between
//! checks otherwise (one check is too noisy: the max-norm residual does not fall
//! evenly). For an exact strategy (`CheckSample::exact`, e.g. TemporalBlock) the convergence per
//! sweep does not depend on D, so the rate per millisecond is the convergence per sweep times the
//! sweeps per millisecond, and only the second factor can differ between depths: the controller
//! compares sweeps per millisecond, which, unlike the residual, does not also fall as a solve
//! goes on (the high-frequency error dies in the first sweeps, so a later window would look slower
//! whatever its D).
//!
//! A solve climbs: after each window it doubles D, as long as the score at the new depth holds
//! (is no more than `climb_slack`, 2%, below the score at the previous depth: timing noise, not a
//! loss). When a doubling makes the score fall, D goes back down and holds there; while holding,
//! a later window more than `drop` (10%) below the first one at that depth halves D again. If
//! already the first doubling (1 → 2) does not pay, the controller falls back to D = 1 for the
//! rest of the solve: synchronous sweeps, which the source study's version could not do (it lost
//! 0.69–0.84× in L2 for it). After every change of D, `settle_checks` checks are not used: the
//! residual jumps when the staleness pattern changes, and that jump is not the new rate. Checks
//! of sweeps that ran at an older depth (`CheckSample::depth`; with overlapped checks, the batch
//! in flight when D changed) are skipped.
//!
//! **Exact strategies.** An exact strategy's sweeps per millisecond at a depth are a property of
//! the grid and the GPU, not of the solve, so for those the controller keeps what it measured at
//! each depth (`speed(D)`, summed over every batch that ran at D, whenever it ran) and decides on
//! that record instead of on windows: there is no residual jump to settle, so it climbs after one
//! batch per depth, to a doubling it has not measured while the last doubling held, and otherwise
//! runs at the fastest depth it knows (the fallback to D = 1 included), moving only when another
//! depth is more than `climb_slack` faster; `drop` and `window` do not apply. A depth not yet
//! measured is probed with a batch of two launches (2·D sweeps instead of M: shorter below
//! D = M/2), timed from the end of the first launch (`CheckSample::steady_ms`): after a blocking check the GPU waits for the
//! host to queue the first launch, which would count against a short batch. A probe at D = 1 out
//! of L2 costs 2.4–3.2× what a sweep at the best depth costs, so short probes are what keeps the
//! first step of a run cheap. Where the solver reports each batch it queues (`launched`), the
//! climb runs one probe ahead of the evidence: with overlapped checks the next batch is queued
//! before the probe's result arrives, and it probes the next doubling instead of repeating the
//! depth under test; if the result says the doubling did not hold, the controller goes back.
//! Only the first `timed_batches` batches at a depth (the probe included) are timed
//! (`times_batch`): the events cost host work between a check and the next launch, and in L2 with
//! blocking checks timing every batch left Feedback 10.6-13.9% behind `Fixed` running the same
//! sweeps at N = 1024 on the H200; timing only the first ones, 4.8-7.5%
//! (docs/performance-notes.md).
//!
//! **Families (`relax::Adaptive`).** In L2 the best static strategy can be asynchronous (on the
//! H200, BlockAsync<4> beats every exact depth by 5–12% at N = 512, r ≥ 10), and no choice of D
//! within the exact family reaches it. On `Adaptive` the controller also chooses the family. An
//! asynchronous sweep converges less per sweep than an exact one, so the two compare only by the
//! time a whole solve takes, checks included (in L2 the round trip of a check is a large part of
//! it, and an asynchronous depth that needs 1.8× the sweeps also needs 1.8× the checks). The time
//! steps of a run need nearly the same number of sweeps (280–288 a step at N = 4096, r = 10), so
//! whole solves of one run compare, by their host time up to the moment ρ crossed tol
//! (`SolveContext::tol`, with ln ρ taken as linear over the last interval: a solve ends at a check,
//! so its own end is known only to within a batch, 3% of a solve of 30 checks). The first solve
//! climbs the exact family; the second runs at its fastest depth and is the reference; then, one
//! solve each, trials of BlockAsync at D = 2, 4, ... while the last trial held (finished within
//! `climb_slack` of the best time so far), and every later solve runs the fastest of what was
//! measured. A trial opens with a probe of two launches; until its speed is known the batches run
//! at the fastest exact depth (with overlapped checks one batch is queued before the probe
//! reports). A trial is cut short, the rest of its solve run at the fastest exact depth, as soon as
//! it cannot win: when its sweeps per millisecond on the GPU are not more than `climb_slack` above
//! the fastest exact depth's (asynchronous sweeps converge no faster than exact ones), or when its
//! time passes the best solve time so far by more than `climb_slack`. An asynchronous depth whose
//! solve breaks down (a NaN or Inf residual) is never chosen again. Trials run only where the
//! reference solve took at least `trial_checks` (16) checks: a solve of a few checks is mostly its
//! first checks and round trips, which no family shortens, and at N = 512, r = 1 (5 checks a solve)
//! the best asynchronous strategy is no more than 0.4% faster than the best exact one. Out of L2
//! (`SolveContext::working_set_over_l2` > 1) an asynchronous sweep moves the bytes of a synchronous
//! one, 2.4–3.2× what exact temporal blocking moves per sweep there (measured at 0.35–0.72× Sync on
//! the H200), so no trial runs: even its probe would cost 3% of a run at r = 1.
//!
//! **The device loop (`relax::Adaptive`).** Where the solver can run a whole solve as a device
//! loop (`SolveContext::device_loop`, `relax::adaptive_device_loop`: on chip where the 2D grid
//! fits, else the streamed loop at the depth Auto's tree gives it), that is a third candidate,
//! chosen by what one solve of it takes. Once the exact climb is over, the next solve
//! runs there (`runs_device_loop`) and the solver reports its time and sweeps
//! (`observe_device_solve`). Its iterates are the exact family's, so the two compare per sweep:
//! the device loop is chosen for every later solve at once when its time a sweep is more than
//! `climb_slack` below what the fastest exact depth's sweeps alone take (no launch-based solve is
//! faster than its sweeps; it also pays its checks' round trips); otherwise the next solve is the
//! reference, and the device loop is chosen when it beat that solve's time a sweep by more than
//! `climb_slack` (the whole solve's: both end at a check, so neither is cut back to where ρ
//! crossed the tolerance; and both from the solve's start, u's copy and ‖b‖ included, on the
//! GPU's timer, where the solver tells it: `observe_solve_time`). Chosen, it runs every later
//! solve and no asynchronous trial runs (measured on the H200 the on-chip loop is 2.3–7.6× faster
//! than every launch-based strategy where it fits; the streamed loop 1.3–1.6× up to 8 L2s of
//! working set and 1.01–1.07× beyond at r = 10 and 100, and 0.89–0.92× beyond at r = 1, where
//! Feedback measured it slower); not chosen, the run goes on as without it. A trial whose last ρ is not finite is never chosen.
//!
//! The time steps of a run solve nearly the same system, so by default (`carry_over`) a solve
//! starts at the depth the previous one ended at (and, for an exact strategy, with the speeds
//! measured so far). For a residual-scored strategy it climbs on from there, instead of from
//! D = 1 again. Without `carry_over` every solve starts over at D = 1 with nothing
//! known (and on `Adaptive` runs no trials). A controller object belongs to one grid size: its
//! record says nothing about another. D never exceeds `max_depth`, nor the deepest D the strategy
//! runs (`SolveContext::max_depth`: 8 for the ColumnStream kernels). `changes()` counts the
//! decisions, including a move to the next doubling taken ahead of a probe's result.

#include <relax/control/fixed.hpp>
#include <relax/core/error.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

namespace relax {

struct Feedback {
  int check_interval = 8;  //!< M
  int max_depth = 8;       //!< a power of two (the strategy's own limit also applies)
  double drop = 0.10;      //!< relative fall of the score that counts as a drop while holding
  double climb_slack = 0.02;  //!< a doubling holds if its score is at most this far below
  int settle_checks = 1;   //!< checks ignored after each change of D
  int window = 2;          //!< checks measured per decision
  bool carry_over = true;  //!< start a solve at the depth the last one ended at
  //! Batches timed at each depth of an exact strategy or `Adaptive`, the probe included; later
  //! batches there run untimed (`times_batch`).
  int timed_batches = 4;
  //! `Adaptive`: asynchronous trials run only where the reference solve took at least this many
  //! checks.
  int trial_checks = 16;
  //! Depths measured within this fraction of the fastest are timed as often as it before the
  //! choice is final (exact strategies, `Adaptive`).
  double recheck = 0.10;
  //! `Adaptive`: try the device loop where the solver offers it (`SolveContext::device_loop`).
  bool device_loop = true;

  void validate() const {
    Fixed(check_interval).validate();
    detail::require(max_depth >= 1 && max_depth <= 1024 && (max_depth & (max_depth - 1)) == 0,
                    "max_depth", max_depth, "a power of two from 1 to 1024");
    detail::require(std::isfinite(drop) && drop > 0 && drop < 1, "drop", drop, "a fraction in (0, 1)");
    detail::require(std::isfinite(climb_slack) && climb_slack >= 0 && climb_slack < 1, "climb_slack",
                    climb_slack, "a fraction in [0, 1)");
    detail::require(settle_checks >= 0, "settle_checks", settle_checks, "0 or more");
    detail::require(window >= 1, "window", window, "at least 1 check per decision");
    detail::require(timed_batches >= 1, "timed_batches", timed_batches, "at least 1 (the probe)");
    detail::require(trial_checks >= 0, "trial_checks", trial_checks, "0 or more");
    detail::require(std::isfinite(recheck) && recheck >= 0 && recheck < 1, "recheck", recheck,
                    "a fraction in [0, 1)");
  }

  //! Starts a solve where the solver says what it runs (see the file comment).
  void begin_solve(const SolveContext& context) {
    if (context.chooses_family && carry_over && have_prev_) conclude_solve();
    exact_known_ = true;
    exact_strategy_ = context.exact;
    family_ = context.chooses_family;
    async_may_pay_ = !(context.working_set_over_l2 > 1.0);
    depth_limit_ = context.max_depth;
    tol_ = context.tol;
    device_available_ = device_loop && context.device_loop && context.chooses_family && carry_over;
    if (depth_ > top()) depth_ = top();
    begin_solve();
    if (family_) plan_solve();
  }

  //! Starts a solve; whether the strategy is exact is learnt from the first check.
  void begin_solve() {
    if (!carry_over) {
      depth_ = 1;
      speed_ = {};
      async_ = {};
      async_now_ = false;
      exact_sweeps_ = 0;
      exact_ms_ = 0.0;
      reference_whole_ms_ = 0.0;
      reference_checks_ = 0;
      next_trial_ = 2;
    }
    climbing_ = depth_ < top();
    synchronous_ = false;
    settle_ = 0;
    changes_ = 0;
    prev_ = {};
    have_prev_ = false;
    below_ = nan();
    hold_ = nan();
    window_ = {};
    trial_ = 0;
    hedging_ = false;
    reference_ = false;
    only_exact_ = true;
    solve_ms_ = 0.0;
    whole_ms_ = 0.0;
    last_ms_ = 0.0;
    before_last_rho_ = 0.0;
    checks_ = 0;
    in_flight_ = {};  // a batch queued ahead of a solve's last check is never observed
  }

  //! M, or a probe of two launches (2·D sweeps) at a depth whose speed is not yet measured.
  std::int64_t sweeps_before_check() const {
    if (device_now_) return check_interval;  // the device loop checks every M sweeps
    const bool probe = scores_speed() && !current().known();
    return probe ? 2 * static_cast<std::int64_t>(depth_) : check_interval;
  }
  //! Whether the solver should time the next batch with CUDA events: always for a
  //! residual-scored strategy (its windows need the GPU time), and otherwise only until the depth
  //! has `timed_batches` timed batches, and only where the batch has a steady part to time
  //! (it is longer than one launch of D sweeps).
  bool times_batch() const {
    if (!scores_speed()) return true;
    return current().batches < timed_batches && sweeps_before_check() > depth_;
  }
  int depth() const { return depth_; }
  //! The family and D of the next batch (`relax::Adaptive`).
  FamilyChoice choice() const { return {async_now_ ? Family::blockasync : Family::temporal, depth_}; }

  void observe(const CheckSample& s) {
    const CheckSample prev = prev_;
    const bool first = !have_prev_;
    prev_ = s;
    have_prev_ = true;
    if (!exact_known_) {
      exact_known_ = true;
      exact_strategy_ = s.exact;
    }
    if (family_) {
      observe_family(prev, s);
      return;
    }
    if (s.exact) {
      record(prev, s);
      decide_exact();
      return;
    }
    // Where the interval before a solve's first check is host time it includes the solve's setup
    // (‖b‖∞, the workspace copy; the reference backend), and on the GPU the residual before it is
    // not known: no rate.
    if (first) return;
    if (s.depth != 0 && s.depth != depth_) return;  // sweeps queued before the last change of D
    if (settle_ > 0) {
      --settle_;
      return;
    }
    if (synchronous_) return;
    if (!window_.add(prev, s)) {
      window_ = {};  // a check without a usable rate (ρ = 0, NaN, no time) restarts the window
      return;
    }
    if (window_.checks < window) return;
    const double score = window_.score();
    window_ = {};
    if (climbing_) climb(score);
    else if (!std::isfinite(hold_)) hold_ = score;  // the first window at the depth we came back to
    else if (score < lowest_kept(hold_, drop) && depth_ > 1) change(depth_ / 2);
  }

  //! The solver queued a batch: while climbing an exact family, the next batch probes the next
  //! doubling rather than repeat a depth whose probe has not reported yet.
  void launched(const BatchInfo& b) {
    if (family_ && !b.exact && b.depth == trial_ && !async_[index(trial_)].speed.known() && !hedging_) {
      // A trial's probe is under way: the exact family runs until it reports.
      hedging_ = true;
      async_now_ = false;
      depth_ = fastest_exact();
      return;
    }
    if (!b.exact || async_now_ || !in_range(b.depth)) return;
    ++in_flight_[static_cast<std::size_t>(index(b.depth))];
    decide_exact();
  }

  //! Changes of D (or of the family) in this solve.
  int changes() const { return changes_; }
  //! True once the controller has fallen back to synchronous sweeps for this solve (for an exact
  //! strategy: it runs at D = 1 because D = 2 was measured slower).
  bool synchronous() const {
    return synchronous_ || (!async_now_ && depth_ == 1 && known(2) && speed(2) < speed(1));
  }
  //! The mean sweeps per millisecond measured at depth `d` so far (exact batches; 0 if not
  //! measured).
  double speed(int d) const { return known(d) ? slot(d).rate() : 0.0; }
  //! The mean sweeps per millisecond of asynchronous batches at depth `d` (`Adaptive`; 0 if not
  //! measured).
  double async_speed(int d) const {
    return in_range(d) ? async_[index(d)].speed.rate() : 0.0;
  }
  //! The sweep factor s measured for asynchronous depth `d` by a whole trial solve: its sweeps
  //! over the exact family's (`Adaptive`; 0 if no trial finished).
  double async_sweep_factor(int d) const { return in_range(d) ? async_[index(d)].factor : 0.0; }
  //! The reference solve's time over the trial's at asynchronous depth `d`: above 1 where the
  //! trial was faster (`Adaptive`; 0 if no trial finished).
  double async_gain(int d) const { return in_range(d) ? async_[index(d)].gain : 0.0; }
  //! True when the next batch is asynchronous (`Adaptive`).
  bool asynchronous() const { return async_now_; }

  //! The whole time of the host-loop solve that just ended, on the GPU's timer from its start
  //! (u's copy and ‖b‖ included) to its last check: the reference solve's time that a device-loop
  //! solve's, measured the same way, is compared with. Without it, the host time between its
  //! checks (which leaves the start out).
  void observe_solve_time(double ms) { whole_ms_ = ms; }
  //! Whether it takes a device loop the solver can offer (`device_loop`, and `carry_over`: what
  //! a trial learns must outlive the solve); without, the solver prepares none.
  bool takes_device_loop() const { return device_loop && carry_over; }
  //! True when this solve runs as the device loop (`Adaptive` where the solver offers it:
  //! `SolveContext::device_loop`; see the file comment).
  bool runs_device_loop() const { return device_now_; }
  //! What a solve run as the device loop took (`ms`, from its launch to its report) over
  //! `sweeps` sweeps, and whether its last ρ was finite.
  void observe_device_solve(double ms, std::int64_t sweeps, bool finite) {
    if (!device_now_ || device_ != Device::untried) return;  // chosen: nothing more to learn
    if (!finite || !(ms > 0) || sweeps <= 0) {
      device_ = Device::lost;
      return;
    }
    device_ms_per_sweep_ = ms / static_cast<double>(sweeps);
    const double fastest = speed(fastest_exact());  // the fastest exact depth's sweeps alone
    device_ = fastest > 0 && device_ms_per_sweep_ < (1 - climb_slack) / fastest ? Device::chosen : Device::pending;
  }
  //! Whether the device loop runs every later solve (`Adaptive`).
  bool device_loop_chosen() const { return device_ == Device::chosen; }
  //! The device loop's trial time a sweep in ms (`Adaptive`; 0 before its trial).
  double device_ms_per_sweep() const { return device_ms_per_sweep_; }

 private:
  static double nan() { return std::numeric_limits<double>::quiet_NaN(); }

  // GPU time of the batch where measured: one host-timed check in L2 is mostly round trip and
  // jitter, which hid 10-25% differences between depths (docs/performance-notes.md).
  static double interval_ms(const CheckSample& s) { return s.batch_ms > 0 ? s.batch_ms : s.elapsed_ms; }

  // What a window of checks at one depth measured (residual-scored strategies).
  struct Window {
    int checks = 0;
    double log_drop = 0.0;  // Σ −ln(ρ_k / ρ_(k−1))
    double ms = 0.0;

    bool add(const CheckSample& prev, const CheckSample& s) {
      const double interval = interval_ms(s);
      if (!(interval > 0) || !(prev.rho > 0) || !(s.rho > 0)) return false;
      log_drop += -std::log(s.rho / prev.rho);
      ms += interval;
      ++checks;
      return true;
    }
    double score() const { return log_drop / ms; }
  };

  // Sweeps and milliseconds measured at one depth, over the run, in `batches` timed batches.
  struct Speed {
    double sweeps = 0.0;
    double ms = 0.0;
    int batches = 0;
    bool known() const { return ms > 0; }
    double rate() const { return known() ? sweeps / ms : 0.0; }
  };
  // What the trials measured of one asynchronous depth (Adaptive).
  struct Async {
    Speed speed;
    double factor = 0.0;  // s; 0 until a trial finished
    double gain = 0.0;    // the reference solve's time over the trial's; 0 until a trial finished
    bool lost = false;    // a trial was cut short: it cannot win
  };

  static int index(int d) {
    int k = 0;
    while ((1 << k) < d) ++k;
    return k;
  }
  bool in_range(int d) const { return d >= 1 && d <= top(); }
  // The deepest D: max_depth, or less where the strategy runs no deeper (SolveContext::max_depth).
  int top() const {
    int limit = max_depth;
    while (depth_limit_ > 0 && limit > depth_limit_) limit /= 2;
    return limit;
  }
  const Speed& slot(int d) const { return speed_[static_cast<std::size_t>(index(d))]; }
  bool known(int d) const { return in_range(d) && slot(d).known(); }
  // Depths are scored by sweeps per millisecond (exact batches, Adaptive), not by the residual.
  bool scores_speed() const { return family_ || (exact_known_ && exact_strategy_); }
  // The record of the family and depth the next batch runs at.
  const Speed& current() const { return async_now_ ? async_[index(depth_)].speed : slot(depth_); }

  // Adds a batch to the record of the depth (and family) it ran at. The steady part where the
  // solver measured it; a batch of one launch has none and says nothing about speed.
  // Host time only (the reference backend): the first interval of a solve includes its setup, a
  // slight underestimate of the speed at that depth.
  void record(const CheckSample& prev, const CheckSample& s) {
    double sweeps = 0.0, ms = 0.0;
    if (s.steady_sweeps > 0) {
      sweeps = static_cast<double>(s.steady_sweeps);
      ms = s.steady_ms;
    } else if (s.steady_sweeps < 0) {
      sweeps = static_cast<double>(s.sweeps - prev.sweeps);
      ms = interval_ms(s);
    }
    const int d = s.depth != 0 ? s.depth : depth_;
    if (!in_range(d)) return;
    int& queued = in_flight_[static_cast<std::size_t>(index(d))];
    if (s.exact && queued > 0) --queued;
    if (!(ms > 0) || !(sweeps > 0)) return;
    Speed& into = s.exact ? speed_[static_cast<std::size_t>(index(d))] : async_[index(d)].speed;
    into.sweeps += sweeps;
    into.ms += ms;
    ++into.batches;
  }

  // The exact depth to probe next: the first depth of the chain 1, 2, 4, ... not measured and
  // not in flight, provided every measured depth below it held (was no more than climb_slack
  // slower than the one below it; a depth in flight is taken to hold). 0 when the climb is over
  // (a doubling did not hold, or every depth is measured); -1 while it waits for probes in flight.
  int exact_target() const {
    bool waiting = false;
    for (int d = 1; d <= top(); d *= 2) {
      if (known(d)) {
        if (d > 1 && known(d / 2) && speed(d) < (1 - climb_slack) * speed(d / 2)) break;
      } else if (in_flight_[static_cast<std::size_t>(index(d))] > 0) {
        waiting = true;
      } else {
        return d;
      }
    }
    return waiting ? -1 : 0;
  }
  int fastest_exact() const {
    int fastest = 1;
    for (int d = 1; d <= top(); d *= 2)
      if (known(d) && speed(d) > speed(fastest)) fastest = d;
    return fastest;
  }

  void decide_exact() {
    const int target = exact_target();
    if (target < 0) return;  // wait for the probes in flight
    if (target > 0) {
      if (target != depth_) change(target);
      return;
    }
    const int fastest = fastest_exact();
    if (const int d = unsettled(fastest); d != 0) {
      if (d != depth_) change(d);
      return;
    }
    if (fastest != depth_ && (!known(depth_) || speed(fastest) > (1 + climb_slack) * speed(depth_)))
      change(fastest);
  }

  // A depth measured within `recheck` of the fastest, but timed fewer times than it; 0 if none.
  // A probe times one short launch, and a short launch can read slow: on the H200 at N = 512 the
  // probe of exact D = 2 read about 200 sweeps/ms where its batches of M read 240, and the climb
  // settled on D = 4 (207), 10% slower in a solve. So a depth that close runs, timed, until it
  // has been measured as often.
  int unsettled(int fastest) const {
    const int enough = std::min(timed_batches, slot(fastest).batches);
    for (int d = 1; d <= top(); d *= 2)
      if (d != fastest && known(d) && slot(d).batches < enough && speed(d) >= (1 - recheck) * speed(fastest))
        return d;
    return 0;
  }

  // --- Families (Adaptive) ---

  // The best gain measured: 1 for the exact family (the reference), or a finished trial's.
  double best_gain() const {
    double best = 1.0;
    for (int d = 2; d <= top(); d *= 2) best = std::max(best, async_[index(d)].gain);
    return best;
  }

  void observe_family(const CheckSample& prev, const CheckSample& s) {
    record(prev, s);
    solve_ms_ += s.elapsed_ms;
    last_ms_ = s.elapsed_ms;
    before_last_rho_ = prev.rho;
    ++checks_;
    if (!s.exact) only_exact_ = false;
    if (trial_ == 0) {
      if (!async_now_) decide_exact();  // else settled on an asynchronous depth
      return;
    }
    const Speed& v = async_[index(trial_)].speed;
    if (!v.known()) return;
    // Slower per sweep than exact sweeps, and needing more of them: it cannot win. Judged on two
    // timed batches where there can be two (the probe's single launch reads slow: unsettled()).
    const bool confirmed = v.batches >= 2 || check_interval <= trial_;
    if (v.rate() <= (1 + climb_slack) * speed(fastest_exact()) && confirmed) {
      end_trial_early();
      return;
    }
    if (hedging_) {  // the probe reported and may win: the trial goes on
      hedging_ = false;
      async_now_ = true;
      depth_ = trial_;
      return;
    }
    // Past the best solve time by more than timing noise (a trial that finishes within
    // climb_slack of it still holds, and conclude_solve decides).
    if (solve_ms_ > (1 + climb_slack) * exact_ms_ / trial_best_) end_trial_early();
  }

  void end_trial_early() {
    async_[index(trial_)].lost = true;
    trial_ = 0;
    hedging_ = false;
    next_trial_ = 0;  // the climb is over
    async_now_ = false;
    change(fastest_exact());
  }

  // What the solve that just ended says: the exact family's sweeps per solve and, from the
  // reference solve, its time; or a trial's time against the reference.
  void conclude_solve() {
    if (!std::isfinite(prev_.rho)) {  // a solve that broke down compares with nothing
      const int broke = trial_ != 0 ? trial_ : (async_now_ ? depth_ : 0);
      if (broke != 0) {  // a trial, or the asynchronous depth settled on: never again
        async_[index(broke)].lost = true;
        async_[index(broke)].gain = 0.0;
        next_trial_ = 0;
      }
      return;
    }
    if (only_exact_) exact_sweeps_ = prev_.sweeps;
    if (reference_ && only_exact_ && changes_ == 0) {
      exact_ms_ = time_to_tol();
      // Measured as the device loop's solve is (its start included), where the solver said it (a
      // value that is not a positive number is ignored).
      reference_whole_ms_ = whole_ms_ > 0 ? whole_ms_ : solve_ms_;
      reference_checks_ = checks_;
    }
    if (trial_ == 0 || !(exact_ms_ > 0) || !(solve_ms_ > 0)) return;
    Async& a = async_[index(trial_)];
    a.factor = exact_sweeps_ > 0 ? static_cast<double>(prev_.sweeps) / static_cast<double>(exact_sweeps_) : 0.0;
    a.gain = exact_ms_ / time_to_tol();
    const bool held = a.gain >= (1 - climb_slack) * trial_best_;
    next_trial_ = held && 2 * trial_ <= top() ? 2 * trial_ : 0;
  }

  // The host time of the solve that just ended until ρ fell below tol, with ln ρ taken as linear
  // in time over the last interval: a solve ends at a check, so its time is known only to within
  // one batch (3% of a solve of 30 checks), too coarse to compare solves whose times differ by a
  // few percent. The whole time where that cannot be worked out.
  double time_to_tol() const {
    const double last = prev_.rho, before = before_last_rho_;
    if (!(tol_ > 0) || !(last > 0) || !(last < tol_) || !(before > tol_) || !(last_ms_ > 0)) return solve_ms_;
    const double reached = std::log(before / tol_) / std::log(before / last);  // in (0, 1)
    return solve_ms_ - (1 - reached) * last_ms_;
  }

  // Chooses this solve's family and D: the exact climb, the reference solve, one trial per solve,
  // then the fastest measured.
  void plan_solve() {
    async_now_ = false;
    device_now_ = false;
    if (exact_target() != 0) return;  // the exact climb goes on from the depth carried over
    if (device_available_) {
      // The reference has run: its whole time against the device loop's, both to the check that
      // ended the solve (time_to_tol would cut the reference's last interval and not the loop's).
      if (device_ == Device::pending && reference_whole_ms_ > 0 && exact_sweeps_ > 0)
        device_ = device_ms_per_sweep_ < (1 - climb_slack) * reference_whole_ms_ / static_cast<double>(exact_sweeps_)
                      ? Device::chosen
                      : Device::lost;
      if (device_ == Device::untried || device_ == Device::chosen) {
        device_now_ = true;
        return;
      }
      if (device_ == Device::pending) {  // the bound could not tell: this solve is the reference
        depth_ = fastest_exact();
        reference_ = true;
        return;
      }
    }
    if (!async_may_pay_) return;      // out of L2: the exact family only
    if (!(exact_ms_ > 0)) {           // no reference time yet: this solve is the reference
      depth_ = fastest_exact();
      reference_ = true;
      return;
    }
    if (next_trial_ != 0 && next_trial_ <= top() && !async_[index(next_trial_)].lost &&
        reference_checks_ >= trial_checks) {
      trial_ = next_trial_;
      trial_best_ = best_gain();
      async_now_ = true;
      depth_ = trial_;
      return;
    }
    int best = 0;
    double gain = 1.0;
    for (int d = 2; d <= top(); d *= 2) {
      if (async_[index(d)].gain > gain) {
        gain = async_[index(d)].gain;
        best = d;
      }
    }
    async_now_ = best != 0;
    depth_ = best != 0 ? best : fastest_exact();
  }

  // --- Residual-scored strategies ---

  //! The lowest score that still counts as as good as `reference` within a relative `slack`.
  //! The score is −ln(ρ_end / ρ_start) per millisecond: negative where ρ grew over the window
  //! (a transient, or a depth that diverges), where "slack below" is (1 + slack) · reference:
  //! (1 − slack) · reference would count an equal score as a loss.
  static double lowest_kept(double reference, double slack) {
    return reference >= 0 ? (1 - slack) * reference : (1 + slack) * reference;
  }

  void climb(double score) {
    if (std::isfinite(below_) && score < lowest_kept(below_, climb_slack)) {
      // The last doubling did not pay: go back and hold (or fall back to synchronous sweeps).
      climbing_ = false;
      synchronous_ = depth_ == 2;
      change(depth_ / 2);
      return;
    }
    if (depth_ >= top()) {
      climbing_ = false;
      hold_ = score;
      return;
    }
    below_ = score;
    change(depth_ * 2);
  }

  void change(int d) {
    depth_ = d;
    settle_ = settle_checks;
    hold_ = nan();
    window_ = {};
    ++changes_;
  }

  int depth_ = 1;
  bool climbing_ = true;
  bool synchronous_ = false;
  int settle_ = 0;
  int changes_ = 0;
  CheckSample prev_;
  bool have_prev_ = false;
  double below_ = nan();  // the score at depth_ / 2, measured before the last doubling
  double hold_ = nan();   // the first score after arriving at the held depth
  Window window_;
  bool exact_known_ = false;     // whether the strategy is exact is known (context or a check)
  bool exact_strategy_ = false;  // every batch is exact
  std::array<Speed, 32> speed_{};  // exact batches, by log2 D; kept across solves with carry_over
  std::array<int, 32> in_flight_{};  // exact batches queued and not yet observed, by log2 D
  // Adaptive:
  bool family_ = false;
  bool async_now_ = false;           // the next batch is asynchronous
  std::array<Async, 32> async_{};    // by log2 D
  bool async_may_pay_ = true;        // the grids fit in L2 (or nobody said)
  std::int64_t exact_sweeps_ = 0;    // sweeps of the last solve that ran exact batches only
  double exact_ms_ = 0.0;            // host time of the reference solve (the fastest exact depth) to tol
  double reference_whole_ms_ = 0.0;  // host time of the reference solve to its last check
  int next_trial_ = 2;               // the asynchronous depth of the next trial; 0: no more
  int trial_ = 0;                    // the asynchronous depth on trial in this solve; 0: none
  double trial_best_ = 1.0;          // the best gain when the trial began
  bool hedging_ = false;             // the trial's probe has not reported: run exact meanwhile
  bool reference_ = false;           // this solve is the reference solve
  bool only_exact_ = true;           // this solve has run exact batches only
  double solve_ms_ = 0.0;            // host time of this solve so far
  double whole_ms_ = 0.0;            // the whole solve's GPU time (observe_solve_time); not > 0: not told
  double last_ms_ = 0.0;             // host time of this solve's last interval between checks
  double before_last_rho_ = 0.0;     // ρ at the check before the last (0: none in this solve)
  int checks_ = 0;                   // checks in this solve so far
  int reference_checks_ = 0;         // checks of the reference solve
  double tol_ = 0.0;                 // SolveContext::tol; 0: not known
  int depth_limit_ = 0;              // the strategy's deepest D (SolveContext::max_depth); 0: none
  // The device loop (Adaptive, SolveContext::device_loop):
  enum class Device { untried, pending, chosen, lost };
  bool device_available_ = false;    // the solver offers it (and carry_over keeps what is learnt)
  bool device_now_ = false;          // this solve runs there
  Device device_ = Device::untried;  // pending: its trial ran and the reference solve decides
  double device_ms_per_sweep_ = 0.0; // its trial's time a sweep
};

}  // namespace relax
