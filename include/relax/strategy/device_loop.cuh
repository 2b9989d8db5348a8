#pragma once
//! \file
//! The kernels and sweepers of the device loops (the tags are in `device_loop.hpp`): one
//! cooperative kernel per solve.
//!
//! `DeviceLoop<SyncTile<X, Y, Rows>>` (`persistent_sync_kernel`): the grid is as many blocks as
//! fit on the device at once (the occupancy API times the SM count), at most one per tile of the
//! walk; each block sweeps its tiles (`walk_tile`, the Sync kernel's per-thread walk), all blocks
//! meet at a bounded grid barrier after every sweep, and every M sweeps they fold the residual of
//! their tiles into one of three norm slots, meet again, and each block reads the slot and takes
//! the same stop decision (`StopCriterion::decide` on the same double).
//!
//! `DeviceLoop<TemporalBlock<D, ColumnStream>>` (`persistent_stream_kernel`): the grid is as many
//! blocks as can be resident, at most one per work item of the column stream; each pass of up
//! to D exact sweeps streams every item (`stream_strip` in 2D, `stream_planes` in 3D), the blocks
//! meet at the grid barrier after every pass, and checks go as in the Sync loop.
//!
//! `DeviceLoop<BlockAsync<D, Tile>>` (`persistent_tiled_kernel`): the launched block-asynchronous
//! tiles (`agent/tile.cuh`) swept by every resident block in turn, a grid barrier after every
//! pass of up to D local sweeps; the launched strategy's iterates.
//!
//! `DeviceLoop<TemporalBlock<D, OnChip>>` (`on_chip_kernel`): one block per tile, the tile kept
//! in shared memory (`agent/resident_tile.cuh`); batches of up to D sweeps between halo
//! exchanges ordered by per-tile flags; the grid barrier only at checks, split so that one batch
//! runs while it completes (see the kernel).
//!
//! Block 0 writes the report: sweeps, checks, the last norm, the stop reason, where the iterate
//! ended, and the norm of every check when a history is kept.
//!
//! The iterates other blocks write during the kernel are read through coherent loads: `u` and the
//! workspace are not `__restrict__` in the kernels (only b, which nobody writes, is read through
//! the non-coherent path; the PTX of the Sync kernel has coherent loads of u although `walk_tile`
//! declares its pointers `__restrict__`); keep it so, and check the PTX after changing the walk.
//! After a `device_loop_error` the contents of `u` are unspecified (a partly swept iterate).

#include <relax/agent/register_tile.cuh>
#include <relax/agent/resident_tile.cuh>
#include <relax/agent/residual.cuh>
#include <relax/agent/vector_walk.cuh>
#include <relax/control/ladder.hpp>
#include <relax/control/report.hpp>
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
#include <relax/strategy/column_stream.cuh>
#include <relax/strategy/device_loop.hpp>
#include <relax/strategy/sync.cuh>
#include <relax/strategy/tiled.cuh>
#include <relax/strategy/traits.hpp>
#include <relax/strategy/tuning.hpp>

#include <cuda/atomic>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

namespace relax {

namespace detail {

//! What the device loop runs: `check_every` sweeps between checks (0: no checks, exactly
//! `stop.max_count` sweeps), stopped by `stop` against `rhs_norm`.
struct DeviceLoopPlan {
  StopCriterion stop;
  double rhs_norm = 0.0;
  bool rhs_on_device = false;  //!< the kernel computes ‖b‖ itself (rhs_norm is then ignored)
  std::int64_t check_every = 0;
  //! Implicit steps in the launch (the on-chip loop, given a source): step k + 1 starts from the
  //! iterate that ended step k and solves with b = that iterate + source; `stop` applies to each
  //! step, and the launch ends after a step that does not converge.
  int steps = 1;
  std::int64_t history_capacity = 0;        //!< norms kept, one per check of every step (0: none)
  std::uint64_t barrier_timeout_ns = 20'000'000'000ull;  //!< 20 s: a barrier takes microseconds
  unsigned int absent_blocks = 0;           //!< test hook: blocks the barrier waits for in vain
  int silent_tile = -1;                     //!< test hook: an on-chip tile that never raises its flag
  //! Batches of the depth `ladder` gives at the level ρ has reached (`Ladder` on the device), at
  //! most the loop's D; otherwise of D.
  bool laddered = false;
  LadderRule ladder;
};

//! The device words of one launch: the barrier, the norm slots, the steps performed and the
//! time the kernel started.
template <class T>
struct DeviceLoopState {
  GridBarrierState barrier;
  arith::bits_t<T> norms[3];
  int steps_done;
  std::uint64_t start_ns;  //!< the global timer when block 0 started
};

//! The report of one step (one solve) of a device loop, zeroed before the launch.
template <class T>
struct DeviceLoopStepReport {
  arith::bits_t<T> rhs_norm;  //!< ‖b‖∞ when the kernel computes it (every block folds its part)
  arith::bits_t<T> last_norm;
  std::int64_t sweeps;
  std::int64_t checks;
  int reason;
  int in_scratch;       //!< 1: the iterate ended in w
  int level;            //!< the ladder's level at the step's decision (`plan.laddered`)
  std::uint64_t end_ns; //!< the global timer when the step's decision was taken
};

//! What every block of a device loop keeps: the counts, the last norm and the stop reason, and
//! the convergence check they all take part in. Block 0's thread 0 (the leader) writes the
//! history and the report.
//! A launch runs `plan.steps` steps (one solve each): `begin_step` starts the next, and the
//! sweeps and the decision are the step's; the checks are counted over the launch (the norm
//! slots rotate with them and the history is indexed by them). `Laddered`: the kernel may run a
//! ladder (`plan.laddered`); without it the level is not kept (the streamed loop spilled 32 bytes
//! more with it: each kernel that can run a ladder is also built without).
template <class T, bool Laddered = false>
struct DeviceLoopCounters {
  using Bits = arith::bits_t<T>;
  const DeviceLoopPlan& plan;
  DeviceLoopState<T>* state;
  DeviceLoopStepReport<T>* step_report;  //!< the current step's
  Bits* history;
  GridBarrier barrier;
  bool leader;
  int step = -1;
  std::int64_t sweeps = 0, checks = 0;
  std::int64_t first_check = 0;     //!< the checks before this step
  std::int64_t checked_sweeps = 0;  //!< the step's sweeps at the last post
  double rhs_norm;                  //!< ‖b‖ (from the plan, or the kernel's after the step's first check)
  unsigned int token = 0;           //!< the last post's barrier token (thread 0)
  Bits norm = 0;
  StopReason reason = StopReason::go_on;
  int level = 0;                    //!< the ladder's level (`plan.laddered`), from the step's checks

  __device__ DeviceLoopCounters(const DeviceLoopPlan& p, DeviceLoopState<T>* s, DeviceLoopStepReport<T>* reports, Bits* h)
      : plan(p), state(s), step_report(reports - 1), history(h),
        barrier{&s->barrier, gridDim.x + p.absent_blocks, p.barrier_timeout_ns},
        leader(blockIdx.x == 0 && threadIdx.x == 0 && threadIdx.y == 0), rhs_norm(p.rhs_norm) {
    if (leader) state->start_ns = global_ns();
    begin_step();
  }

  //! Starts the next step: no sweeps, no decision, its own ‖b‖.
  __device__ void begin_step() {
    ++step;
    ++step_report;
    sweeps = 0;
    checked_sweeps = 0;
    first_check = checks;
    rhs_norm = plan.rhs_norm;
    norm = 0;
    reason = StopReason::go_on;
    level = 0;
  }

  //! The depth of the next batch: D, or the ladder's depth at the level reached (at most D).
  __device__ int batch_depth(int D) const {
    if constexpr (Laddered) return plan.laddered ? min(D, plan.ladder.depth(level)) : D;
    else return D;
  }

  //! Folds the block's part of ‖b‖ into the step's report (before the step's first post, which
  //! publishes it).
  template <int BlockX, int BlockY>
  __device__ void post_rhs_norm(Bits best) {
    block_max_into<BlockX, BlockY>(best, &step_report->rhs_norm);
  }

  //! Sweeps until the next check (the cap's remainder; all of it when there are no checks).
  __device__ std::int64_t period() const {
    const std::int64_t left = plan.stop.max_count - sweeps;
    return plan.check_every > 0 ? min(plan.check_every, left) : left;
  }

  //! The check: folds the block's partial `best` into this check's norm slot, meets every block
  //! at the barrier, reads the slot and decides (every block on the same double, so all leave
  //! the loop at the same check). False when the barrier failed.
  template <int BlockX, int BlockY>
  __device__ bool check(Bits best) {
    post<BlockX, BlockY>(best);
    return collect();
  }

  //! The first half of a check: folds `best` into the slot of check `checks` and arrives at the
  //! barrier, at `sweeps` sweeps. Three slots rotate: the leader clears the next check's slot,
  //! which every block read at the check before last (before it arrived at the last barrier,
  //! which the leader has passed).
  template <int BlockX, int BlockY>
  __device__ void post(Bits best) {
    post_at<BlockX, BlockY>(best, sweeps);
  }

  //! `post` of the check at `at` sweeps (a loop that folds a check into the pass after it posts
  //! it once that pass is done).
  template <int BlockX, int BlockY>
  __device__ void post_at(Bits best, std::int64_t at) {
    if (leader) cuda::atomic_ref<Bits, cuda::thread_scope_device>(state->norms[(checks + 1) % 3]).store(0, cuda::memory_order_relaxed);
    block_max_into<BlockX, BlockY>(best, &state->norms[checks % 3]);
    checked_sweeps = at;
    token = barrier.arrive();
  }

  //! The second half: waits for every block's post, reads the norm and decides at the sweeps of
  //! the post. False when the barrier failed.
  __device__ bool collect() {
    if (!barrier.wait(token)) return false;
    decide(posted_norm());
    return true;
  }

  //! After the wait of a check: the norm every block folded into this check's slot (and, at the
  //! step's first check with `plan.rhs_on_device`, ‖b‖ from the step's report).
  __device__ Bits posted_norm() {
    if (plan.rhs_on_device && checks == first_check)
      rhs_norm = static_cast<double>(arith::from_bits<T>(
          cuda::atomic_ref<Bits, cuda::thread_scope_device>(step_report->rhs_norm).load(cuda::memory_order_relaxed)));
    return cuda::atomic_ref<Bits, cuda::thread_scope_device>(state->norms[checks % 3]).load(cuda::memory_order_relaxed);
  }

  //! The check's decision on `measured` (the same bits in every block): counts the check, keeps
  //! the history, and sets the stop reason (and the ladder's level).
  __device__ void decide(Bits measured_bits) {
    norm = measured_bits;
    ++checks;
    if (leader && checks <= plan.history_capacity) history[checks - 1] = norm;
    const double measured = static_cast<double>(arith::from_bits<T>(norm));
    reason = plan.stop.decide(measured, rhs_norm, checked_sweeps);
    if constexpr (Laddered)
      if (plan.laddered) level = plan.ladder.advance(level, StopCriterion::relative(measured, rhs_norm));
  }

  //! The leader writes the step's report: `reported_sweeps` sweeps, the iterate in w when
  //! `in_scratch`.
  __device__ void report(std::int64_t reported_sweeps, bool in_scratch = false) const {
    if (!leader) return;
    step_report->last_norm = norm;
    step_report->sweeps = reported_sweeps;
    step_report->checks = checks - first_check;
    step_report->reason = static_cast<int>(reason);
    step_report->in_scratch = in_scratch ? 1 : 0;
    step_report->level = level;
    step_report->end_ns = global_ns();
    state->steps_done = step + 1;
  }
};

//! The loop of the device loops that sweep in passes (Sync, streamed, block-asynchronous, and the
//! multi-sub-domain loop): passes of up to D sweeps (`loop.batch_depth(D)`; the period's
//! remainder shallower), `pass(src, dst, d)` sweeping the block's part of d sweeps from the
//! arrays `src` into `dst` (`first` and `second` to begin with, exchanged after every pass: two
//! arrays, or the numbers of two sets of arrays), a grid barrier after each (the next pass reads
//! the edges of other blocks' parts), and every M sweeps `residual(src)`, the block's part of the
//! residual's max-norm bits, checked by `loop.check<BlockX, BlockY>` (the stop decision every
//! block takes on the same double). Ends with the report (the iterate in `second` after an odd
//! number of passes).
//!
//! `FoldInPass`: `pass(src, dst, d, fold)` takes a fourth argument, where the pass folds the
//! block's part of the residual of `src` (which it reads anyway), or nullptr. A check then costs
//! no pass of its own: the first pass of each period carries the check of the sweeps before it,
//! posted once the pass is done (its arrival is also the pass's barrier); where that check stops
//! the loop, the iterate is the pass's `src` and its `dst`, d sweeps further, is dropped. The
//! check at the sweep cap, which no pass follows, takes `residual(src)`. Iterates, checks and
//! decisions are those of the loop without it.
template <int BlockX, int BlockY, int D, bool FoldInPass = false, class Loop, class Arrays, class Pass,
          class Residual>
__device__ __forceinline__ void run_pass_loop(Loop& loop, const DeviceLoopPlan& plan, Arrays first, Arrays second,
                                              Pass&& pass, Residual&& residual) {
  Arrays src = first;
  Arrays dst = second;
  bool in_scratch = false;
  bool ok = true;
  bool due = false;            // FoldInPass: the check of `src` at `due_at` sweeps rides on the next pass
  std::int64_t due_at = 0;
  while (ok) {
    const std::int64_t period = loop.period();
    for (std::int64_t done = 0; done < period && ok;) {
      const int d = static_cast<int>(min(static_cast<std::int64_t>(loop.batch_depth(D)), period - done));
      bool posted = false;
      if constexpr (FoldInPass) {
        decltype(loop.norm) best = 0;
        pass(src, dst, d, due ? &best : nullptr);
        if (due) {
          due = false;
          posted = true;
          loop.template post_at<BlockX, BlockY>(best, due_at);
          ok = loop.collect();
          if (!ok || loop.reason != StopReason::go_on) {
            loop.report(due_at, in_scratch);
            return;
          }
        }
      } else {
        pass(src, dst, d);
      }
      const Arrays swap = src;
      src = dst;
      dst = swap;
      in_scratch = !in_scratch;
      loop.sweeps += d;
      done += d;
      if (!posted) ok = loop.barrier.arrive_and_wait();
    }
    if (!ok || plan.check_every == 0) break;
    if (FoldInPass && loop.sweeps < plan.stop.max_count) {
      due = true;
      due_at = loop.sweeps;
      continue;
    }
    ok = loop.template check<BlockX, BlockY>(residual(src));
    if (!ok || loop.reason != StopReason::go_on) break;
  }
  loop.report(loop.sweeps, in_scratch);
}

//! `run_pass_loop` on one grid (u, then w), the residual on the Sync walk's tiles (blocks of
//! `BlockX × BlockY`, `Rows` rows or planes a thread); `FoldInPass` as there (then
//! `pass(src, dst, d, fold)`).
template <int BlockX, int BlockY, int Rows, int Rank, int D, bool FoldInPass = false, class S, class T, bool Laddered,
          class Pass>
__device__ __forceinline__ void run_passes(DeviceLoopCounters<T, Laddered>& loop, const DeviceLoopPlan& plan, const S& s, T* u,
                                           T* w, const T* __restrict__ b, const Shape& g, Pass&& pass) {
  const std::int64_t residual_x = tile_count(g.nx, BlockX * Vec16<T>::width);
  const std::int64_t residual_work = residual_x * walk_tiles<BlockY, Rows, Rank>(g);
  run_pass_loop<BlockX, BlockY, D, FoldInPass>(
      loop, plan, u, w, [&](T* src, T* dst, int d, auto... fold) { pass(static_cast<const T*>(src), dst, d, fold...); },
      [&](T* src) {
        arith::bits_t<T> best = 0;
        for (std::int64_t item = blockIdx.x; item < residual_work; item += gridDim.x)
          fold_tile_residual<BlockX, BlockY, Rows>(best, item % residual_x, item / residual_x, s, src, b, g);
        return best;
      });
}

template <int BlockX, int BlockY, int Rows, class S, class T>
__global__ void __launch_bounds__(BlockX* BlockY)
    persistent_sync_kernel(S s, T* u, T* w, const T* __restrict__ b, Shape g, DeviceLoopPlan plan,
                           DeviceLoopState<T>* state, DeviceLoopStepReport<T>* reports, arith::bits_t<T>* history) {
  DeviceLoopCounters<T> loop(plan, state, reports, history);
  const std::int64_t blocks_x = tile_count(g.nx, BlockX * Vec16<T>::width);
  const std::int64_t work = blocks_x * walk_tiles<BlockY, Rows, S::rank>(g);
  run_passes<BlockX, BlockY, Rows, S::rank, 1>(loop, plan, s, u, w, b, g, [&](const T* src, T* dst, int) {
    for (std::int64_t item = blockIdx.x; item < work; item += gridDim.x)
      walk_tile<BlockX, BlockY, Rows, S::rank>(
          item % blocks_x, item / blocks_x, src, b, g,
          [&](std::int64_t at, const Vec16<T>& rhs, const VectorStar<T, S::rank>& star) {
            sync_update_vector(s, dst, at, rhs, star);
          });
  });
}

//! The blocks of the streamed device loop: rank 2, warps of strips side by side; rank 3, the
//! plane queue's warps (the launch-based kernels' blocks).
template <int Rank>
inline constexpr int stream_block_y = Rank == 2 ? stream_warps_per_block : plane_stream_warps;

//! Calls `f(std::integral_constant<int, d>{})` for the depth `d` (1 ≤ d ≤ D) known only at run
//! time: a pass shallower than D (the cap's remainder, checks more often than every D sweeps, or a
//! ladder's level)
//! runs the column stream of its own depth.
template <int K, int D, class F>
__device__ __forceinline__ void with_depth(int d, F&& f) {
  if (d == K) f(std::integral_constant<int, K>{});
  else if constexpr (K < D) with_depth<K + 1, D>(d, f);
}

//! The strip groups (2D) or (x, y) tiles (3D) of a streamed pass of depth `d` across `g`: the
//! work items at one position along the slowest axis.
template <int Rank, int d, class T>
__host__ __device__ __forceinline__ std::int64_t stream_groups(const Shape& g) {
  if constexpr (Rank == 2)
    return tile_count(tile_count(g.nx, strip_kept<d, T>), stream_warps_per_block);
  else
    return tile_count(g.nx, plane_columns_kept<d, T>) * tile_count(g.ny, plane_rows_kept<d>);
}

//! The work items of one streamed pass of depth `d` over `g`: rank 2, `split` items (equal shares
//! of the strip groups' rows, see `stream_strip_item`); rank 3, (x, y) tiles × plane segments
//! `split` planes long.
template <int Rank, int d, class T>
__device__ __forceinline__ std::int64_t stream_items(const Shape& g, std::int64_t split) {
  if constexpr (Rank == 2) return split;
  else return stream_groups<Rank, d, T>(g) * tile_count(g.nz, split);
}

//! Block-level: d exact sweeps of strip group (2D) or (x, y) tile (3D) `group` of u into `out`,
//! stored rows (planes) [y0, y1), as the launch-based kernels do it.
template <int Rank, int d, class S, class T>
__device__ __forceinline__ void stream_group(const S& s, const T* u, T* out, const T* __restrict__ b, const Shape& g,
                                             std::int64_t group, std::int64_t y0, std::int64_t y1, Lane<T>* queue) {
  if constexpr (Rank == 2) {
    const std::int64_t strip = group * stream_warps_per_block + threadIdx.y;
    const std::int64_t x0 = strip * strip_kept<d, T> + 1 - d;
    if (x0 + d > g.nx) return;  // a warp past the last strip (warps work alone in 2D)
    stream_strip<d, tuning::stream_loop_reloads_rhs ? RhsIn::global : RhsIn::registers>(s, u, out, b, g, x0, y0, y1,
                                                                                        threadIdx.x);
  } else {
    const std::int64_t tiles_x = tile_count(g.nx, plane_columns_kept<d, T>);
    const std::int64_t x0 = group % tiles_x * plane_columns_kept<d, T> + 1 - plane_ghost_columns<d, T>;
    const std::int64_t r0 = group / tiles_x * plane_rows_kept<d> + 1 - d;
    stream_planes<d, tuning::plane_stream_split_loops, false>(s, u, out, b, g, PlaneTile{x0, r0, 32, 1}, y0,
                                                                     y1, threadIdx.x, threadIdx.y, queue);
    __syncthreads();  // the next item refills the queue
  }
}

//! Where the single-domain streamed loop keeps b (2D; see `RhsIn` and the tuning constants).
inline constexpr RhsIn stream_loop_rhs = tuning::stream_loop_rhs_ring    ? RhsIn::shared
                                         : tuning::stream_loop_reloads_rhs ? RhsIn::global
                                                                           : RhsIn::registers;

//! Warp-level: `stream_strip` of depth `d` in the streamed loop (b where `stream_loop_rhs` says,
//! the residual folded into `*residual` where `Fold`). A call of its own (not inlined): the
//! streamed loop's state, saved around it, leaves the stream the registers of the launched kernel
//! (inlined, the kernel spilled 124 bytes at 128 registers, 232 with the fold); the fold a
//! separate instantiation, so the passes without it carry none of its code. (The stencil and the
//! box by value: through a reference they would be read from the caller's stack at every row.)
template <int d, bool Fold, class S, class T>
__device__ __noinline__ void stream_strip_call(const S s, const T* u, T* out, const T* __restrict__ b, const Shape g,
                                               std::int64_t x0, std::int64_t y0, std::int64_t y1, Lane<T>* ring,
                                               arith::bits_t<T>* residual) {
  stream_strip<d, stream_loop_rhs>(s, u, out, b, g, x0, y0, y1, threadIdx.x, ring, Fold ? residual : nullptr);
}

//! Warp-level: this warp's strips of 2D work item `item` of a streamed pass of depth `d` split
//! into `split` items. The rows of all strip groups, group after group, are cut into `split` runs
//! of equal length (to a row), so every block has the same work however many groups there are
//! (with whole row segments a group each, the blocks of an SM holding one item more than others
//! set the pass's pace: 3.92 items an SM at 16384², D = 8, four blocks an SM, the busiest SMs
//! four); a run that crosses from one group into the next streams the two parts.
template <int d, bool Fold, class S, class T>
__device__ __forceinline__ void stream_strip_item(const S& s, const T* u, T* out, const T* __restrict__ b,
                                                  const Shape& g, std::int64_t split, std::int64_t item,
                                                  Lane<T>* queue, arith::bits_t<T>* residual) {
  const std::int64_t units = tile_count(tile_count(g.nx, strip_kept<d, T>), stream_warps_per_block) * g.ny;
  const std::int64_t last = share_begin(units, split, item + 1);
  for (std::int64_t at = share_begin(units, split, item); at < last;) {
    const std::int64_t group = at / g.ny;
    const std::int64_t end = min(last, (group + 1) * g.ny);
    const std::int64_t x0 = (group * stream_warps_per_block + threadIdx.y) * strip_kept<d, T> + 1 - d;
    if (x0 + d <= g.nx)  // not a warp past the last strip (warps work alone in 2D)
      stream_strip_call<d, Fold>(s, u, out, b, g, x0, at - group * g.ny + 1, end - group * g.ny + 1,
                                 queue + threadIdx.y * rhs_ring_lanes<d>, residual);
    at = end;
  }
}

//! Block-level: work item `item` of a streamed pass of depth `d` (see `stream_items`): d exact
//! sweeps of its part of u into `out`, as the launch-based kernels do it. (Its own index
//! arithmetic rather than `stream_group`'s, the same numbers: written through `stream_group`
//! the kernel's PTX changed, in 3D throughout, and this is the form measured on the H200.)
template <int Rank, int d, class S, class T>
__device__ __forceinline__ void stream_item(const S& s, const T* u, T* out, const T* __restrict__ b, const Shape& g,
                                            std::int64_t split, std::int64_t item, Lane<T>* queue,
                                            arith::bits_t<T>* residual = nullptr) {
  if constexpr (Rank == 2) {
    if (residual != nullptr) stream_strip_item<d, true>(s, u, out, b, g, split, item, queue, residual);
    else stream_strip_item<d, false>(s, u, out, b, g, split, item, queue, nullptr);
  } else {
    const std::int64_t tiles_x = tile_count(g.nx, plane_columns_kept<d, T>);
    const std::int64_t tiles_y = tile_count(g.ny, plane_rows_kept<d>);
    const std::int64_t x0 = item % tiles_x * plane_columns_kept<d, T> + 1 - plane_ghost_columns<d, T>;
    const std::int64_t y0 = item / tiles_x % tiles_y * plane_rows_kept<d> + 1 - d;
    const std::int64_t z0 = item / (tiles_x * tiles_y) * split + 1;
    stream_planes<d, tuning::plane_stream_split_loops, false>(s, u, out, b, g, PlaneTile{x0, y0, 32, 1}, z0,
                                                                     min(z0 + split, g.nz + 1), threadIdx.x,
                                                                     threadIdx.y, queue);
    __syncthreads();  // the next item refills the queue
  }
}

//! The streamed device loop: every resident block takes the work items of the column stream in
//! turn (item = block, block + grid, ...), a pass of up to D exact sweeps each, and all blocks
//! meet at the grid barrier after every pass (the next pass reads the edges of other blocks'
//! items). Every M sweeps they fold the residual into a norm slot and decide as
//! `persistent_sync_kernel` does: in 2D the first pass after the check folds it from the rows it
//! streams (`run_pass_loop`'s `FoldInPass`), in 3D a pass of its own over the Sync walk's tiles.
//! In 2D a block's item is an equal share of the rows (`stream_strip_item`), each strip's stream
//! a call of its own (`stream_strip_call`, not inlined), so that the loop's state, saved around
//! the call, leaves the stream its registers. The passes between two checks are of depth D and
//! one remainder, so the iterates are those of M Sync sweeps.
//! In 2D the launch bounds set the blocks an SM (`tuning::stream_loop_blocks_per_sm`: three, 168
//! registers); in 3D one block of the plane queue's 8 warps an SM, as launched (its shared memory
//! allows no second).
template <int Rank, int D, bool Laddered, class S, class T>
__global__ void __launch_bounds__(32 * stream_block_y<Rank>, Rank == 2 ? tuning::stream_loop_blocks_per_sm : 1)
    persistent_stream_kernel(S s, T* u, T* w, const T* __restrict__ b, Shape g, std::int64_t split,
                             DeviceLoopPlan plan, DeviceLoopState<T>* state, DeviceLoopStepReport<T>* reports,
                             arith::bits_t<T>* history) {
  extern __shared__ __align__(16) unsigned char queue_bytes[];  // 3D: the plane queue; 2D: the warps' rings of b
  Lane<T>* const queue = reinterpret_cast<Lane<T>*>(queue_bytes);
  DeviceLoopCounters<T, Laddered> loop(plan, state, reports, history);
  constexpr bool fold = Rank == 2;  // the 2D stream folds the checks' residual
  run_passes<32, stream_block_y<Rank>, Rank == 2 ? 8 : 4, Rank, D, fold>(
      loop, plan, s, u, w, b, g, [&](const T* src, T* dst, int d, auto... residual) {
        with_depth<1, D>(d, [&](auto depth) {
          constexpr int dd = decltype(depth)::value;
          const std::int64_t items = stream_items<Rank, dd, T>(g, split);
          for (std::int64_t item = blockIdx.x; item < items; item += gridDim.x)
            stream_item<Rank, dd>(s, src, dst, b, g, split, item, queue, residual...);
        });
      });
}

//! The block-asynchronous device loop: every resident block takes the tiles of the launched
//! `BlockAsync` kernel in turn (`tile_pass`: a one-cell halo frozen at the tile's load, d local
//! sweeps in shared memory), and all blocks meet at the grid barrier after every pass, so each
//! pass reads the last one's iterate as a launch does; checks go as in the Sync loop. The passes
//! between two checks are of depth D and one remainder, as the launched strategy's launches
//! (`for_each_launch`), so the iterates are the launched strategy's, bit for bit.
template <int TileX, int TileY, int TileZ, int D, class S, class T>
__global__ void __launch_bounds__(TileX* TileY)
    persistent_tiled_kernel(S s, T* u, T* w, const T* __restrict__ b, Shape g, DeviceLoopPlan plan,
                            DeviceLoopState<T>* state, DeviceLoopStepReport<T>* reports, arith::bits_t<T>* history) {
  extern __shared__ __align__(16) unsigned char tile_bytes[];
  constexpr int Rank = S::rank;
  DeviceLoopCounters<T> loop(plan, state, reports, history);
  const std::int64_t tiles_x = tile_count(g.nx, TileX), tiles_y = tile_count(g.ny, TileY);
  const std::int64_t tiles = tiles_x * tiles_y * (Rank == 3 ? tile_count(g.nz, TileZ) : 1);
  const int thread = static_cast<int>(threadIdx.y) * TileX + static_cast<int>(threadIdx.x);
  run_passes<TileX, TileY, Rank == 2 ? 8 : 4, Rank, D>(loop, plan, s, u, w, b, g, [&](const T* src, T* dst, int d) {
    for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
      const std::int64_t rest = t / tiles_x;
      const TileOrigin o = tile_origin<Rank>(rest / tiles_y, rest % tiles_y, t % tiles_x, TileX, TileY, TileZ, 1);
      tile_pass<Rank, false>(s, src, dst, b, g, o, TileX, TileY, TileZ, d, reinterpret_cast<T*>(tile_bytes), thread,
                             TileX * TileY);
    }
  });
}

//! The flags of the on-chip device loop: tile t's word holds the number of batches whose frame
//! it has stored. A block waits for the adjacent tiles (up to 8 in 2D, 26 in 3D; thread q of the
//! block watches neighbour q) before it reads their frames, which also tells it that they have
//! read the frames it is about to overwrite (the frames alternate between u and w by batch).
template <int Rank>
struct TileFlags {
  unsigned long long* words;
  int neighbour = -1;  //!< the tile the calling thread watches, or −1

  __device__ TileFlags(unsigned long long* w, const ResidentTiles& tiles, int tile, int thread) : words(w) {
    constexpr int around = Rank == 3 ? 27 : 9;
    if (thread >= around || thread == around / 2) return;
    const int dx = thread % 3 - 1, dy = thread / 3 % 3 - 1, dz = Rank == 3 ? thread / 9 - 1 : 0;
    const int tx = tile % tiles.count_x + dx, ty = tile / tiles.count_x % tiles.count_y + dy;
    const int tz = tile / (tiles.count_x * tiles.count_y) + dz;
    if (tx < 0 || ty < 0 || tz < 0 || tx >= tiles.count_x || ty >= tiles.count_y || tz >= tiles.count_z) return;
    neighbour = (tz * tiles.count_y + ty) * tiles.count_x + tx;
  }

  //! Block-level: waits until every adjacent tile has stored `batches` frames. False when a wait
  //! timed out or another wait of the kernel failed (`failed` is the barrier's failure word).
  __device__ bool wait(unsigned long long batches, int* failed, std::uint64_t timeout_ns) const {
    bool ok = true;
    if (neighbour >= 0) {
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> word(words[neighbour]);
      ok = bounded_wait([&] { return word.load(cuda::memory_order_relaxed) >= batches; }, failed, timeout_ns);
      cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
    }
    return __syncthreads_or(!ok) == 0;
  }

  //! Block-level: tile `tile` has stored `batches` frames (every thread's stores are released).
  //! A `silent` tile (a test hook) stores nothing, so its neighbours' waits time out.
  __device__ void publish(int tile, unsigned long long batches, bool silent = false) const {
    __syncthreads();
    if (threadIdx.x == 0 && !silent) {
      cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device);
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(words[tile]).store(batches, cuda::memory_order_relaxed);
    }
  }
};

//! The on-chip device loop: block t keeps tile t resident (`Agent`: `ResidentTile` in shared
//! memory, `RegisterTile` in registers) for the whole solve.
//! A batch of up to D sweeps runs in shared memory, then the block stores its frame into the
//! array of the batch's parity (w after batch 1, u after batch 2, ...) and raises its flag; the
//! next batch waits for the adjacent flags and reloads the halo.
//!
//! A check reloads the halo and stores the inner cells (the owned cells that are not in the
//! frame) beside the frame, so that array holds the whole iterate of the check, folds the
//! residual of the owned cells and posts the norm (the first half of the grid barrier); an agent
//! that `folds_residual` (`RegisterTile`) folds it in the next batch's first sweep instead, which
//! reads the same neighbourhoods, and posts it before that batch's second sweep (where no batch
//! follows, at the cap, it takes a pass of its own). The block collects the decision before the
//! batch after the check's next: that batch wrote the other array, so if the decision is to stop,
//! the iterate of the check is intact and the batch is dropped; the barrier's latency hides
//! behind it. The report says which array holds the iterate. (`ResidentTile` posting after the
//! first sweep measured 0.98 µs a sweep at 256² against 0.90 posting before the batch.)
//!
//! With a `source` the launch runs `plan.steps` implicit steps (b is then not read): each step
//! loads its tile again from the array X that holds the iterate of the last step's deciding
//! check, forms b = X + source in shared memory, folds ‖b‖, and solves. Its first batch skips
//! a batch number, so it stores into the other array, not X: an adjacent tile may still be
//! loading from X, and it is only the second batch, which waits for that tile's flag of the
//! first, that writes X again.
template <int Rank, int D, class S, class T, class Agent>
__global__ void __launch_bounds__(tuning::resident_threads, 1)
    on_chip_kernel(S s, T* u, T* w, const T* __restrict__ b, const T* __restrict__ source, Shape g,
                   ResidentTiles tiles, DeviceLoopPlan plan, DeviceLoopState<T>* state,
                   DeviceLoopStepReport<T>* reports, unsigned long long* flag_words, arith::bits_t<T>* history) {
  static_assert(tuning::resident_threads >= (Rank == 3 ? 27 : 9),
                "relax: the on-chip loop needs a thread per adjacent tile to watch its flag");
  extern __shared__ __align__(16) unsigned char on_chip_smem[];
  DeviceLoopCounters<T, true> loop(plan, state, reports, history);
  const int tile = static_cast<int>(blockIdx.x);
  const TileFlags<Rank> flags(flag_words, tiles, tile, threadIdx.x);
  Agent agent(tiles, tile, g, reinterpret_cast<T*>(on_chip_smem), threadIdx.x);
  int* const failed = &state->barrier.failed;
  // The frames of batch k are in w for odd k, in u for even k (the iterate before batch 1 is u).
  const auto frames = [&](unsigned long long k) { return k % 2 != 0 ? w : u; };
  unsigned long long batches = 0, checked_batches = 0;
  bool ok = true;
  const T* start = u;  // the array holding the iterate the step starts from
  for (int step = 0; step < plan.steps; ++step) {
    if (step > 0) {
      loop.begin_step();
      start = frames(checked_batches);
      batches = checked_batches + 2;
    }
    agent.load_all(start, b, source, g);
    if (plan.rhs_on_device) {
      arith::bits_t<T> rhs = 0;
      agent.fold_rhs_norm(rhs, s, g);
      loop.template post_rhs_norm<tuning::resident_threads, 1>(rhs);
    }
    bool fresh = true;     // the halo holds the iterate of the last batch
    bool pending = false;  // a check is posted and its decision not yet collected
    bool folding = false;  // the next batch's first sweep folds and posts the check's residual
    // Collects the posted check; true when the loop goes on.
    const auto go_on = [&] {
      pending = false;
      ok = loop.collect();
      return ok && loop.reason == StopReason::go_on;
    };
    for (;;) {
      bool stop = false;
      for (std::int64_t left = loop.period(), batch = 0; left > 0; ++batch) {
        if (pending && batch > 0 && !go_on()) {  // the batch after a check runs before its decision
          stop = true;
          break;
        }
        const int cap = loop.batch_depth(D);
        const int depth = static_cast<int>(left < cap ? left : cap);
        if (!fresh) {
          ok = flags.wait(batches, failed, plan.barrier_timeout_ns);
          if (!ok) break;
          agent.load_halo(frames(batches), g);
        }
        fresh = false;
        if constexpr (Agent::folds_residual) {
          if (folding) {
            agent.template sweeps<true>(s, g, depth, [&](arith::bits_t<T> best) {
              loop.template post<tuning::resident_threads, 1>(best);
            });
            folding = false;
            pending = true;
          } else {
            agent.template sweeps<false>(s, g, depth, [](arith::bits_t<T>) {});
          }
        } else {
          agent.sweeps(s, g, depth);
        }
        agent.store_frame(frames(batches + 1), g);
        flags.publish(tile, ++batches, tile == plan.silent_tile);
        left -= depth;
        loop.sweeps += depth;
      }
      if (!ok || stop) break;
      if (plan.check_every == 0) {
        agent.store_inner(frames(batches), g);
        break;
      }
      if (pending && !go_on()) break;
      ok = flags.wait(batches, failed, plan.barrier_timeout_ns);
      if (!ok) break;
      agent.load_halo(frames(batches), g);
      fresh = true;
      agent.store_inner(frames(batches), g);
      checked_batches = batches;
      if (Agent::folds_residual && loop.period() > 0) {
        folding = true;  // the check's residual comes from the next batch's first sweep
      } else {           // a separate pass, before the next batch or where none follows (the cap)
        arith::bits_t<T> best = 0;
        agent.fold_residual(best, s, g);
        loop.template post<tuning::resident_threads, 1>(best);
        pending = true;
      }
    }
    if (plan.check_every == 0) loop.report(loop.sweeps, batches % 2 != 0);
    else loop.report(loop.checked_sweeps, checked_batches % 2 != 0);
    if (!ok || loop.reason != StopReason::converged) break;
  }
}

//! What a device loop reports back.
struct DeviceLoopResult {
  std::int64_t sweeps = 0;
  std::int64_t checks = 0;
  double norm = 0.0;  //!< the residual norm at the last check
  StopReason reason = StopReason::go_on;
  bool in_scratch = false;  //!< the iterate ended in the scratch grid
  double rhs_norm = 0.0;     //!< ‖b‖ as the kernel computed it (plans with rhs_on_device)
  std::int64_t first_check = 0;  //!< the launch's checks before this step (its first history entry)
  double time_ms = 0.0;      //!< from the step's start to its decision, on the GPU's global timer
  int level = 0;             //!< the ladder's level at the decision (plans with `laddered`)
};

}  // namespace detail

//! The device memory of the device loop (the barrier, norm slots, step reports and history) and
//! its pinned host mirror; a solver that runs `DeviceLoop` owns one, so a solve allocates
//! nothing (a launch of several steps may grow it once, `reserve`).
template <class T>
class DeviceLoopWorkspace {
 public:
  using Bits = arith::bits_t<T>;
  //! Room for one step and `history_capacity` norms. One flag word per block that can be
  //! resident (the on-chip loop's tiles): 32 per SM.
  explicit DeviceLoopWorkspace(std::int64_t history_capacity = 0)
      : state_(1), host_(1), flags_(static_cast<std::size_t>(32 * current_sm_count())) {
    reserve(1, history_capacity);
  }

  //! Makes room for `steps` step reports and `history_capacity` norms (allocates only to grow).
  void reserve(int steps, std::int64_t history_capacity) {
    detail::require(steps >= 1, "steps", steps, "at least 1 step");
    if (static_cast<std::size_t>(steps) > reports_.size()) {
      reports_ = DeviceBuffer<detail::DeviceLoopStepReport<T>>(static_cast<std::size_t>(steps));
      host_reports_ = PinnedBuffer<detail::DeviceLoopStepReport<T>>(static_cast<std::size_t>(steps));
    }
    if (history_capacity > capacity_ || history_.size() == 0) {
      const auto size = static_cast<std::size_t>(std::max<std::int64_t>(history_capacity, 1));
      history_ = DeviceBuffer<Bits>(size);
      host_history_ = PinnedBuffer<Bits>(size);
      capacity_ = std::max(capacity_, history_capacity);
    }
  }

  std::int64_t history_capacity() const { return capacity_; }
  int step_capacity() const { return static_cast<int>(reports_.size()); }
  detail::DeviceLoopState<T>* state() { return state_.data(); }
  detail::DeviceLoopStepReport<T>* reports() { return reports_.data(); }
  Bits* history() { return history_.data(); }
  //! Zeroes the launch's words and the reports of `steps` steps on `stream`.
  void reset(cudaStream_t stream, int steps = 1) {
    detail::require(steps >= 1 && steps <= step_capacity(), "steps", steps, "at most the reserved steps");
    RELAX_CUDA_CHECK(cudaMemsetAsync(state_.data(), 0, sizeof(detail::DeviceLoopState<T>), stream));
    RELAX_CUDA_CHECK(cudaMemsetAsync(reports_.data(), 0, static_cast<std::size_t>(steps) * sizeof(detail::DeviceLoopStepReport<T>),
                                     stream));
    launched_steps_ = steps;
  }
  //! The first `tiles` flag words, zeroed on `stream`.
  unsigned long long* tile_flags(int tiles, cudaStream_t stream) {
    detail::require(tiles >= 1 && static_cast<std::size_t>(tiles) <= flags_.size(), "tiles", tiles,
                    "at most 32 per SM (one flag word each)");
    RELAX_CUDA_CHECK(cudaMemsetAsync(flags_.data(), 0, static_cast<std::size_t>(tiles) * sizeof(unsigned long long), stream));
    return flags_.data();
  }
  //! Copies the launch's words and the reports of the steps it was launched for back in one
  //! wait (and then the norms of their checks, in a second), and returns the first step's report.
  detail::DeviceLoopResult read(cudaStream_t stream, bool with_history) {
    enqueue_copy(host_.data(), state_.data(), 1, stream);
    enqueue_copy(host_reports_.data(), reports_.data(), static_cast<std::size_t>(launched_steps_), stream);
    wait(stream);
    const detail::DeviceLoopState<T>& s = host_.data()[0];
    failed_ = s.barrier.failed != 0;
    steps_done_ = std::clamp(s.steps_done, 1, launched_steps_);
    if (with_history && capacity_ > 0) {
      std::int64_t checks = 0;
      for (int k = 0; k < steps_done_; ++k) checks += host_reports_.data()[k].checks;
      if (checks > 0) {
        enqueue_copy(host_history_.data(), history_.data(), static_cast<std::size_t>(std::min(checks, capacity_)), stream);
        wait(stream);
      }
    }
    return result(0);
  }
  //! Steps the last launch read back performed (at least 1).
  int steps_done() const { return steps_done_; }
  //! The report of step `k` of the last launch read back.
  detail::DeviceLoopResult result(int k) const {
    const detail::DeviceLoopStepReport<T>* r = host_reports_.data();
    std::int64_t first_check = 0;
    for (int j = 0; j < k; ++j) first_check += r[j].checks;
    const std::uint64_t began = k == 0 ? host_.data()[0].start_ns : r[k - 1].end_ns;
    const double ms = r[k].end_ns > began ? static_cast<double>(r[k].end_ns - began) * 1e-6 : 0.0;
    return {r[k].sweeps,
            r[k].checks,
            static_cast<double>(arith::from_bits<T>(r[k].last_norm)),
            static_cast<StopReason>(r[k].reason),
            r[k].in_scratch != 0,
            static_cast<double>(arith::from_bits<T>(r[k].rhs_norm)),
            first_check,
            ms,
            r[k].level};
  }
  //! What a sweeper worked out for launching `kernel` on `device` for a grid of these extents,
  //! kept so the next solve of the same kind skips the host queries (the tiling, shared memory,
  //! occupancy).
  struct LaunchCache {
    const void* kernel = nullptr;
    int device = -1;
    std::int64_t nx = -1, ny = -1, nz = -1;
    detail::ResidentTiles tiles;
    std::size_t shared_bytes = 0;
    bool matches(const void* k, int d, const detail::Shape& g) const {
      return kernel == k && device == d && nx == g.nx && ny == g.ny && nz == g.nz;
    }
  };
  LaunchCache& launch_cache() { return cache_; }

  //! Whether the last loop read back ended at a barrier that did not complete.
  bool failed() const { return failed_; }
  //! The norm of check c (0-based, counted over the launch) of the last loop read back with its
  //! history.
  double history_norm(std::int64_t c) const {
    return static_cast<double>(arith::from_bits<T>(host_history_.data()[c]));
  }

 private:
  template <class V>
  static void enqueue_copy(V* to, const V* from, std::size_t count, cudaStream_t stream) {
    RELAX_CUDA_CHECK(cudaMemcpyAsync(to, from, count * sizeof(V), cudaMemcpyDeviceToHost, stream));
  }
  void wait(cudaStream_t stream) {
    arrived_.record(stream);
    arrived_.synchronize();
  }

  DeviceBuffer<detail::DeviceLoopState<T>> state_;
  PinnedBuffer<detail::DeviceLoopState<T>> host_;
  DeviceBuffer<detail::DeviceLoopStepReport<T>> reports_;
  PinnedBuffer<detail::DeviceLoopStepReport<T>> host_reports_;
  DeviceBuffer<Bits> history_;
  PinnedBuffer<Bits> host_history_;
  DeviceBuffer<unsigned long long> flags_;
  LaunchCache cache_;
  std::int64_t capacity_ = 0;
  int steps_done_ = 1;
  int launched_steps_ = 1;  // the reports `reset` zeroed, which `read` copies back
  Event arrived_;
  bool failed_ = false;
};

namespace detail {

//! A device loop's report of one solve as the host loop's: ‖b‖ `rhs_norm`, and with
//! `record_history` the norm of every check from `workspace` (checks every `check_every` sweeps,
//! the last at the cap `max_sweeps`).
template <class T>
SolveReport device_loop_report(const DeviceLoopResult& r, double rhs_norm, std::int64_t check_every,
                               std::int64_t max_sweeps, bool record_history, const DeviceLoopWorkspace<T>& workspace) {
  SolveReport report;
  report.rhs_norm = rhs_norm;
  report.sweeps = r.sweeps;
  report.checks = r.checks;
  report.rho = StopCriterion::relative(r.norm, rhs_norm);
  report.status = to_solve_status(r.reason);
  if (record_history)
    for (std::int64_t c = 0; c < r.checks && r.first_check + c < workspace.history_capacity(); ++c)
      report.history.push_back({std::min((c + 1) * check_every, max_sweeps),
                                StopCriterion::relative(workspace.history_norm(r.first_check + c), rhs_norm)});
  return report;
}

template <class T>
struct same_type {
  using type = T;
};
//! Launches `kernel` cooperatively with `args` (converted to the kernel's parameter types).
template <class... Params>
void launch_cooperative(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes, cudaStream_t stream,
                        typename same_type<Params>::type... args) {
  void* pointers[] = {static_cast<void*>(&args)...};
  RELAX_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), grid, block, pointers,
                                               shared_bytes, stream));
}

//! \throws relax::unavailable_error naming `who` and the way out `instead` when the current
//!         device has no cooperative launch.
inline void require_cooperative_launch(const char* who, const char* instead) {
  if (!cached_device_attribute<cudaDevAttrCooperativeLaunch>())
    throw unavailable_error(std::string(who) + " needs cooperative launch, which this device does not support; use " +
                            instead);
}

//! What every device-loop sweeper checks first: a radius-1 stencil, grids of one layout, and a
//! device with cooperative launch.
template <class S, class T>
void require_device_loop_call(const DeviceGrid<T>& u, const DeviceGrid<T>& scratch, const DeviceGrid<T>& b) {
  static_assert(is_stencil_v<S>, "relax::Sweeper<DeviceLoop>: S is not a stencil (is_stencil_v)");
  static_assert(S::radius == 1, "relax::Sweeper<DeviceLoop>: only radius-1 stencils are supported");
  require_layout(scratch.layout(), u.layout(), "scratch");
  require_layout(b.layout(), u.layout(), "b");
  require_swept_grid(u.layout(), S::rank, "u");
  require_cooperative_launch("relax::DeviceLoop", "a launch-based strategy such as relax::Sync");
}

//! What a loop that runs one solve per launch, with ‖b‖ from the host, accepts of a plan.
inline void require_one_solve_plan(const DeviceLoopPlan& plan, const std::string& loop) {
  require(!plan.rhs_on_device, "plan.rhs_on_device", "true", ("false: " + loop + " takes ||b|| from the plan").c_str());
  require(plan.steps == 1, "plan.steps", plan.steps, ("1: " + loop + " runs one solve per launch").c_str());
}

//! A ladder on the device (`plan.laddered`) runs depths from 1 to the loop's D.
inline void require_ladder_within(const DeviceLoopPlan& plan, int D, const std::string& loop) {
  if (!plan.laddered) return;
  for (int d : plan.ladder.depths)
    require(d >= 1 && d <= D, "Ladder::depths", d, ("depths from 1 to the loop's D (" + loop + ")").c_str());
}

//! Reads the report back; throws `device_loop_error` naming `what` (the kernel and its wait)
//! when a wait did not complete.
template <class T>
DeviceLoopResult read_device_loop(DeviceLoopWorkspace<T>& workspace, bool with_history, const DeviceLoopPlan& plan,
                                  const char* what, cudaStream_t stream) {
  const DeviceLoopResult result = workspace.read(stream, with_history);
  if (workspace.failed())
    throw device_loop_error(std::string(what) + " did not complete within " +
                            std::to_string(plan.barrier_timeout_ns / 1'000'000) +
                            " ms (are all blocks of the cooperative grid resident? another kernel on the "
                            "device may be holding SMs)");
  return result;
}

//! The blocks of `kernel` (of `threads` threads and `bytes` of dynamic shared memory) that can be
//! resident on the current device at once (the occupancy API times the SM count).
//! \throws relax::invalid_argument naming `what` when not one fits on an SM.
template <class Kernel>
std::int64_t resident_blocks(Kernel kernel, int threads, std::size_t bytes, const char* what) {
  int per_sm = 0;
  RELAX_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, bytes));
  require(per_sm >= 1, what, threads, "a block that fits on an SM");
  return static_cast<std::int64_t>(per_sm) * current_sm_count();
}

//! Launches a device loop's `kernel` cooperatively on as many blocks as there are work items, at
//! most `resident`, with `args`; reads its report back (a wait that did not complete throws
//! `device_loop_error` naming `what`) and leaves the iterate in `u`.
template <class T, class... Params, class... Args>
DeviceLoopResult launch_device_loop(void (*kernel)(Params...), std::int64_t work, std::int64_t resident, dim3 block,
                                    std::size_t bytes, DeviceGrid<T>& u, DeviceGrid<T>& scratch,
                                    const DeviceLoopPlan& plan, DeviceLoopWorkspace<T>& workspace, bool with_history,
                                    const char* what, cudaStream_t stream, const Args&... args) {
  const unsigned blocks = static_cast<unsigned>(std::max<std::int64_t>(1, std::min(work, resident)));
  workspace.reset(stream);
  launch_cooperative(kernel, dim3(blocks), block, bytes, stream, args...);
  const DeviceLoopResult result = read_device_loop(workspace, with_history, plan, what, stream);
  if (result.in_scratch) u.swap(scratch);
  return result;
}

//! The batch interface of a device-loop sweeper (`Loop`, which derives from it): `batch.sweeps`
//! sweeps in one launch with no check. It allocates its own report words per call; a solver
//! keeps a `DeviceLoopWorkspace` and calls `Loop::solve` instead.
template <class Loop>
struct DeviceLoopBatches {
  template <class S, class T>
  static void run(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b, const Batch& batch,
                  cudaStream_t stream) {
    if (batch.sweeps <= 0) return;
    DeviceLoopPlan plan;
    plan.stop.max_count = batch.sweeps;
    DeviceLoopWorkspace<T> workspace;
    (void)Loop::solve(s, u, scratch, b, plan, workspace, false, stream);
  }
};
}  // namespace detail

template <int BlockX, int BlockY, int Rows>
struct Sweeper<DeviceLoop<SyncTile<BlockX, BlockY, Rows>>>
    : detail::DeviceLoopBatches<Sweeper<DeviceLoop<SyncTile<BlockX, BlockY, Rows>>>> {
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
    detail::require_device_loop_call<S>(u, scratch, b);
    detail::require_one_solve_plan(plan, "DeviceLoop<Sync>");
    detail::require(!plan.laddered, "plan.laddered", "true", "false: DeviceLoop<Sync> has no depth for a ladder to set");
    const detail::Shape g = detail::shape_of(u.layout());
    bool deep = Rows != 1;
    if constexpr (Rows == dynamic) deep = Sweeper<Tag>::template deep_rows_fill_device<S::rank, T>(g);
    return deep ? launch<deep_rows>(s, u, scratch, b, g, plan, workspace, with_history, stream)
                : launch<1>(s, u, scratch, b, g, plan, workspace, with_history, stream);
  }

 private:
  static constexpr int deep_rows = Rows == dynamic ? tuning::sync_deep_rows : Rows;

  template <int R, class S, class T>
  static detail::DeviceLoopResult launch(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                                         const detail::Shape& g, const detail::DeviceLoopPlan& plan,
                                         DeviceLoopWorkspace<T>& workspace, bool with_history, cudaStream_t stream) {
    auto kernel = detail::persistent_sync_kernel<BlockX, BlockY, R, S, T>;
    const std::int64_t work = detail::tile_count(g.nx, BlockX * detail::Vec16<T>::width) *
                              detail::walk_tiles<BlockY, R, S::rank>(g);
    return detail::launch_device_loop(kernel, work, detail::resident_blocks(kernel, BlockX * BlockY, 0, "DeviceLoop<SyncTile>"),
                                      dim3(BlockX, BlockY), 0, u, scratch, plan, workspace, with_history,
                                      "persistent_sync_kernel: a grid barrier", stream, s, u.origin(), scratch.origin(),
                                      b.origin(), g, plan, workspace.state(), workspace.reports(), workspace.history());
  }
};

//! The streamed device loop: the column stream of `TemporalBlock<D, ColumnStream>` inside one
//! cooperative launch, as many blocks as can be resident (at most one per work item): in 2D the
//! strip groups' rows split into one equal share a block, in 3D the planes into segments so that
//! the items of a pass fill the resident blocks about once (fewer segments, fewer warm-up rows).
template <int D>
struct Sweeper<DeviceLoop<TemporalBlock<D, ColumnStream>>>
    : detail::DeviceLoopBatches<Sweeper<DeviceLoop<TemporalBlock<D, ColumnStream>>>> {
  static constexpr bool takes_ladder = true;  //!< plans with `laddered` (Ladder on the device)
  template <class S, class T>
  static void preload() {
    cudaFuncAttributes attributes{};
    RELAX_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel<S, T>(false)));
    RELAX_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel<S, T>(true)));
  }

  //! Runs the device loop of `plan` on `u` (the iterate ends in `u`, its storage exchanged with
  //! `scratch` after an odd number of passes) and returns its report.
  //! \throws relax::invalid_argument in 3D when the plane queue of depth D does not fit in a
  //!         block's shared memory; relax::unavailable_error without cooperative launch;
  //!         relax::device_loop_error when a grid barrier did not complete.
  template <class S, class T>
  static detail::DeviceLoopResult solve(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                                        const detail::DeviceLoopPlan& plan, DeviceLoopWorkspace<T>& workspace,
                                        bool with_history, cudaStream_t stream) {
    detail::require_device_loop_call<S>(u, scratch, b);
    detail::require_one_solve_plan(plan, "DeviceLoop<TemporalBlock<D, ColumnStream>>");
    detail::require_ladder_within(plan, D, "DeviceLoop<TemporalBlock<" + std::to_string(D) + ", ColumnStream>>");
    const detail::Shape g = detail::shape_of(u.layout());
    auto k = kernel<S, T>(plan.laddered);
    const std::size_t bytes = S::rank == 3 ? detail::plane_stream_shared_bytes<T>(D)
                              : tuning::stream_loop_rhs_ring
                                  ? sizeof(detail::Lane<T>) * detail::rhs_ring_lanes<D> * detail::stream_warps_per_block
                                  : 0;
    if constexpr (S::rank == 3) {
      cudaFuncAttributes attributes{};
      RELAX_CUDA_CHECK(cudaFuncGetAttributes(&attributes, k));
      if (bytes + attributes.sharedSizeBytes > detail::shared_bytes_limit())
        throw invalid_argument("D", std::to_string(D),
                               "a depth whose plane queue fits in a block's shared memory (DeviceLoop<TemporalBlock<D, "
                               "ColumnStream>> in 3D: D = " +
                                   std::to_string(Sweeper<TemporalBlock<D, ColumnStream>>::template deepest_depth<S, T>()) +
                                   " at most on this device)");
      detail::require_plane_stream_layout<D>(u, scratch, b);
      if (bytes > 48 * 1024)
        RELAX_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    }
    const std::int64_t resident = detail::resident_blocks(k, threads<S>, bytes, "DeviceLoop<TemporalBlock<D, ColumnStream>>");
    const auto [split, items] = work<S, T>(g, resident);
    return detail::launch_device_loop(k, items, resident, dim3(32, detail::stream_block_y<S::rank>), bytes, u, scratch,
                                      plan, workspace, with_history, "persistent_stream_kernel: a grid barrier", stream,
                                      s, u.origin(), scratch.origin(), b.origin(), g, split, plan, workspace.state(),
                                      workspace.reports(), workspace.history());
  }

  //! How a pass of depth D over `g` is split for `resident` blocks (the kernel's `split`), and the
  //! pass's work items: 2D, as many items as blocks, equal shares of the strip groups' rows, each
  //! at least 4 D rows long on average; 3D, segments of `plane_segments`' choice of planes.
  template <class S, class T>
  static std::pair<std::int64_t, std::int64_t> work(const detail::Shape& g, std::int64_t resident) {
    const std::int64_t groups = detail::stream_groups<S::rank, D, T>(g);
    if constexpr (S::rank == 2) {
      const std::int64_t items = std::clamp<std::int64_t>(resident, 1, std::max<std::int64_t>(1, groups * g.ny / (4 * D)));
      return {items, items};
    } else {
      const std::int64_t segment = detail::tile_count(g.nz, detail::plane_segments(groups, g.nz, D, resident));
      return {segment, groups * detail::tile_count(g.nz, segment)};
    }
  }

 private:
  template <class S>
  static constexpr int threads = 32 * detail::stream_block_y<S::rank>;
  // The kernel built with the ladder's level, or without.
  template <class S, class T>
  static auto kernel(bool laddered) {
    return laddered ? detail::persistent_stream_kernel<S::rank, D, true, S, T>
                    : detail::persistent_stream_kernel<S::rank, D, false, S, T>;
  }
};

//! The block-asynchronous device loop: as many blocks as can be resident, at most one per tile.
template <int D, int X, int Y, int Z>
struct Sweeper<DeviceLoop<BlockAsync<D, Tile<X, Y, Z>>>>
    : detail::DeviceLoopBatches<Sweeper<DeviceLoop<BlockAsync<D, Tile<X, Y, Z>>>>> {
  template <class S, class T>
  static void preload() {
    cudaFuncAttributes attributes{};
    RELAX_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel<S, T>()));
  }

  //! Runs the device loop of `plan` on `u` (the iterate ends in `u`, its storage exchanged with
  //! `scratch` after an odd number of passes) and returns its report.
  //! \throws relax::unavailable_error without cooperative launch; relax::device_loop_error when
  //!         a grid barrier did not complete.
  template <class S, class T>
  static detail::DeviceLoopResult solve(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                                        const detail::DeviceLoopPlan& plan, DeviceLoopWorkspace<T>& workspace,
                                        bool with_history, cudaStream_t stream) {
    detail::require_device_loop_call<S>(u, scratch, b);
    detail::require_one_solve_plan(plan, "DeviceLoop<BlockAsync<D, Tile>>");
    detail::require(!plan.laddered, "plan.laddered", "true",
                    "false: DeviceLoop<BlockAsync<D, Tile>> runs its fixed D (a ladder would change its iterates)");
    const detail::Shape g = detail::shape_of(u.layout());
    auto k = kernel<S, T>();
    const std::size_t bytes = detail::tile_shared_bytes<S::rank, T>(X, Y, Z, 1);
    detail::require(bytes <= detail::shared_bytes_limit(), "Tile", X * Y, "a tile whose halo fits in shared memory");
    if (bytes > 48 * 1024)
      RELAX_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    const std::int64_t tiles = detail::tile_count(g.nx, X) * detail::tile_count(g.ny, Y) *
                               (S::rank == 3 ? detail::tile_count(g.nz, Z) : 1);
    return detail::launch_device_loop(k, tiles, detail::resident_blocks(k, X * Y, bytes, "DeviceLoop<BlockAsync<D, Tile>>"),
                                      dim3(X, Y), bytes, u, scratch, plan, workspace, with_history,
                                      "persistent_tiled_kernel: a grid barrier", stream, s, u.origin(), scratch.origin(),
                                      b.origin(), g, plan, workspace.state(), workspace.reports(), workspace.history());
  }

 private:
  template <class S, class T>
  static auto kernel() {
    return detail::persistent_tiled_kernel<X, Y, Z, D, S, T>;
  }
};

namespace detail {

//! What the two resident device loops differ in: the agent, the shared memory a block asks for,
//! and the limit on a tile's region. `shared_limit` is a callable that returns the dynamic shared
//! memory a block may ask for (a query of the kernel's attributes, made only where it limits).
template <class Where>
struct ResidentKind;

//! `OnChip`: the tile in shared memory (`ResidentTile`), its region limited by what a block's
//! shared memory holds (three arrays of T and a class byte a cell, rows padded to vectors).
template <>
struct ResidentKind<OnChip> {
  static constexpr const char* name = "OnChip";
  template <int Rank, class T>
  using Agent = ResidentTile<Rank, tuning::resident_threads, T>;
  template <int Rank, class T, class Limit>
  static ResidentTiles choose(const Shape& g, int halo, Limit shared_limit) {
    return choose_resident_tiles<Rank>(g.nx, g.ny, Rank == 3 ? g.nz : 1, halo, current_sm_count(),
                                       static_cast<std::int64_t>(shared_limit() / (3 * sizeof(T) + 1)), Vec16<T>::width);
  }
  template <int Rank, class T>
  static std::size_t shared_bytes(const ResidentTiles& t) {
    return ResidentLayout<Rank, T>(t.template region<Rank>()).shared_bytes();
  }
  template <int Rank, class T, class Limit>
  static std::string limit(Limit shared_limit) {
    return "at most " + std::to_string(shared_limit() / (3 * sizeof(T) + 1)) + " cells of shared memory";
  }
};

//! `InRegisters` (2D): the tile in the threads' registers (`RegisterTile`), its region limited
//! to the agent's frame.
template <>
struct ResidentKind<InRegisters> {
  static constexpr const char* name = "InRegisters";
  template <int Rank, class T>
  using Agent = RegisterTile<tuning::resident_threads, tuning::register_tile_rows, T>;
  template <int Rank, class T, class Limit>
  static ResidentTiles choose(const Shape& g, int halo, Limit) {
    static_assert(Rank == 2, "relax: TemporalBlock<D, InRegisters> runs 2D stencils only");
    using A = Agent<Rank, T>;
    return choose_resident_tiles<2>(g.nx, g.ny, 1, halo, current_sm_count(),
                                    static_cast<std::int64_t>(A::frame_x) * A::frame_y, 1, A::frame_x, A::frame_y);
  }
  template <int Rank, class T>
  static std::size_t shared_bytes(const ResidentTiles&) {
    return Agent<Rank, T>::shared_bytes;
  }
  template <int Rank, class T, class Limit>
  static std::string limit(Limit) {
    return "at most " + std::to_string(Agent<Rank, T>::frame_x) + " x " + std::to_string(Agent<Rank, T>::frame_y) +
           " cells (a block's registers)";
  }
};

//! The resident device loops, `DeviceLoop<TemporalBlock<D, OnChip>>` and
//! `DeviceLoop<TemporalBlock<D, InRegisters>>`: one block per tile, the tiles chosen at launch
//! (`choose_resident_tiles`) so that every block's region fits where its agent keeps it, and
//! every block is resident.
template <int D, class Where>
struct ResidentLoopSweeper : DeviceLoopBatches<ResidentLoopSweeper<D, Where>> {
  using Kind = ResidentKind<Where>;
  static constexpr int threads = tuning::resident_threads;
  static constexpr bool rhs_norm_on_device = true;  //!< the kernel computes ‖b‖ (plan.rhs_on_device)
  static constexpr bool fuses_steps = true;         //!< `solve_steps`: several implicit steps per launch
  static constexpr bool takes_ladder = true;        //!< plans with `laddered` (Ladder on the device)

  template <class S, class T>
  static void preload() {
    cudaFuncAttributes attributes{};
    RELAX_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel<S, T>()));
  }

  //! Whether a grid of `e` fits on chip on the current device (a tiling exists).
  template <class S, class T>
  static bool fits(const Extents& e) {
    Shape g;
    g.nx = e.nx;
    g.ny = e.ny;
    g.nz = S::rank == 3 ? e.nz : 1;
    return Kind::template choose<S::rank, T>(g, D, dynamic_shared_limit<S, T>).found();
  }

  //! The tiling the kernel runs on `g` here, or an error naming the limits when the grid does
  //! not fit on chip.
  //! \throws relax::invalid_argument when no tiling fits.
  template <class S, class T>
  static ResidentTiles tiles(const Shape& g) {
    const auto limit = dynamic_shared_limit<S, T>;
    const ResidentTiles t = Kind::template choose<S::rank, T>(g, D, limit);
    if (!t.found())
      throw invalid_argument(
          "extents of u", std::to_string(g.nx) + " x " + std::to_string(g.ny) + (S::rank == 3 ? " x " + std::to_string(g.nz) : ""),
          "a grid that fits on chip for " + loop_name() + ": one tile per SM (" + std::to_string(current_sm_count()) +
              " SMs), each with its " + std::to_string(D) + "-cell halo in " + Kind::template limit<S::rank, T>(limit) +
              "; use DeviceLoop<Sync> or a launch-based strategy");
    return t;
  }

  //! Runs the device loop of `plan` on `u` (the iterate ends in `u`, its storage exchanged with
  //! `scratch` when the kernel says it ended there) and returns its report.
  //! \throws relax::invalid_argument when the grid does not fit on chip; relax::unavailable_error
  //!         without cooperative launch; relax::device_loop_error when a wait did not complete.
  template <class S, class T>
  static DeviceLoopResult solve(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                                const DeviceLoopPlan& plan, DeviceLoopWorkspace<T>& workspace, bool with_history,
                                cudaStream_t stream) {
    require_device_loop_call<S>(u, scratch, b);
    require(plan.steps == 1, "plan.steps", plan.steps, "1 (several steps take a source: solve_steps)");
    return launch(s, u, scratch, b.origin(), static_cast<const T*>(nullptr), plan, workspace, with_history, stream);
  }

  //! Runs `plan.steps` implicit steps in one launch: step k solves A u = uᵏ + source from uᵏ,
  //! the iterate that ended step k − 1 (u for the first), with b formed and ‖b‖ computed on the
  //! device; it stops after a step that does not converge. The iterate of the last step performed
  //! ends in `u` (its storage exchanged with `scratch` when it ended there); the reports of the
  //! steps are in `workspace` (`steps_done`, `result(k)`). Returns the first step's.
  //! \throws as `solve`, and relax::invalid_argument for a plan without checks or with fewer
  //!         than 1 step, or one that takes ‖b‖ from the host.
  template <class S, class T>
  static DeviceLoopResult solve_steps(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& source,
                                      const DeviceLoopPlan& plan, DeviceLoopWorkspace<T>& workspace, bool with_history,
                                      cudaStream_t stream) {
    require_device_loop_call<S>(u, scratch, source);
    require(plan.steps >= 1, "plan.steps", plan.steps, "at least 1 step");
    require(plan.check_every > 0, "plan.check_every", plan.check_every,
            "at least 1 sweep between checks: a step ends at a converged check");
    require(plan.rhs_on_device, "plan.rhs_on_device", "false", "true: each step's b is formed on the device");
    return launch(s, u, scratch, static_cast<const T*>(nullptr), source.origin(), plan, workspace, with_history, stream);
  }

 private:
  static std::string loop_name() { return "DeviceLoop<TemporalBlock<" + std::to_string(D) + ", " + Kind::name + ">>"; }

  template <class S, class T>
  static DeviceLoopResult launch(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const T* b, const T* source,
                                 const DeviceLoopPlan& plan, DeviceLoopWorkspace<T>& workspace, bool with_history,
                                 cudaStream_t stream) {
    require_ladder_within(plan, D, loop_name());
    const Shape g = shape_of(u.layout());
    auto k = kernel<S, T>();
    auto& cache = workspace.launch_cache();
    int device = 0;
    RELAX_CUDA_CHECK(cudaGetDevice(&device));
    if (!cache.matches(reinterpret_cast<const void*>(k), device, g)) {
      const ResidentTiles t = tiles<S, T>(g);
      const std::size_t bytes = Kind::template shared_bytes<S::rank, T>(t);
      // The kernel may ask for all it can (not just these bytes: another solver's launch of the
      // same kernel on a larger grid must not find the limit lowered by this one).
      RELAX_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(dynamic_shared_limit<S, T>())));
      int per_sm = 0;
      RELAX_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, bytes));
      require(static_cast<std::int64_t>(per_sm) * current_sm_count() >= t.count(), "tiles", t.count(),
              "no more than the blocks that can be resident at once");
      cache = {reinterpret_cast<const void*>(k), device, g.nx, g.ny, g.nz, t, bytes};
    }
    const ResidentTiles t = cache.tiles;
    const std::size_t bytes = cache.shared_bytes;
    require(t.halo == D, "the tiling's halo", t.halo, "the kernel's D");
    workspace.reset(stream, plan.steps);
    unsigned long long* flags = workspace.tile_flags(t.count(), stream);
    launch_cooperative(k, dim3(t.count()), dim3(threads), bytes, stream, s, u.origin(), scratch.origin(), b, source, g,
                       t, plan, workspace.state(), workspace.reports(), flags, workspace.history());
    DeviceLoopResult result = read_device_loop(
        workspace, with_history, plan, "on_chip_kernel: a wait for the adjacent tiles or a grid barrier", stream);
    if (workspace.result(workspace.steps_done() - 1).in_scratch) u.swap(scratch);
    return result;
  }

  template <class S, class T>
  static auto kernel() {
    return on_chip_kernel<S::rank, D, S, T, typename Kind::template Agent<S::rank, T>>;
  }
  // The dynamic shared memory a block may ask for: the opt-in limit less the kernel's own.
  template <class S, class T>
  static std::size_t dynamic_shared_limit() {
    cudaFuncAttributes attributes{};
    RELAX_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel<S, T>()));
    return shared_bytes_limit() - attributes.sharedSizeBytes;
  }
};

}  // namespace detail

//! The on-chip device loop (`relax::OnChip` in tiled.hpp): tiles resident in shared memory.
template <int D>
struct Sweeper<DeviceLoop<TemporalBlock<D, OnChip>>> : detail::ResidentLoopSweeper<D, OnChip> {};

//! The register-resident device loop (`relax::InRegisters` in tiled.hpp, 2D): tiles resident in
//! the threads' registers.
template <int D>
struct Sweeper<DeviceLoop<TemporalBlock<D, InRegisters>>> : detail::ResidentLoopSweeper<D, InRegisters> {};

}  // namespace relax
