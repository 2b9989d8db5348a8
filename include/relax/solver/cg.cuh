#pragma once
//! \file
//! `relax::CG<Operator, Variant>`: Conjugate Gradient on one GPU for a symmetric positive definite
//! operator (`Poisson5Operator<T>`, `CsrOperator<T>`, or any type with `value_type`, `size()`
//! and `apply(p, q, stream)`).
//!
//! Variants (tags):
//! - `Unfused` — one kernel per operation (SpMV, each dot, each vector update), the shape of a
//!   cuSPARSE + cuBLAS solver, with the scalars α and β kept on the device;
//! - `Fused` — two kernels per iteration (the row-strip fusion of the CG lab): the first forms
//!   p = r + β p on the fly while it applies A, does the previous iteration's x += α p (it reads
//!   p anyway) and reduces pᵀAp; the second updates r and reduces rᵀr. Scalars, the stopping test and the iteration count live on the device, so
//!   iterations past convergence are no-ops and the host only looks every `check_interval`;
//! - `Graph` — `Fused`'s iterations captured in a CUDA Graph of `check_interval` iterations,
//!   launched once per check;
//! - `Persistent` — the whole solve in one cooperative kernel, two grid-wide barriers per
//!   iteration, and the stopping decision on the device; a device without cooperative launch is
//!   a clear `relax::unavailable_error`;
//! - `PersistentSingleReduction` — Chronopoulos–Gear CG in one cooperative kernel: (r, r) and
//!   (A r, r) in one reduction, so one grid barrier per iteration (`cg_persistent_single`);
//!   standard CG's iterates in exact arithmetic, with α from a recurrence;
//! - `ClusterResident` — Chronopoulos–Gear CG (`PersistentSingleReduction`'s recurrences and
//!   per-unknown operations) in one kernel run by one thread-block cluster that keeps the whole
//!   problem on chip: each thread's unknowns of x, r, p, s and w in registers, r published in
//!   distributed shared memory for the rows of A, two hardware cluster barriers an iteration and
//!   no global-memory traffic between the first load and the last store (`solver/cg_cluster.cuh`).
//!   For small problems: at most `cluster_capacity()` unknowns (65536, 256², on the H200); a
//!   larger operator, or a device without clusters (compute capability below 9.0), is a clear
//!   error at construction;
//! - `GridResident` — Chronopoulos–Gear CG (the same recurrences and per-unknown operations) in one
//!   cooperative grid of at most one block per SM, each thread's unknowns of x, r, p, s and w in
//!   registers for the whole solve: a block applies A to its own unknowns from its shared memory
//!   and recomputes a neighbouring block's r' from the r, w and s that block published, so an
//!   iteration touches global memory only at the edges of the blocks' ranges, with one grid
//!   barrier (`solver/cg_resident.cuh`). The kernel also forms ‖b‖, r = b − A x and, at the end,
//!   the true residual ‖b − A x‖ itself, so a solve is one launch and one read. At most
//!   `resident_capacity()` unknowns (270336 on the H200); a larger operator is a clear error at
//!   construction;
//! - `Pipelined` — Ghysels–Vanroose pipelined CG: one fused reduction ((r, r) and (w, r)) per
//!   iteration, two kernels. Every `CgOptions::replace_interval` iterations a checkpoint computes
//!   b − A x and its gap to the recurrence residual, on the device: above the bound of
//!   `CgOptions::switch_gap` the solve goes on as standard CG (`Unfused`) from x, the report's
//!   `switched_at` says where; below it the residual is replaced by b − A x (and w, s, z
//!   recomputed) so its attainable accuracy matches standard CG, until the residual (as read at
//!   a check) is within `CgOptions::replace_until` of the tolerance: replacing it closer to the
//!   attainable accuracy breaks the recurrences down. In
//!   float32 its recurrences drift fast: it replaces every 10 iterations, and a tolerance near
//!   float's attainable accuracy (about 3e-5 relative on a 257² Poisson problem, where standard
//!   CG's recurrence residual passes below the true one) ends in `breakdown`; use double there.
//! The fused variants need the operator's rows (`Operator::rows()`, see `Poisson5Operator` and
//! `CsrOperator`), because their kernels apply A to vectors they form on the fly.
//!
//!   On ill-conditioned matrices its recurrences drift: a recurrence pᵀAp ≤ 0 is checked on p
//!   and A p computed directly; only if that is ≤ 0 too is it a `breakdown`, otherwise the solve
//!   goes on as standard CG (`Unfused`) from x and the report's `switched_at` says where.
//!
//! Stopping (see `CgOptions`): `CgOptions::criterion()`, a `relax::StopCriterion` on ‖r‖₂ of the
//! recurrence residual, decided by the same `decide` on the host (Unfused, every
//! `check_interval` iterations) and inside the kernels (the fused family: every iteration); the
//! iteration cap. Every solve ends with ‖b − A x‖₂ (the report's `true_residual_norm`): where the
//! recurrence met the criterion and the true residual does not, the status is `residual_gap`, and
//! `CgOptions::restarts` restarts from the true residual. Breakdown — pᵀAp ≤ 0, or a non-finite
//! scalar — freezes x at the last good iterate and is reported at the next check. An operator is
//! owned by its solver; `relax::OperatorView` (`solver/operator_view.hpp`) shares one between
//! several.

#include <relax/control/stop.hpp>
#include <relax/core/buffer.hpp>
#include <relax/control/cg_report.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/core/device.hpp>
#include <relax/core/error.hpp>
#include <relax/core/launch.hpp>
#include <relax/core/stream.hpp>
#include <relax/primitives/cg_updates.cuh>
#include <relax/primitives/dot.cuh>
#include <relax/primitives/max_norm.cuh>
#include <relax/solver/cg_cluster.cuh>
#include <relax/solver/cg_kernels.cuh>
#include <relax/solver/cg_resident.cuh>
#include <relax/strategy/tuning.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace relax {

//! One kernel per operation.
struct Unfused {};
//! Two kernels per iteration, scalars and stopping test on the device.
struct Fused {};
//! `Fused` iterations captured in a CUDA Graph, one graph launch per check.
struct Graph {};
//! One cooperative kernel for the whole solve.
struct Persistent {};
//! Chronopoulos–Gear CG in one cooperative kernel: one reduction and one grid barrier per iteration.
struct PersistentSingleReduction {};
//! Ghysels–Vanroose pipelined CG with residual replacement.
struct Pipelined {};
//! Chronopoulos–Gear CG in one thread-block cluster, the problem resident on chip.
struct ClusterResident {};
//! Chronopoulos–Gear CG in one cooperative grid, each thread's unknowns resident in registers.
struct GridResident {};

template <class V>
struct is_cg_variant : std::false_type {};
template <>
struct is_cg_variant<Unfused> : std::true_type {};
template <>
struct is_cg_variant<Fused> : std::true_type {};
template <>
struct is_cg_variant<Graph> : std::true_type {};
template <>
struct is_cg_variant<Persistent> : std::true_type {};
template <>
struct is_cg_variant<PersistentSingleReduction> : std::true_type {};
template <>
struct is_cg_variant<Pipelined> : std::true_type {};
template <>
struct is_cg_variant<ClusterResident> : std::true_type {};
template <>
struct is_cg_variant<GridResident> : std::true_type {};

namespace detail {

template <class Op, class = void>
struct has_rows : std::false_type {};
template <class Op>
struct has_rows<Op, std::void_t<decltype(std::declval<const Op&>().rows())>> : std::true_type {};

//! An instantiated CUDA graph, destroyed with its owner.
class GraphExec {
 public:
  GraphExec() = default;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  GraphExec(GraphExec&& o) noexcept : exec_(std::exchange(o.exec_, nullptr)) {}
  GraphExec& operator=(GraphExec&& o) noexcept {
    std::swap(exec_, o.exec_);
    return *this;
  }
  ~GraphExec() {
    if (exec_) (void)cudaGraphExecDestroy(exec_);
  }
  //! Captures what `enqueue(capture_stream)` queues on `capture_stream` (which must not be the
  //! legacy default stream) and instantiates it.
  template <class F>
  void capture(cudaStream_t capture_stream, F&& enqueue) {
    cudaGraph_t graph = nullptr;
    RELAX_CUDA_CHECK(cudaStreamBeginCapture(capture_stream, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue(capture_stream);
    } catch (...) {
      (void)cudaStreamEndCapture(capture_stream, &graph);  // leave the stream usable
      if (graph) (void)cudaGraphDestroy(graph);
      throw;
    }
    RELAX_CUDA_CHECK(cudaStreamEndCapture(capture_stream, &graph));
    if (exec_) RELAX_CUDA_CHECK(cudaGraphExecDestroy(std::exchange(exec_, nullptr)));
    const cudaError_t made = cudaGraphInstantiate(&exec_, graph, 0);
    (void)cudaGraphDestroy(graph);
    RELAX_CUDA_CHECK(made);
  }
  bool ready() const { return exec_ != nullptr; }
  void launch(cudaStream_t stream) const { RELAX_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace detail

template <class Operator, class Variant = Unfused>
class CG {
  static_assert(is_cg_variant<Variant>::value,
                "relax::CG<Operator, Variant>: the second argument (Variant) is not a CG variant "
                "such as relax::Unfused");
  static constexpr bool fused_family = !std::is_same_v<Variant, Unfused>;
  static constexpr bool pipelined = std::is_same_v<Variant, Pipelined>;
  static constexpr bool single_reduction = std::is_same_v<Variant, PersistentSingleReduction>;
  static constexpr bool persistent = std::is_same_v<Variant, Persistent> || single_reduction;
  static constexpr bool cluster = std::is_same_v<Variant, ClusterResident>;
  static constexpr bool grid_resident = std::is_same_v<Variant, GridResident>;
  // The variants that keep the vectors on chip and need no second direction buffer.
  static constexpr bool resident = cluster || grid_resident;
  static_assert(!fused_family || detail::has_rows<Operator>::value,
                "relax::CG<Operator, Variant>: the fused variants (Fused, Graph, Persistent, "
                "PersistentSingleReduction, Pipelined, ClusterResident, GridResident) apply A inside their own kernels and need Operator::rows() (see "
                "Poisson5Operator, CsrOperator); use relax::Unfused for other operators");

 public:
  using value_type = typename Operator::value_type;
  using T = value_type;

  //! \throws relax::unavailable_error without a GPU; relax::invalid_argument for bad options.
  CG(Operator op, CgOptions options = {})
      : op_((require_gpu(), std::move(op))),
        options_((options.validate(), options)),
        r_(static_cast<std::size_t>(op_.size())),
        p_(static_cast<std::size_t>(op_.size())),
        q_(static_cast<std::size_t>(op_.size())),
        scalars_(4),
        status_(1),
        host_(4),
        p2_(fused_family && !resident ? static_cast<std::size_t>(op_.size()) : 0),
        w_(pipelined || single_reduction || grid_resident ? static_cast<std::size_t>(op_.size()) : 0),
        m_(pipelined || single_reduction || grid_resident ? static_cast<std::size_t>(op_.size()) : 0),
        z_(pipelined || single_reduction || grid_resident ? static_cast<std::size_t>(op_.size()) : 0),
        s_(pipelined || single_reduction || grid_resident ? static_cast<std::size_t>(op_.size()) : 0),
        state_(fused_family ? 1 : 0),
        host_state_(fused_family ? 1 : 0),
        partials_(pipelined ? 4 * detail::dot_blocks : 0) {
    if constexpr (persistent) size_persistent_grid();
    if constexpr (cluster) size_cluster();
    if constexpr (grid_resident) size_resident_grid();
    // Every read-back copies the status word; the first one (‖b‖ at the start of a solve) comes
    // before any kernel has written it.
    RELAX_CUDA_CHECK(cudaMemsetAsync(status_.data(), 0, sizeof(int), stream_.get()));
    stream_.synchronize();
  }

  //! Blocks of the persistent kernel's grid (0 for the other variants).
  int persistent_blocks() const { return persistent_blocks_; }

  //! `ClusterResident`: blocks of the cluster and unknowns a thread keeps (0 for the other variants).
  int cluster_blocks() const { return cluster_blocks_; }
  int cluster_points_per_thread() const { return cluster_points_; }

  //! The most unknowns `ClusterResident` keeps on chip on the current device: the largest
  //! cluster it can launch there, times `tuning::cg_cluster_threads`, times
  //! `tuning::cg_cluster_max_points_per_thread`. 0 where the device has no clusters.
  static std::int64_t cluster_capacity() {
    if (!cluster_launch_supported()) return 0;
    constexpr int most = tuning::cg_cluster_max_points_per_thread;
    return std::int64_t{largest_cluster(cluster_kernel(most))} * detail::cluster_cg_points<most>;
  }

  //! `GridResident`: blocks of its grid and unknowns a thread keeps (0 for the other variants).
  int resident_blocks() const { return resident_blocks_; }
  int resident_points_per_thread() const { return resident_points_; }

  //! The most unknowns `GridResident` keeps on chip on the current device: one block per SM,
  //! times `tuning::cg_resident_threads`, times `tuning::cg_resident_max_points_per_thread`.
  static std::int64_t resident_capacity() {
    return std::int64_t{current_sm_count()} * detail::resident_cg_points<tuning::cg_resident_max_points_per_thread>;
  }

  //! Test hook (`GridResident`): a block keeps at most `unknowns` of its window in shared memory
  //! (never fewer than it owns), so that blocks whose window is larger read their neighbours from
  //! global memory, as they do where the window outgrows shared memory.
  void set_resident_window_for_testing(int unknowns) {
    resident_window_ = std::max(unknowns, tuning::cg_resident_threads * resident_points_);
  }

  //! Test hook (persistent and grid-resident variants): the grid barriers wait for `blocks` more blocks than the
  //! grid has, so none completes and the solve ends with `relax::device_loop_error` after
  //! `timeout_ns` (0 blocks: the normal barrier and its 20 s limit).
  void set_absent_blocks_for_testing(unsigned blocks, std::uint64_t timeout_ns = 50'000'000) {
    absent_blocks_ = blocks;
    barrier_timeout_ns_ = blocks > 0 ? timeout_ns : default_barrier_timeout_ns;
  }

  const Operator& op() const { return op_; }
  cudaStream_t stream() const { return stream_.get(); }

  //! Solves A x = b from the initial guess in `x`; `b` and `x` are device arrays of `size()`
  //! values. Blocks until done. Stops as `CgOptions` says (the criterion on the recurrence
  //! residual, then on the true residual ‖b − A x‖₂, which the report carries; restarts from it
  //! after a `residual_gap` if `CgOptions::restarts` allows).
  CgReport solve(const T* b, T* x, cudaStream_t stream) {
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    CgReport report;
    if constexpr (grid_resident) {  // its kernel forms ‖b‖, the start residual and the true residual
      detail::solve_with_restarts(
          options_, report, [&](const StopCriterion& left, CgReport& r) { return run_resident(b, x, left, r, stream); },
          [&] { return resident_true_norm_; });
    } else {
      dot(op_.size(), b, b, scalars_.data(), dots_, stream);
      read_back(scalars_.data(), nullptr, stream);
      report.rhs_norm = std::sqrt(host_.data()[0]);
      require_rhs_norm_representable(report.rhs_norm, b, stream);
      detail::solve_with_restarts(
          options_, report,
          [&](const StopCriterion& left, CgReport& r) {
            // Pipelined's restarts and its switch run standard CG, as the reference's do.
            const bool standard = !fused_family || (pipelined && (r.restarts > 0 || r.switched_at >= 0));
            return standard ? run_unfused(b, x, left, r, stream) : run_fused_family(b, x, left, r, stream);
          },
          [&] { return true_residual_norm(b, x, stream); });
    }
    report.time_ms = std::chrono::duration<double, std::milli>(clock::now() - start).count();
    return report;
  }

  //! Host convenience: uploads `b` and `x`, solves, downloads `x`.
  CgReport solve(const std::vector<T>& b, std::vector<T>& x) {
    const std::size_t n = static_cast<std::size_t>(op_.size());
    detail::require(b.size() == n, "b", b.size(), "one value per unknown of the operator");
    detail::require(x.size() == n, "x", x.size(), "one value per unknown of the operator");
    DeviceBuffer<T> db(n), dx(n);
    // Copies on the solver's own (non-blocking) stream: a plain cudaMemcpy from pageable memory
    // may return before its DMA lands, and is not ordered with that stream.
    const cudaStream_t s = stream_.get();
    RELAX_CUDA_CHECK(cudaMemcpyAsync(db.data(), b.data(), db.bytes(), cudaMemcpyHostToDevice, s));
    RELAX_CUDA_CHECK(cudaMemcpyAsync(dx.data(), x.data(), dx.bytes(), cudaMemcpyHostToDevice, s));
    const CgReport report = solve(db.data(), dx.data(), s);
    RELAX_CUDA_CHECK(cudaMemcpyAsync(x.data(), dx.data(), dx.bytes(), cudaMemcpyDeviceToHost, s));
    RELAX_CUDA_CHECK(cudaStreamSynchronize(s));
    return report;
  }

 private:
  static bool require_gpu() {
    if (device_count() == 0)
      throw unavailable_error("relax::CG needs a CUDA device and none is present; use "
                              "relax::reference::cg instead");
    return true;
  }

  // r = p = b − A x; returns (r, r).
  double start_residual(const T* b, const T* x, cudaStream_t stream) {
    const std::int64_t n = op_.size();
    RELAX_CUDA_CHECK(cudaMemsetAsync(status_.data(), 0, sizeof(int), stream));
    op_.apply(x, q_.data(), stream);
    detail::cg_start<<<detail::vector_blocks(n), 256, 0, stream>>>(n, b, q_.data(), r_.data(), p_.data());
    RELAX_CUDA_CHECK_LAUNCH();
    dot(n, r_.data(), r_.data(), scalars_.data() + 1, dots_, stream);
    read_back(scalars_.data() + 1, nullptr, stream);
    return host_.data()[0];
  }

  // ‖b − A x‖₂ (r_ and q_ are scratch here).
  double true_residual_norm(const T* b, const T* x, cudaStream_t stream) {
    const std::int64_t n = op_.size();
    op_.apply(x, q_.data(), stream);
    detail::cg_residual<<<detail::vector_blocks(n), 256, 0, stream>>>(n, b, q_.data(), r_.data());
    RELAX_CUDA_CHECK_LAUNCH();
    dot(n, r_.data(), r_.data(), scalars_.data() + 1, dots_, stream);
    read_back(scalars_.data() + 1, nullptr, stream);
    return std::sqrt(host_.data()[0]);
  }

  void record(CgReport& report) const {
    if (options_.record_history) report.history.push_back({report.iterations, report.relative_residual()});
  }

  // Standard CG, one kernel per operation, from x until `stop` (capping this run's iterations)
  // decides; `report.iterations` goes on counting.
  CgStatus run_unfused(const T* b, T* x, const StopCriterion& stop, CgReport& report, cudaStream_t stream) {
    double* rr = scalars_.data() + 1;
    double* rr_next = scalars_.data() + 2;
    double* pq = scalars_.data() + 3;
    report.residual_norm = std::sqrt(start_residual(b, x, stream));
    const StopReason first = stop.decide(report.residual_norm, report.rhs_norm, 0);
    if (first != StopReason::go_on) return detail::cg_status_of(first);
    for (std::int64_t it = 1;; ++it) {
      iterate(x, rr, rr_next, pq, stream);
      std::swap(rr, rr_next);
      ++report.iterations;
      if (it % options_.check_interval != 0 && it < stop.max_count) continue;
      const int status = read_back(rr, nullptr, stream);
      if (status == detail::cg_breakdown) return CgStatus::breakdown;
      if (status == detail::cg_non_finite) return CgStatus::non_finite;
      report.residual_norm = std::sqrt(host_.data()[0]);
      record(report);
      const StopReason d = stop.decide(report.residual_norm, report.rhs_norm, it);
      if (d != StopReason::go_on) return detail::cg_status_of(d);
    }
  }

  // Fused, Graph, Persistent, Pipelined from x until `stop` decides; Pipelined goes on as
  // standard CG where a checkpoint found the gap above `CgOptions::switch_gap`, or where a
  // recurrence pᵀAp ≤ 0 is > 0 when computed on p and A p.
  CgStatus run_fused_family(const T* b, T* x, const StopCriterion& stop, CgReport& report, cudaStream_t stream) {
    const double rr0 = start_residual(b, x, stream);
    report.residual_norm = std::sqrt(rr0);
    const StopReason first = stop.decide(report.residual_norm, report.rhs_norm, 0);
    if (first != StopReason::go_on) return detail::cg_status_of(first);
    const std::int64_t offset = report.iterations;
    const detail::CgDeviceState s = run_fused(b, x, rr0, stop, offset, report, stream);
    report.iterations = offset + s.iterations;
    report.residual_norm = std::sqrt(s.rr);
    if (s.status == detail::cg_breakdown) return CgStatus::breakdown;
    if (s.status == detail::cg_non_finite) return CgStatus::non_finite;
    if (s.status == detail::cg_drift || s.status == detail::cg_gap) {
      if (s.status == detail::cg_drift) {
        const double pq = direct_pq(s, stream);
        if (!std::isfinite(pq)) return CgStatus::non_finite;
        if (pq <= 0.0) return CgStatus::breakdown;
      }
      report.switched_at = report.iterations;
      StopCriterion rest = stop;
      rest.max_count = stop.max_count - s.iterations;
      return run_unfused(b, x, rest, report, stream);
    }
    const StopReason d = stop.decide(report.residual_norm, report.rhs_norm, s.iterations);
    return d == StopReason::go_on ? CgStatus::iteration_cap : detail::cg_status_of(d);
  }

  // Refuses b where ‖b‖₂ (`rhs_norm`) underflowed to 0 while b is not 0, as the reference does
  // (`cpu/cg.hpp`): nothing unless ‖b‖₂ is 0, then one max-|b| pass (the value the error
  // names).
  void require_rhs_norm_representable(double rhs_norm, const T* b, cudaStream_t stream) const {
    if (rhs_norm != 0.0) return;
    MaxNormSlot<T> slot;
    const T largest = max_abs(op_.size(), b, slot, stream);
    detail::require(largest == T(0), "b", static_cast<double>(largest), detail::rhs_norm_underflow_expected);
  }

  // GridResident from x until `stop` decides, in one launch: the kernel forms ‖b‖ and r = b − A x,
  // decides, iterates, and leaves ‖b − A x‖ of its iterate for `solve_with_restarts`
  // (`resident_true_norm_`).
  CgStatus run_resident(const T* b, T* x, const StopCriterion& stop, CgReport& report, cudaStream_t stream) {
    const std::int64_t offset = report.iterations;
    detail::CgDeviceState& h = host_state_.data()[0];
    h = detail::CgDeviceState{};
    h.stop = stop;
    RELAX_CUDA_CHECK(cudaMemcpyAsync(state_.data(), &h, sizeof(h), cudaMemcpyHostToDevice, stream));
    launch_resident(b, x, stream);
    const detail::CgDeviceState s = read_state(stream);  // also waits for the barrier word's copy
    require_barrier_completed();
    report.rhs_norm = s.rhs_norm;
    // (After the launch, which formed ‖b‖: x then holds what it left, as after any refusal.)
    require_rhs_norm_representable(report.rhs_norm, b, stream);
    report.iterations = offset + s.iterations;
    report.residual_norm = std::sqrt(s.rr);
    resident_true_norm_ = std::sqrt(s.true_rr);
    record(report);
    if (s.status == detail::cg_breakdown) return CgStatus::breakdown;
    if (s.status == detail::cg_non_finite) return CgStatus::non_finite;
    const StopReason d = stop.decide(report.residual_norm, report.rhs_norm, s.iterations);
    return d == StopReason::go_on ? CgStatus::iteration_cap : detail::cg_status_of(d);
  }

  // Pipelined, after a recurrence pᵀAp ≤ 0: pᵀAp for the direction the iteration would have
  // taken, p = r + β p_prev (β = γ / γ_prev; p = r on the first iteration), computed from p and A p.
  double direct_pq(const detail::CgDeviceState& s, cudaStream_t stream) {
    const std::int64_t n = op_.size();
    const double numbers[2] = {s.iterations == 0 ? 1.0 : s.rr_prev, s.iterations == 0 ? 0.0 : s.rr};
    RELAX_CUDA_CHECK(cudaMemcpyAsync(scalars_.data() + 1, numbers, sizeof(numbers), cudaMemcpyHostToDevice, stream));
    RELAX_CUDA_CHECK(cudaMemsetAsync(status_.data(), 0, sizeof(int), stream));
    RELAX_CUDA_CHECK(cudaMemcpyAsync(p2_.data(), p_.data(), p_.bytes(), cudaMemcpyDeviceToDevice, stream));
    detail::cg_xpay<<<detail::vector_blocks(n), 256, 0, stream>>>(n, scalars_.data() + 2, scalars_.data() + 1,
                                                                   r_.data(), p2_.data(), status_.data());
    RELAX_CUDA_CHECK_LAUNCH();
    op_.apply(p2_.data(), q_.data(), stream);
    dot(n, p2_.data(), q_.data(), scalars_.data() + 3, dots_, stream);
    read_back(scalars_.data() + 3, nullptr, stream);
    return host_.data()[0];
  }

  // The fused family: sets up the device state (`stop` caps this run; `offset` iterations came
  // before it), iterates, returns the final state. `history` gets one sample per check.
  detail::CgDeviceState run_fused(const T* b, T* x, double rr0, const StopCriterion& stop, std::int64_t offset,
                                  CgReport& report, cudaStream_t stream) {
    detail::CgDeviceState& h = host_state_.data()[0];
    h = detail::CgDeviceState{};
    h.rr = rr0;
    h.rr_prev = rr0;
    h.rhs_norm = report.rhs_norm;
    h.stop = stop;
    RELAX_CUDA_CHECK(cudaMemcpyAsync(state_.data(), &h, sizeof(h), cudaMemcpyHostToDevice, stream));
    const std::int64_t check = options_.check_interval;
    const std::int64_t per_graph = std::min(check, stop.max_count);  // Graph: iterations per graph
    auto record = [&](const detail::CgDeviceState& s) {
      if (options_.record_history)
        report.history.push_back({offset + s.iterations, StopCriterion::relative(std::sqrt(s.rr), report.rhs_norm)});
    };
    const double replace_below = options_.replace_until_for(sizeof(T)) * options_.threshold(report.rhs_norm);
    if constexpr (cluster) {
      launch_cluster(x, stream);
      const auto s = read_state(stream);
      record(s);
      return s;
    } else if constexpr (persistent) {
      launch_persistent(x, stream);
      const auto s = read_state(stream);  // also waits for the barrier word's copy
      require_barrier_completed();
      record(s);
      return s;
    } else {
      if constexpr (pipelined) op_.apply(r_.data(), w_.data(), stream);  // w = A r
      std::int64_t launched = 0;  // iterations queued; the device's count stops at convergence
      bool replacing = true;      // Pipelined: until ‖r‖ < replace_until × target, seen at a check
      while (true) {
        if constexpr (std::is_same_v<Variant, Graph>) {
          detail::GraphExec& g = graphs_[launched % 2];
          if (!g.ready() || graph_x_[launched % 2] != x) {
            const std::int64_t parity = launched;
            g.capture(stream_.get(), [&](cudaStream_t cs) {
              for (std::int64_t k = 0; k < per_graph; ++k) fused_iteration(x, parity + k, cs);
            });
            graph_x_[launched % 2] = x;
          }
          g.launch(stream);
          launched += per_graph;
        } else {
          do {
            if constexpr (pipelined) {
              if (launched > 0 && launched % replace_interval() == 0) checkpoint(b, x, replacing, stream);
              pipelined_iteration(x, stream);
            } else {
              fused_iteration(x, launched, stream);
            }
            ++launched;
          } while (launched % check != 0 && launched < stop.max_count);
        }
        const auto s = read_state(stream);
        record(s);
        replacing = replacing && std::sqrt(s.rr) > replace_below;
        if (detail::cg_done(s)) {
          if constexpr (pipelined) return s;
          else return finish_x(x, s, stream);
        }
      }
    }
  }

  // Iteration `k` of Fused: p alternates between two buffers.
  void fused_iteration(T* x, std::int64_t k, cudaStream_t stream) {
    const std::int64_t n = op_.size();
    T* p_old = k % 2 == 0 ? p_.data() : p2_.data();
    T* p_new = k % 2 == 0 ? p2_.data() : p_.data();
    detail::cg_fused_direction<<<detail::dot_blocks, detail::dot_block, 0, stream>>>(
        op_.rows(), n, r_.data(), p_old, p_new, q_.data(), x, state_.data(), dots_.partials(),
        dots_.arrivals());
    detail::cg_fused_update<<<detail::dot_blocks, detail::dot_block, 0, stream>>>(
        n, q_.data(), r_.data(), state_.data(), dots_.partials(), dots_.arrivals());
    RELAX_CUDA_CHECK_LAUNCH();
  }

  // After the last Fused iteration: the pending x += α p, with the direction of iteration
  // `iterations − 1`; returns the state with nothing pending.
  detail::CgDeviceState finish_x(T* x, detail::CgDeviceState s, cudaStream_t stream) {
    if (!s.x_pending) return s;
    const std::int64_t n = op_.size();
    const T* p_last = (s.iterations - 1) % 2 == 0 ? p2_.data() : p_.data();
    detail::cg_fused_finish_x<<<detail::vector_blocks(n), 256, 0, stream>>>(n, p_last, x, state_.data());
    RELAX_CUDA_CHECK_LAUNCH();
    RELAX_CUDA_CHECK(cudaStreamSynchronize(stream));  // solve() returns with x final
    s.x_pending = 0;
    return s;
  }

  void pipelined_iteration(T* x, cudaStream_t stream) {
    const std::int64_t n = op_.size();
    detail::cg_pipelined_reduce<<<detail::dot_blocks, detail::dot_block, 0, stream>>>(
        op_.rows(), n, r_.data(), w_.data(), m_.data(), state_.data(), partials_.data(), dots_.arrivals());
    detail::cg_pipelined_update<<<detail::dot_blocks, detail::dot_block, 0, stream>>>(
        n, m_.data(), z_.data(), s_.data(), p_.data(), x, r_.data(), w_.data(), state_.data(),
        dots_.partials(), dots_.arrivals());
    RELAX_CUDA_CHECK_LAUNCH();
  }

  std::int64_t replace_interval() const {
    if (options_.replace_interval > 0) return options_.replace_interval;
    return sizeof(T) >= 8 ? 50 : 10;
  }

  // Pipelined's checkpoint (the reference's `pipelined_checkpoint`): the gap test on the device
  // and, with `replace`, r = b − A x, w = A r, s = A p, z = A s. Where the test ends the run
  // (`cg_gap`), the three products are wasted once; the host learns of it at the next check.
  void checkpoint(const T* b, const T* x, bool replace, cudaStream_t stream) {
    const std::int64_t n = op_.size();
    op_.apply(x, q_.data(), stream);
    detail::cg_pipelined_checkpoint<<<detail::dot_blocks, detail::dot_block, 0, stream>>>(
        n, b, q_.data(), r_.data(), x, w_.data(), state_.data(), partials_.data(), dots_.arrivals(),
        static_cast<double>(std::numeric_limits<T>::epsilon()), options_.switch_gap, replace);
    RELAX_CUDA_CHECK_LAUNCH();
    if (!replace) return;
    op_.apply(r_.data(), w_.data(), stream);
    op_.apply(p_.data(), s_.data(), stream);
    op_.apply(s_.data(), z_.data(), stream);
  }

  // The persistent grid: as many blocks as the problem fills with `points_per_thread` points a
  // thread (a grid barrier costs more the more blocks it has: 1.10 µs with one block per SM on
  // the H200, 2.12 with every block that fits; bench_barrier), at least one per SM, at most what
  // the occupancy allows. Fixed for a given size and device, so the sums are reproducible.
  void size_persistent_grid() {
    int device = 0, cooperative = 0, per_sm = 0;
    RELAX_CUDA_CHECK(cudaGetDevice(&device));
    RELAX_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
    if (!cooperative)
      throw unavailable_error("relax::CG<Operator, " + variant_name() +
                              "> needs cooperative launch, which this device does not support; use relax::Graph or "
                              "relax::Fused");
    RELAX_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persistent_kernel(), detail::dot_block, 0));
    if (per_sm < 1)
      throw unavailable_error("relax::CG<Operator, " + variant_name() +
                              ">: the persistent kernel cannot be resident on this device (occupancy 0); use relax::Graph");
    const std::int64_t sms = current_sm_count();
    const std::int64_t wanted = detail::tile_count(op_.size(), std::int64_t{detail::dot_block} * tuning::cg_persistent_points_per_thread);
    persistent_blocks_ = static_cast<int>(std::clamp<std::int64_t>(wanted, sms, per_sm * sms));
    partials_ = DeviceBuffer<double>(4 * static_cast<std::size_t>(persistent_blocks_));
    barrier_ = DeviceBuffer<detail::GridBarrierState>(1);
    host_barrier_ = PinnedBuffer<detail::GridBarrierState>(1);
  }

  static std::string variant_name() { return single_reduction ? "PersistentSingleReduction" : "Persistent"; }

  static const void* persistent_kernel() {
    if constexpr (single_reduction)
      return reinterpret_cast<const void*>(&detail::cg_persistent_single<T, typename Operator::rows_type>);
    else
      return reinterpret_cast<const void*>(&detail::cg_persistent<T, typename Operator::rows_type>);
  }

  void launch_persistent(T* x, cudaStream_t stream) {
    auto rows = op_.rows();
    std::int64_t n = op_.size();
    detail::CgDeviceState* st = state_.data();
    detail::GridBarrier barrier = fresh_barrier(persistent_blocks_, stream);
    if constexpr (single_reduction) {
      // r, w and s in two arrays each; the host's start left r in r_ (and p = r in p_).
      T* r0 = r_.data();
      T* r1 = m_.data();
      T* w0 = w_.data();
      T* w1 = z_.data();
      T* s0 = s_.data();
      T* s1 = q_.data();
      T* p = p_.data();
      double* partials = partials_.data();
      void* args[] = {&rows, &n, &x, &r0, &r1, &w0, &w1, &s0, &s1, &p, &st, &partials, &barrier};
      RELAX_CUDA_CHECK(cudaLaunchCooperativeKernel(persistent_kernel(), dim3(persistent_blocks_), dim3(detail::dot_block),
                                                   args, 0, stream));
    } else {
      T* r = r_.data();
      T* p0 = p_.data();
      T* p1 = p2_.data();
      T* q = q_.data();
      double* pq_partials = partials_.data();
      double* rr_partials = partials_.data() + persistent_blocks_;
      void* args[] = {&rows, &n, &x, &r, &p0, &p1, &q, &st, &pq_partials, &rr_partials, &barrier};
      RELAX_CUDA_CHECK(cudaLaunchCooperativeKernel(persistent_kernel(), dim3(persistent_blocks_), dim3(detail::dot_block),
                                                   args, 0, stream));
    }
    read_barrier(stream);
  }

  // The grid barrier of a launch of `blocks` blocks (and the test hook's absent ones), zeroed on `stream`.
  detail::GridBarrier fresh_barrier(int blocks, cudaStream_t stream) {
    RELAX_CUDA_CHECK(cudaMemsetAsync(barrier_.data(), 0, sizeof(detail::GridBarrierState), stream));
    return detail::GridBarrier{barrier_.data(), static_cast<unsigned>(blocks) + absent_blocks_, barrier_timeout_ns_};
  }

  // A barrier that did not complete: some blocks may have taken no note of it (they saw the last
  // arrival), so the failure word, not only the status, decides (read with the state).
  void read_barrier(cudaStream_t stream) {
    RELAX_CUDA_CHECK(cudaMemcpyAsync(host_barrier_.data(), barrier_.data(), sizeof(detail::GridBarrierState),
                                     cudaMemcpyDeviceToHost, stream));
  }

  static const char* barrier_kernel_name() {
    if constexpr (grid_resident) return "cg_grid_resident";
    else return single_reduction ? "cg_persistent_single" : "cg_persistent";
  }

  // After the persistent launch's state is read back: throws if a grid barrier timed out.
  void require_barrier_completed() const {
    if (host_barrier_.data()[0].failed != 0)
      throw device_loop_error(std::string(barrier_kernel_name()) +
                              ": a grid barrier did not complete within " + std::to_string(barrier_timeout_ns_ / 1'000'000) +
                              " ms (are all blocks of the cooperative grid resident? another kernel on the device may "
                              "be holding SMs)");
  }

  // ClusterResident: the kernel of `points` unknowns a thread.
  static auto cluster_kernel(int points) {
    using Rows = typename Operator::rows_type;
    switch (points) {
      case 1: return &detail::cg_cluster_resident<T, Rows, 1>;
      case 2: return &detail::cg_cluster_resident<T, Rows, 2>;
      case 4: return &detail::cg_cluster_resident<T, Rows, 4>;
      default: return &detail::cg_cluster_resident<T, Rows, 8>;
    }
  }
  static_assert(tuning::cg_cluster_max_points_per_thread == 8, "cluster_kernel instantiates 1, 2, 4 and 8");

  static bool cluster_launch_supported() {
    int device = 0, major = 0, clusters = 0;
    RELAX_CUDA_CHECK(cudaGetDevice(&device));
    RELAX_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    RELAX_CUDA_CHECK(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, device));
    return major >= 9 && clusters != 0;
  }

  // The largest cluster of `kernel` the device can run (non-portable sizes allowed: 16 on the
  // H200, where 8 is the portable limit). Loads the kernel (no lazy load at the solve).
  template <class Kernel>
  static int largest_cluster(Kernel kernel) {
    cudaFuncAttributes attributes{};
    RELAX_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
    if (attributes.ptxVersion < 90)
      throw unavailable_error("relax::CG<Operator, ClusterResident>: its kernel was compiled for compute capability " +
                              std::to_string(attributes.ptxVersion) +
                              ", below the 9.0 that clusters need; add sm_90 or later to the architectures it is "
                              "built for, or use relax::PersistentSingleReduction");
    RELAX_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(1);
    config.blockDim = dim3(tuning::cg_cluster_threads);
    int largest = 0;
    RELAX_CUDA_CHECK(cudaOccupancyMaxPotentialClusterSize(&largest, kernel, &config));
    return largest;
  }

  // ClusterResident: the fewest unknowns a thread (1, 2, 4, 8) that lets one cluster hold the
  // operator, and so as many blocks (SMs) as the device's largest cluster allows.
  void size_cluster() {
    if (!cluster_launch_supported())
      throw unavailable_error("relax::CG<Operator, ClusterResident> needs thread-block clusters (compute capability "
                              "9.0 or later), which this device does not have; use relax::PersistentSingleReduction");
    const std::int64_t n = op_.size();
    for (int points = 1; points <= tuning::cg_cluster_max_points_per_thread; points *= 2) {
      const auto kernel = cluster_kernel(points);
      const std::int64_t blocks = detail::tile_count(n, std::int64_t{tuning::cg_cluster_threads} * points);
      if (blocks > largest_cluster(kernel)) continue;
      cudaLaunchConfig_t config{};
      cudaLaunchAttribute attribute{};
      cluster_config(config, attribute, static_cast<int>(blocks), nullptr);
      int resident = 0;
      RELAX_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&resident, kernel, &config));
      if (resident < 1)
        throw unavailable_error("relax::CG<Operator, ClusterResident>: a cluster of " + std::to_string(blocks) +
                                " blocks of " + std::to_string(tuning::cg_cluster_threads) +
                                " threads cannot be resident on this device; use relax::PersistentSingleReduction");
      cluster_blocks_ = static_cast<int>(blocks);
      cluster_points_ = points;
      return;
    }
    throw invalid_argument("operator size", std::to_string(n),
                           "at most " + std::to_string(cluster_capacity()) +
                               " unknowns, what relax::ClusterResident keeps on chip in one cluster on this device "
                               "(use relax::PersistentSingleReduction for larger problems)");
  }

  // GridResident: the kernel of `points` unknowns a thread.
  static auto resident_kernel(int points) {
    using Rows = typename Operator::rows_type;
    switch (points) {
      case 1: return &detail::cg_grid_resident<T, Rows, 1>;
      case 2: return &detail::cg_grid_resident<T, Rows, 2>;
      case 4: return &detail::cg_grid_resident<T, Rows, 4>;
      default: return &detail::cg_grid_resident<T, Rows, 8>;
    }
  }
  static_assert(tuning::cg_resident_max_points_per_thread == 8, "resident_kernel instantiates 1, 2, 4 and 8");

  // GridResident: the fewest unknowns a thread (1, 2, 4, 8) that give at most one block per SM
  // (a grid barrier over more blocks costs more: 1.10 µs for 132 blocks, 2.12 for 1056 on the
  // H200); the kernel loaded here (no lazy load at the solve) and checked to be resident with
  // the shared memory of its window.
  void size_resident_grid() {
    int device = 0, cooperative = 0;
    RELAX_CUDA_CHECK(cudaGetDevice(&device));
    RELAX_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
    if (!cooperative)
      throw unavailable_error("relax::CG<Operator, GridResident> needs cooperative launch, which this device does not "
                              "support; use relax::Graph or relax::Fused");
    const std::int64_t n = op_.size(), sms = current_sm_count();
    for (int points = 1; points <= tuning::cg_resident_max_points_per_thread; points *= 2) {
      const std::int64_t blocks = detail::tile_count(n, std::int64_t{tuning::cg_resident_threads} * points);
      if (blocks > sms) continue;
      size_resident_window(points);
      int per_sm = 0;
      RELAX_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &per_sm, resident_kernel(points), tuning::cg_resident_threads, resident_window_bytes()));
      if (per_sm < 1)
        throw unavailable_error("relax::CG<Operator, GridResident>: a block of " +
                                std::to_string(tuning::cg_resident_threads) + " threads at " + std::to_string(points) +
                                " unknowns a thread cannot be resident on this device; use relax::PersistentSingleReduction");
      resident_blocks_ = static_cast<int>(blocks);
      resident_points_ = points;
      partials_ = DeviceBuffer<double>(4 * static_cast<std::size_t>(blocks));
      barrier_ = DeviceBuffer<detail::GridBarrierState>(1);
      host_barrier_ = PinnedBuffer<detail::GridBarrierState>(1);
      return;
    }
    throw invalid_argument("operator size", std::to_string(n),
                           "at most " + std::to_string(resident_capacity()) +
                               " unknowns, what relax::GridResident keeps on chip with one block per SM on this device "
                               "(use relax::PersistentSingleReduction for larger problems)");
  }

  // GridResident: the unknowns of each block's window (see `cg_grid_resident`) that its shared
  // memory holds, all the opt-in limit allows beside the kernel's static shared memory.
  void size_resident_window(int points) {
    const auto kernel = resident_kernel(points);
    cudaFuncAttributes attributes{};
    RELAX_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
    const std::size_t per_unknown = detail::resident_window_arrays * sizeof(T);
    const std::size_t free = detail::shared_bytes_limit() - attributes.sharedSizeBytes;
    resident_window_ = static_cast<int>(std::min<std::size_t>(free / per_unknown, std::numeric_limits<int>::max()));
    const std::int64_t per_block = std::int64_t{tuning::cg_resident_threads} * points;
    if (resident_window_ < per_block)
      throw unavailable_error("relax::CG<Operator, GridResident>: a block's shared memory holds " +
                              std::to_string(resident_window_) + " unknowns of its window, fewer than the " +
                              std::to_string(per_block) + " it owns; use relax::PersistentSingleReduction");
    RELAX_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(resident_window_bytes())));
  }

  // GridResident: the dynamic shared memory of a block's window.
  std::size_t resident_window_bytes() const {
    return static_cast<std::size_t>(resident_window_) * detail::resident_window_arrays * sizeof(T);
  }

  // One cooperative launch for the whole solve from x.
  void launch_resident(const T* b, T* x, cudaStream_t stream) {
    auto rows = op_.rows();
    std::int64_t n = op_.size();
    detail::ResidentVectors<T> published{{p_.data(), m_.data()}, {w_.data(), z_.data()}, {s_.data(), q_.data()}};
    detail::CgDeviceState* st = state_.data();
    auto* partials = reinterpret_cast<double2*>(partials_.data());
    detail::GridBarrier barrier = fresh_barrier(resident_blocks_, stream);
    int capacity = resident_window_;
    void* args[] = {&rows, &n, &x, &b, &published, &st, &partials, &barrier, &capacity};
    RELAX_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(resident_kernel(resident_points_)),
                                                 dim3(resident_blocks_), dim3(tuning::cg_resident_threads), args,
                                                 resident_window_bytes(), stream));
    read_barrier(stream);
  }

  static void cluster_config(cudaLaunchConfig_t& config, cudaLaunchAttribute& attribute, int blocks,
                             cudaStream_t stream) {
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = static_cast<unsigned>(blocks);
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.gridDim = dim3(static_cast<unsigned>(blocks));
    config.blockDim = dim3(tuning::cg_cluster_threads);
    config.dynamicSmemBytes = 0;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
  }

  // One launch for the whole solve; the host's start left r = b − A x in r_.
  void launch_cluster(T* x, cudaStream_t stream) {
    cudaLaunchConfig_t config{};
    cudaLaunchAttribute attribute{};
    cluster_config(config, attribute, cluster_blocks_, stream);
    const T* r = r_.data();
    RELAX_CUDA_CHECK(cudaLaunchKernelEx(&config, cluster_kernel(cluster_points_), op_.rows(), op_.size(), x, r,
                                        state_.data()));
  }

  detail::CgDeviceState read_state(cudaStream_t stream) {
    RELAX_CUDA_CHECK(cudaMemcpyAsync(host_state_.data(), state_.data(), sizeof(detail::CgDeviceState),
                                     cudaMemcpyDeviceToHost, stream));
    RELAX_CUDA_CHECK(cudaStreamSynchronize(stream));
    return host_state_.data()[0];
  }

  // One unfused iteration: q = A p, pq = p·q, x += α p, r −= α q, rr_next = r·r, p = r + β p.
  void iterate(T* x, double* rr, double* rr_next, double* pq, cudaStream_t stream) {
    const std::int64_t n = op_.size();
    const unsigned blocks = detail::vector_blocks(n);
    op_.apply(p_.data(), q_.data(), stream);
    dot(n, p_.data(), q_.data(), pq, dots_, stream);
    detail::cg_axpy<<<blocks, 256, 0, stream>>>(n, rr, pq, 1.0, p_.data(), x, status_.data());
    detail::cg_axpy<<<blocks, 256, 0, stream>>>(n, rr, pq, -1.0, q_.data(), r_.data(), status_.data());
    dot(n, r_.data(), r_.data(), rr_next, dots_, stream);
    detail::cg_xpay<<<blocks, 256, 0, stream>>>(n, rr_next, rr, r_.data(), p_.data(), status_.data());
    RELAX_CUDA_CHECK_LAUNCH();
  }

  // Copies `first` (and `second`, if given) into host_[0], host_[1]; returns the status.
  int read_back(const double* first, const double* second, cudaStream_t stream) {
    RELAX_CUDA_CHECK(cudaMemcpyAsync(host_.data(), first, sizeof(double), cudaMemcpyDeviceToHost, stream));
    if (second)
      RELAX_CUDA_CHECK(cudaMemcpyAsync(host_.data() + 1, second, sizeof(double), cudaMemcpyDeviceToHost, stream));
    RELAX_CUDA_CHECK(cudaMemcpyAsync(host_.data() + 3, status_.data(), sizeof(int), cudaMemcpyDeviceToHost, stream));
    RELAX_CUDA_CHECK(cudaStreamSynchronize(stream));
    int status = 0;
    std::memcpy(&status, host_.data() + 3, sizeof(int));
    return status;
  }

  Operator op_;
  CgOptions options_;
  Stream stream_;
  DeviceBuffer<T> r_, p_, q_;
  DeviceBuffer<double> scalars_;
  DeviceBuffer<int> status_;
  PinnedBuffer<double> host_;
  DotWorkspace dots_;
  // The fused family.
  DeviceBuffer<T> p2_;               // the second direction buffer
  DeviceBuffer<T> w_, m_, z_, s_;    // Pipelined: A r, A w, A s, A p
  DeviceBuffer<detail::CgDeviceState> state_;
  PinnedBuffer<detail::CgDeviceState> host_state_;
  DeviceBuffer<double> partials_;    // Pipelined: two sums per block; Persistent, GridResident: two sums and two parities
  int persistent_blocks_ = 0;
  int cluster_blocks_ = 0, cluster_points_ = 0;  // ClusterResident
  int resident_blocks_ = 0, resident_points_ = 0;  // GridResident
  int resident_window_ = 0;                        // GridResident: unknowns of a block's window in shared memory
  double resident_true_norm_ = 0.0;                // GridResident: ‖b − A x‖ of its last launch
  DeviceBuffer<detail::GridBarrierState> barrier_;  // the persistent and grid-resident variants' grid barrier
  PinnedBuffer<detail::GridBarrierState> host_barrier_;
  static constexpr std::uint64_t default_barrier_timeout_ns = 20'000'000'000ull;  // 20 s: a barrier takes µs
  unsigned absent_blocks_ = 0;  // test hook
  std::uint64_t barrier_timeout_ns_ = default_barrier_timeout_ns;
  detail::GraphExec graphs_[2];      // Graph: starting at an even and at an odd iteration
  const T* graph_x_[2] = {nullptr, nullptr};
};

}  // namespace relax
