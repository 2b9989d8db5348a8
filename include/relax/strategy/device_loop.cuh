#pragma once
//! \file
//! The kernel and the sweeper of `DeviceLoop<SyncTile<X, Y, Rows>>` (the tag is in
//! `device_loop.hpp`): one cooperative kernel per solve.
//!
//! The grid is as many blocks as fit on the device at once (the occupancy API times the SM
//! count), at most one per tile of the walk; each block sweeps its tiles (`walk_tile`, the Sync
//! kernel's per-thread walk), all blocks meet at a bounded grid barrier after every sweep, and
//! every M sweeps they fold the residual of their tiles into one of three norm slots, meet again,
//! and each block reads the slot and takes the same stop decision (`StopCriterion::decide` on the
//! same double). Three slots rotate so the slot a check writes was last read two barriers ago.
//! Block 0 writes the report: sweeps, checks, the last norm, the stop reason, and the norm of
//! every check when a history is kept.
//!
//! The iterates other blocks write during the kernel are read through coherent loads: `u` and the
//! workspace are not `__restrict__` in the kernel (only b, which nobody writes, is read through
//! the non-coherent path; the PTX of this kernel has coherent loads of u although `walk_tile`
//! declares its pointers `__restrict__`); keep it so, and check the PTX after changing the walk. After a `device_loop_error` the contents of `u` are
//! unspecified (a partly swept iterate).

#include <relax/agent/residual.cuh>
#include <relax/agent/vector_walk.cuh>
#include <relax/control/stop.hpp>
#include <relax/core/arith.hpp>
#include <relax/core/buffer.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/core/device.hpp>
#include <relax/core/error.hpp>
#include <relax/core/stream.hpp>
#include <relax/domain/device_grid.hpp>
#include <relax/primitives/grid_barrier.cuh>
#include <relax/primitives/max_norm.cuh>
#include <relax/strategy/device_loop.hpp>
#include <relax/strategy/sync.cuh>
#include <relax/strategy/traits.hpp>

#include <cuda/atomic>

#include <algorithm>
#include <cstdint>
#include <string>

namespace relax {

namespace detail {

//! What the device loop runs: `check_every` sweeps between checks (0: no checks, exactly
//! `stop.max_count` sweeps), stopped by `stop` against `rhs_norm`.
struct DeviceLoopPlan {
  StopCriterion stop;
  double rhs_norm = 0.0;
  std::int64_t check_every = 0;
  std::int64_t history_capacity = 0;        //!< norms kept, one per check (0: none)
  std::uint64_t barrier_timeout_ns = 20'000'000'000ull;  //!< 20 s: a barrier takes microseconds
  unsigned int absent_blocks = 0;           //!< test hook: blocks the barrier waits for in vain
};

//! The device words of one solve: the barrier, the norm slots and the report.
template <class T>
struct DeviceLoopState {
  GridBarrierState barrier;
  arith::bits_t<T> norms[3];
  arith::bits_t<T> last_norm;
  std::int64_t sweeps;
  std::int64_t checks;
  int reason;
};

template <int BlockX, int BlockY, int Rows, class S, class T>
__global__ void __launch_bounds__(BlockX* BlockY)
    persistent_sync_kernel(S s, T* u, T* w, const T* __restrict__ b, Shape g, DeviceLoopPlan plan,
                           DeviceLoopState<T>* state, arith::bits_t<T>* history) {
  using Bits = arith::bits_t<T>;
  const GridBarrier barrier{&state->barrier, gridDim.x + plan.absent_blocks, plan.barrier_timeout_ns};
  const std::int64_t blocks_x = tile_count(g.nx, BlockX * Vec16<T>::width);
  const std::int64_t work = blocks_x * walk_tiles<BlockY, Rows, S::rank>(g);
  const bool leader = blockIdx.x == 0 && threadIdx.x == 0 && threadIdx.y == 0;
  T* src = u;
  T* dst = w;
  std::int64_t sweeps = 0, checks = 0;
  StopReason reason = StopReason::go_on;
  Bits norm = 0;
  bool ok = true;
  while (ok) {
    const std::int64_t batch =
        plan.check_every > 0 ? min(plan.check_every, plan.stop.max_count - sweeps) : plan.stop.max_count;
    for (std::int64_t k = 0; k < batch && ok; ++k) {
      for (std::int64_t item = blockIdx.x; item < work; item += gridDim.x)
        walk_tile<BlockX, BlockY, Rows, S::rank>(
            item % blocks_x, item / blocks_x, src, b, g,
            [&](std::int64_t at, const Vec16<T>& rhs, const VectorStar<T, S::rank>& star) {
              sync_update_vector(s, dst, at, rhs, star);
            });
      T* const swap = src;
      src = dst;
      dst = swap;
      ++sweeps;
      ok = barrier.arrive_and_wait();  // the next sweep, or the residual, reads every block's points
    }
    if (!ok || plan.check_every == 0) break;
    Bits* const slot = &state->norms[checks % 3];
    if (leader) cuda::atomic_ref<Bits, cuda::thread_scope_device>(state->norms[(checks + 1) % 3]).store(0, cuda::memory_order_relaxed);
    Bits best = 0;
    for (std::int64_t item = blockIdx.x; item < work; item += gridDim.x)
      fold_tile_residual<BlockX, BlockY, Rows>(best, item % blocks_x, item / blocks_x, s, src, b, g);
    block_max_into<BlockX, BlockY>(best, slot);
    ok = barrier.arrive_and_wait();
    if (!ok) break;
    norm = cuda::atomic_ref<Bits, cuda::thread_scope_device>(*slot).load(cuda::memory_order_relaxed);
    ++checks;
    if (leader && checks <= plan.history_capacity) history[checks - 1] = norm;
    // Every block decides on the same double, so all leave the loop at the same check.
    reason = plan.stop.decide(static_cast<double>(arith::from_bits<T>(norm)), plan.rhs_norm, sweeps);
    if (reason != StopReason::go_on) break;
  }
  if (leader) {
    state->last_norm = norm;
    state->sweeps = sweeps;
    state->checks = checks;
    state->reason = static_cast<int>(reason);
  }
}

//! What a device loop reports back.
struct DeviceLoopResult {
  std::int64_t sweeps = 0;
  std::int64_t checks = 0;
  double norm = 0.0;  //!< the residual norm at the last check
  StopReason reason = StopReason::go_on;
};

}  // namespace detail

//! The device memory of the device loop (the barrier, norm slots, report and history) and its
//! pinned host mirror; a solver that runs `DeviceLoop` owns one, so a solve allocates nothing.
template <class T>
class DeviceLoopWorkspace {
 public:
  using Bits = arith::bits_t<T>;
  explicit DeviceLoopWorkspace(std::int64_t history_capacity = 0)
      : state_(1), host_(1), history_(static_cast<std::size_t>(std::max<std::int64_t>(history_capacity, 1))),
        host_history_(static_cast<std::size_t>(std::max<std::int64_t>(history_capacity, 1))),
        capacity_(history_capacity) {}

  std::int64_t history_capacity() const { return capacity_; }
  detail::DeviceLoopState<T>* state() { return state_.data(); }
  Bits* history() { return history_.data(); }
  void reset(cudaStream_t stream) {
    RELAX_CUDA_CHECK(cudaMemsetAsync(state_.data(), 0, sizeof(detail::DeviceLoopState<T>), stream));
  }
  //! Copies the report (and `checks` history entries) back and waits for them.
  detail::DeviceLoopResult read(cudaStream_t stream, bool with_history) {
    RELAX_CUDA_CHECK(cudaMemcpyAsync(host_.data(), state_.data(), sizeof(detail::DeviceLoopState<T>),
                                     cudaMemcpyDeviceToHost, stream));
    arrived_.record(stream);
    arrived_.synchronize();
    const detail::DeviceLoopState<T>& s = host_.data()[0];
    if (with_history && capacity_ > 0) {
      const std::int64_t n = std::min(s.checks, capacity_);
      RELAX_CUDA_CHECK(cudaMemcpyAsync(host_history_.data(), history_.data(), static_cast<std::size_t>(n) * sizeof(Bits),
                                       cudaMemcpyDeviceToHost, stream));
      arrived_.record(stream);
      arrived_.synchronize();
    }
    failed_ = s.barrier.failed != 0;
    return {s.sweeps, s.checks, static_cast<double>(arith::from_bits<T>(s.last_norm)), static_cast<StopReason>(s.reason)};
  }
  //! Whether the last loop read back ended at a barrier that did not complete.
  bool failed() const { return failed_; }
  //! The norm of check c (0-based) of the last loop read back with its history.
  double history_norm(std::int64_t c) const {
    return static_cast<double>(arith::from_bits<T>(host_history_.data()[c]));
  }

 private:
  DeviceBuffer<detail::DeviceLoopState<T>> state_;
  PinnedBuffer<detail::DeviceLoopState<T>> host_;
  DeviceBuffer<Bits> history_;
  PinnedBuffer<Bits> host_history_;
  std::int64_t capacity_ = 0;
  Event arrived_;
  bool failed_ = false;
};

template <int BlockX, int BlockY, int Rows>
struct Sweeper<DeviceLoop<SyncTile<BlockX, BlockY, Rows>>> {
  using Tag = SyncTile<BlockX, BlockY, Rows>;

  //! Loads the kernels now: a cooperative launch must not wait on a module load, and the
  //! occupancy query below needs the kernel anyway.
  template <class S, class T>
  static void preload() {
    cudaFuncAttributes attributes{};
    RELAX_CUDA_CHECK(cudaFuncGetAttributes(&attributes, detail::persistent_sync_kernel<BlockX, BlockY, 1, S, T>));
    RELAX_CUDA_CHECK(cudaFuncGetAttributes(&attributes, detail::persistent_sync_kernel<BlockX, BlockY, deep_rows, S, T>));
  }

  //! Runs the device loop of `plan` on `u` (the iterate ends in `u`, its storage exchanged with
  //! `scratch` after an odd number of sweeps) and returns its report.
  //! \throws relax::unavailable_error without cooperative launch; relax::device_loop_error when
  //!         a grid barrier did not complete.
  template <class S, class T>
  static detail::DeviceLoopResult solve(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                                        const detail::DeviceLoopPlan& plan, DeviceLoopWorkspace<T>& workspace,
                                        bool with_history, cudaStream_t stream) {
    static_assert(is_stencil_v<S>, "relax::Sweeper<DeviceLoop>: S is not a stencil (is_stencil_v)");
    static_assert(S::radius == 1, "relax::Sweeper<DeviceLoop>: only radius-1 stencils are supported");
    detail::require_layout(scratch.layout(), u.layout(), "scratch");
    detail::require_layout(b.layout(), u.layout(), "b");
    detail::require_rank(u.layout(), S::rank, "u");
    const detail::Shape g = detail::shape_of(u.layout());
    bool deep = Rows != 1;
    if constexpr (Rows == dynamic) deep = Sweeper<Tag>::template deep_rows_fill_device<S::rank, T>(g);
    if (deep) launch<deep_rows>(s, u, scratch, b, g, plan, workspace, stream);
    else launch<1>(s, u, scratch, b, g, plan, workspace, stream);
    const detail::DeviceLoopResult result = workspace.read(stream, with_history);
    if (workspace.failed())
      throw device_loop_error("persistent_sync_kernel: a grid barrier did not complete within " +
                              std::to_string(plan.barrier_timeout_ns / 1'000'000) +
                              " ms (are all blocks of the cooperative grid resident? another kernel "
                              "on the device may be holding SMs)");
    if (result.sweeps % 2 != 0) u.swap(scratch);
    return result;
  }

  //! `batch.sweeps` sweeps in one launch with grid barriers between them and no check (the batch
  //! interface of every sweeper). It allocates its own report words per call; a solver keeps a
  //! `DeviceLoopWorkspace` and calls `solve` instead.
  template <class S, class T>
  static void run(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                  const Batch& batch, cudaStream_t stream) {
    if (batch.sweeps <= 0) return;
    detail::DeviceLoopPlan plan;
    plan.stop.max_count = batch.sweeps;
    DeviceLoopWorkspace<T> workspace;
    (void)solve(s, u, scratch, b, plan, workspace, false, stream);
  }

 private:
  static constexpr int deep_rows = Rows == dynamic ? tuning::sync_deep_rows : Rows;

  template <int R, class S, class T>
  static void launch(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                     const detail::Shape& g, const detail::DeviceLoopPlan& plan,
                     DeviceLoopWorkspace<T>& workspace, cudaStream_t stream) {
    auto kernel = detail::persistent_sync_kernel<BlockX, BlockY, R, S, T>;
    if (!detail::cached_device_attribute<cudaDevAttrCooperativeLaunch>())
      throw unavailable_error("relax::DeviceLoop needs cooperative launch, which this device does not "
                              "support; use a launch-based strategy such as relax::Sync");
    int per_sm = 0;
    RELAX_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, BlockX * BlockY, 0));
    detail::require(per_sm >= 1, "DeviceLoop<SyncTile>", BlockX * BlockY, "a block that fits on an SM");
    const std::int64_t work = detail::tile_count(g.nx, BlockX * detail::Vec16<T>::width) *
                              detail::walk_tiles<BlockY, R, S::rank>(g);
    const std::int64_t resident = static_cast<std::int64_t>(per_sm) * current_sm_count();
    const unsigned blocks = static_cast<unsigned>(std::max<std::int64_t>(1, std::min(work, resident)));
    workspace.reset(stream);
    S stencil = s;
    T* up = u.origin();
    T* wp = scratch.origin();
    const T* bp = b.origin();
    detail::Shape shape = g;
    detail::DeviceLoopPlan p = plan;
    detail::DeviceLoopState<T>* state = workspace.state();
    arith::bits_t<T>* history = workspace.history();
    void* args[] = {&stencil, &up, &wp, &bp, &shape, &p, &state, &history};
    RELAX_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(blocks),
                                                 dim3(BlockX, BlockY), args, 0, stream));
  }
};

}  // namespace relax
