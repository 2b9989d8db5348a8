#pragma once
//! \file
//! The controller concept.
//!
//! Convergence controllers decide how many sweeps run before the next check of
//! ρ = ‖b − A u‖∞ / ‖b‖∞ (see `relax::SolveOptions`) and, for strategies whose depth is
//! `relax::dynamic`, which depth D the next launches use. The solver stops at the first check with
//! ρ < tol, or at the sweep cap; controllers never stop a solve.
//!
//! A controller is a copyable type with
//! - `void validate() const` — throws `relax::invalid_argument` on bad settings;
//! - `void begin_solve()` — resets per-solve state (each time step is a new solve);
//! - `std::int64_t sweeps_before_check() const` — M for the next batch;
//! - `void observe(const CheckSample&)` — what the last check measured.
//! A controller that chooses D also has `int depth() const` (`chooses_depth_v`), and one that also
//! chooses the strategy family for `relax::Adaptive` has `FamilyChoice choice() const`
//! (`chooses_family_v`). Optional, where a controller wants them: `begin_solve(const
//! SolveContext&)`, called instead of `begin_solve()`; `launched(const BatchInfo&)`, called
//! after each batch is queued; and, for a controller that chooses D, `bool times_batch() const`,
//! asked before each batch: whether the solver should time it with CUDA events (without it, every
//! batch is timed). Timing a batch costs host work between a check and the next launch (three
//! event records and two reads): on the H200, timing every batch made Feedback about 6 points
//! slower in L2 with blocking checks (`relax::detail::begin_solve`, `relax::detail::notify_launch`,
//! `relax::detail::times_batch`; docs/performance-notes.md). On `relax::Adaptive` a controller
//! may also send whole solves to a device loop (`runs_device_loop`,
//! `observe_device_solve`; `relax::detail::chooses_device_loop`; `bool takes_device_loop() const`
//! where it may decline one, so that none is prepared), and hear the whole GPU time of
//! each host-loop solve from its start (`void observe_solve_time(double ms)`,
//! `relax::detail::notify_solve_time`): what a device-loop solve's time is compared with.

#include <relax/core/error.hpp>
#include <relax/core/family.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace relax {

//! What a convergence check measured. Aggregate initialisation follows the member order.
struct CheckSample {
  std::int64_t sweeps = 0;  //!< sweeps of this solve so far
  double rho = 0.0;         //!< ρ after them
  double elapsed_ms = 0.0;  //!< time since the previous check (or the start of the solve)
  //! The strategy's iterates do not depend on D (exact temporal blocking): D changes only the
  //! time per sweep, never the convergence per sweep.
  bool exact = false;
  //! The depth D the sweeps since the previous check ran at; 0 for strategies without a D. With
  //! overlapped checks the batch in flight when a controller changes D still runs at the old D.
  int depth = 0;
  //! GPU time of the sweeps since the previous check (CUDA events around the batch), without the
  //! check's round trip; 0 where not measured (the reference backend, controllers that do not
  //! choose D, a batch the controller did not ask to time).
  double batch_ms = 0.0;
  //! The sweeps of the batch after its first launch, and their GPU time (`steady_ms`). After a
  //! blocking check the GPU idles until the host has queued the first launch, and that wait
  //! would count against a short batch; the later launches queue behind the first, as in a long
  //! run. 0 where the GPU ran the batch but there is no steady part to time (a batch of one
  //! launch, or a batch the controller did not ask to time); -1 where the backend does not
  //! measure it (then `batch_ms` or `elapsed_ms` is all there is).
  std::int64_t steady_sweeps = -1;
  double steady_ms = 0.0;
};

//! What the solver tells a controller at the start of each solve.
struct SolveContext {
  bool exact = false;           //!< every batch is exact (`CheckSample::exact`): D changes only the speed
  bool chooses_family = false;  //!< the strategy runs the family the controller picks (`relax::Adaptive`)
  //! The grids a sweep touches (u, its workspace and b) over the device's L2 size; 0 where not
  //! known.
  double working_set_over_l2 = 0.0;
  //! The deepest D the strategy runs (`max_depth_v`); 0 where it has no limit.
  int max_depth = 0;
  //! The solve stops at the first check with ρ below this (`SolveOptions::tol`); 0 where not known.
  double tol = 0.0;
  //! The solver can run this solve as a device loop instead of launched batches (`relax::Adaptive`
  //! on a 2D grid, with a controller with `runs_device_loop`: on chip where the grid fits, else
  //! streamed; `relax::adaptive_device_loop`).
  bool device_loop = false;
};

//! A batch of sweeps just queued: its size, depth and whether it is exact.
struct BatchInfo {
  std::int64_t sweeps = 0;
  int depth = 0;
  bool exact = false;
};

namespace detail {
template <class C, class = void>
struct is_controller : std::false_type {};
template <class C>
struct is_controller<C, std::void_t<decltype(std::declval<const C&>().validate()),
                                    decltype(std::declval<C&>().begin_solve()),
                                    decltype(std::declval<C&>().observe(std::declval<const CheckSample&>())),
                                    decltype(std::declval<const C&>().sweeps_before_check())>>
    : std::is_convertible<decltype(std::declval<const C&>().sweeps_before_check()), std::int64_t> {};

template <class C, class = void>
struct chooses_depth : std::false_type {};
template <class C>
struct chooses_depth<C, std::void_t<decltype(std::declval<const C&>().depth())>> : std::true_type {};

template <class C, class = void>
struct chooses_family : std::false_type {};
template <class C>
struct chooses_family<C, std::void_t<decltype(std::declval<const C&>().choice())>>
    : std::is_same<decltype(std::declval<const C&>().choice()), FamilyChoice> {};

template <class C, class = void>
struct takes_context : std::false_type {};
template <class C>
struct takes_context<C, std::void_t<decltype(std::declval<C&>().begin_solve(std::declval<const SolveContext&>()))>>
    : std::true_type {};

template <class C, class = void>
struct notices_launches : std::false_type {};
template <class C>
struct notices_launches<C, std::void_t<decltype(std::declval<C&>().launched(std::declval<const BatchInfo&>()))>>
    : std::true_type {};

//! Starts a solve: with the context where the controller takes it.
template <class C>
void begin_solve(C& controller, const SolveContext& context) {
  if constexpr (takes_context<C>::value) controller.begin_solve(context);
  else controller.begin_solve();
}

//! Whether a controller can send a whole solve to a device loop (`relax::Adaptive`):
//! `bool runs_device_loop() const`, asked after `begin_solve`, and `void observe_device_solve(double
//! ms, std::int64_t sweeps, bool finite)`, told what such a solve took.
template <class C, class = void>
struct chooses_device_loop : std::false_type {};
template <class C>
struct chooses_device_loop<C, std::void_t<decltype(std::declval<const C&>().runs_device_loop()),
                                          decltype(std::declval<C&>().observe_device_solve(0.0, std::int64_t{}, true))>>
    : std::true_type {};

//! Whether a controller that can send solves to a device loop will (`bool takes_device_loop()
//! const`, optional; without it, yes): the solver offers it one, with the loop's workspace and
//! kernels, only then.
template <class C, class = void>
struct says_takes_device_loop : std::false_type {};
template <class C>
struct says_takes_device_loop<C, std::void_t<decltype(std::declval<const C&>().takes_device_loop())>>
    : std::is_convertible<decltype(std::declval<const C&>().takes_device_loop()), bool> {};
template <class C>
bool takes_device_loop(const C& controller) {
  if constexpr (says_takes_device_loop<C>::value) return controller.takes_device_loop();
  else return true;
}

//! Whether a controller hears the whole time of a host-loop solve (`void observe_solve_time(double
//! ms)`: on the GPU's timer, from the solve's start, u's copy and ‖b‖ included, to its last check,
//! as a device-loop solve's time is measured), and tells it.
template <class C, class = void>
struct hears_solve_time : std::false_type {};
template <class C>
struct hears_solve_time<C, std::void_t<decltype(std::declval<C&>().observe_solve_time(0.0))>> : std::true_type {};
template <class C>
void notify_solve_time(C& controller, double ms) {
  if constexpr (hears_solve_time<C>::value) controller.observe_solve_time(ms);
}

template <class C, class = void>
struct chooses_timing : std::false_type {};
template <class C>
struct chooses_timing<C, std::void_t<decltype(std::declval<const C&>().times_batch())>>
    : std::is_convertible<decltype(std::declval<const C&>().times_batch()), bool> {};

//! Whether the solver should time the next batch: what the controller says, or yes.
template <class C>
bool times_batch(const C& controller) {
  if constexpr (chooses_timing<C>::value) return controller.times_batch();
  else return true;
}

//! Tells a controller that wants to know about a batch just queued.
template <class C>
void notify_launch(C& controller, const BatchInfo& batch) {
  if constexpr (notices_launches<C>::value) controller.launched(batch);
}
}  // namespace detail

//! True when `C` is a convergence controller.
template <class C>
inline constexpr bool is_controller_v = detail::is_controller<C>::value;

//! True when the controller `C` chooses the depth D of the next launches.
template <class C>
inline constexpr bool chooses_depth_v = detail::chooses_depth<C>::value;

//! True when the controller `C` also chooses the strategy family (`relax::Adaptive`).
template <class C>
inline constexpr bool chooses_family_v = detail::chooses_family<C>::value;

}  // namespace relax
