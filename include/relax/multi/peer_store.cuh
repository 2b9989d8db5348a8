#pragma once
//! \file
//! Jacobi on several sub-domains with no host in the loop: `MultiSolver<S, DeviceLoop<Sync>,
//! PeerStore>` (and, with temporal blocking, `DeviceLoop<TemporalBlock<D, ColumnStream>>`,
//! below). One cooperative kernel per device runs the whole solve over the slabs that device
//! holds (or one kernel per slab, `PeerStore::launch_per_subdomain`); the kernels exchange halo
//! rows and take the stop decision among themselves.
//!
//! One sweep, in every kernel (the Sync walk's tiles of all its slabs, taken by the resident
//! blocks in turn, then the kernel's grid barrier):
//! - the tiles that own a slab's edge row (plane) come first ("boundary blocks": they push the
//!   edges while the interior tiles follow; with `BlockRoles::specialised` the first blocks of
//!   the grid take those tiles and nothing else, `peer_share`). Such a tile also stores its part
//!   of the edge row, through the neighbour's pointer (a peer pointer across devices), into the
//!   neighbour's ring of the same parity: in 2D as a second store of each edge vector inside the
//!   walk, in 3D after the walk, read back from the array just written (see the kernel);
//! - a neighbour in the same kernel needs nothing more: the grid barrier orders those stores
//!   before the neighbour's next sweep reads them, and the neighbour's reads of the ring before
//!   the stores of the sweep after. A neighbour in another kernel has flag words in the slab's
//!   memory, one per tile of the edge band: before sweeping, edge tile r waits until word r says
//!   the neighbour's tile r has stored the edge rows of this many sweeps into the ring (so the
//!   ring it reads is current, and the neighbour is done reading the ring this sweep overwrites
//!   in its array; tile r reads exactly the ring columns tile r of the neighbour stores), and
//!   after its stores it raises the neighbour's word r to the new sweep count
//!   (`cuda::atomic_ref`, release/acquire, at system scope when the solve spans devices);
//! - every M sweeps the kernel folds the residual of its slabs' tiles (the flagged edge tiles
//!   after the same wait) into its norm word at its grid barrier; with several kernels, each
//!   stores its norm into every kernel's board and raises its board flag, and every block reads
//!   all the norms once every flag has arrived: each kernel takes the max of the same words, so
//!   all take the same decision at the same sweep (max is order-free).
//! Sweeps, checks, ρ and the owned rows are those of the single-domain solve, bit for bit; ‖b‖ is
//! the max over the owned rows, from the host, as `HostCopy`'s.
//!
//! Every wait is bounded (`PeerStore::timeout_ns`): a neighbour that never signals ends the solve
//! with a `relax::device_loop_error` naming the sub-domain. Several slabs on one device run in one
//! kernel; separate kernels on one device (`launch_per_subdomain`) split its resident blocks
//! between them, which CUDA does not promise to run at once: a timeout is then the error.
//!
//! `MultiSolver<S, DeviceLoop<TemporalBlock<D, ColumnStream>>, PeerStore>`: exact temporal
//! blocking across slabs, the single-domain streamed loop's passes of up to D sweeps on every
//! slab's owned rows, a D-row (plane) halo stored into the neighbours after every pass, the
//! flags counting the neighbours' band items (`peer_stream_kernel`); the same bits.
//!
//! The Sync kernel over NVSHMEM, one process per GPU: `multi/nvshmem.cuh`.

#include <relax/core/buffer.hpp>
#include <relax/multi/distributed.cuh>
#include <relax/multi/peer_table.hpp>
#include <relax/strategy/device_loop.cuh>
#include <relax/strategy/sync.cuh>

#include <cuda/atomic>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace relax {

namespace detail {

//! Block-level: waits until word `r` of `sl`'s inbound words on each of `sides` reaches
//! `target(side)` (`sweeps`, the sweeps done, names the wait in a stall report). False (and the
//! kernel's failure flag raised) when a wait timed out or another wait failed first; the
//! sub-domain that did not signal is recorded only by a wait that itself ran out of time (a wait
//! cut short by another's failure says nothing of its neighbour). `Scope`: the device, or the
//! system when the solve spans devices.
template <cuda::thread_scope Scope, class T, class Target>
__device__ bool peer_wait_for(const PeerSlab<T>& sl, int sides, std::int64_t r, Target target, unsigned long long sweeps,
                              const PeerLaunch<T>& launch, int* failed, std::uint64_t timeout_ns) {
  bool ok = true;
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    for (int side = 0; side < 2 && ok; ++side) {
      if ((sides & (1 << side)) == 0) continue;
      cuda::atomic_ref<unsigned long long, Scope> word(sl.inbound[side][r]);
      const std::uint64_t began = global_ns();
      ok = bounded_wait([&] { return word.load(cuda::memory_order_relaxed) >= target(side); }, failed, timeout_ns);
      if (!ok && global_ns() - began > timeout_ns)
        atomicMax(&launch.words->stalled, ~(sweeps << peer_stall_bits | static_cast<unsigned long long>(sl.neighbour[side])));
    }
    cuda::atomic_thread_fence(cuda::memory_order_acquire, Scope);
  }
  return __syncthreads_or(!ok) == 0;
}

//! Block-level: waits until the neighbours' tiles facing tile `r` of the edge bands on `sides`
//! have stored the edge rows of `sweeps` sweeps into the slab's ring (`peer_wait_for`).
template <cuda::thread_scope Scope, class T>
__device__ bool peer_wait(const PeerSlab<T>& sl, int sides, std::int64_t r, unsigned long long sweeps,
                          const PeerLaunch<T>& launch, int* failed, std::uint64_t timeout_ns) {
  return peer_wait_for<Scope>(sl, sides, r, [&](int) { return sweeps; }, sweeps, launch, failed, timeout_ns);
}

//! Block-level, after the block's edge tile `r` is stored: raises the neighbours' words for it
//! on `sides` to `sweeps` (the sweeps now done), releasing every thread's stores.
template <cuda::thread_scope Scope, class T>
__device__ void peer_signal(const PeerSlab<T>& sl, int sides, std::int64_t r, unsigned long long sweeps) {
  __syncthreads();
  if (threadIdx.x != 0 || threadIdx.y != 0 || sl.silent) return;
  cuda::atomic_thread_fence(cuda::memory_order_release, Scope);
  for (int side = 0; side < 2; ++side)
    if (sides & (1 << side))
      cuda::atomic_ref<unsigned long long, Scope>(sl.outbound[side][r]).store(sweeps, cuda::memory_order_relaxed);
}

//! Block-level, after the block swept edge item `it` into array `dst`: stores the tile's part of
//! the edge row (plane) on each of its sides into the neighbour's ring of that parity. The stores
//! come from the array just written, after a block barrier, not from the walk (storing twice
//! there took the 3D kernel from 64 to 100 registers).
template <int BlockX, int BlockY, int Rank, class T>
__device__ __forceinline__ void peer_push(const PeerSlab<T>& sl, const PeerItem& it, int dst, const Shape& g) {
  constexpr int W = Vec16<T>::width;
  __syncthreads();
  const std::int64_t j0 = (it.bx * BlockX + threadIdx.x) * W + 1;
  if (j0 > g.nx) return;
  const int valid = j0 + W - 1 <= g.nx ? W : static_cast<int>(g.nx - j0 + 1);
  std::int64_t i = 0;  // 3D: the row of the tile's part of the edge plane
  if constexpr (Rank == 2) {
    if (threadIdx.y != 0) return;
  } else {
    i = it.t % (sl.band_items / sl.tiles_x) * BlockY + threadIdx.y + 1;
    if (i > g.ny) return;
  }
  const T* const own = sl.array[dst];
  for (int side = 0; side < 2; ++side) {
    if ((it.sides & (1 << side)) == 0) continue;
    const std::int64_t edge = side == 0 ? 1 : (Rank == 2 ? g.ny : g.nz);
    const std::int64_t at = Rank == 2 ? g.at(0, edge, j0) : g.at(edge, i, j0);
    store_vector(sl.out[side][dst] + sl.shift[side] + at, load_vector(own + at, valid), valid);
  }
}

//! The device loop's counters with the check taken over every kernel of the solve (see the file
//! comment): with one kernel, `DeviceLoopCounters`'s check.
//! The check of the loops whose kernels (or PEs) combine their norms on a board: the kernel's
//! own norm at its grid barrier, then, with several kernels, `Combined::combine` makes it the max
//! over all of them, and every block decides on it.
template <class T, class Combined>
struct BoardLoopCounters : DeviceLoopCounters<T> {
  using Bits = arith::bits_t<T>;
  const PeerLaunch<T>& launch;

  __device__ BoardLoopCounters(const DeviceLoopPlan& p, DeviceLoopState<T>* s, DeviceLoopStepReport<T>* reports, Bits* h,
                               const PeerLaunch<T>& l)
      : DeviceLoopCounters<T>(p, s, reports, h), launch(l) {}

  template <int BlockX, int BlockY>
  __device__ bool check(Bits best) {
    this->template post<BlockX, BlockY>(best);
    if (!this->barrier.wait(this->token)) return false;
    Bits norm = this->posted_norm();
    if (launch.launches > 1 && !static_cast<Combined*>(this)->combine(norm)) return false;
    this->decide(norm);
    return true;
  }
};

template <cuda::thread_scope Scope, class T>
struct PeerLoopCounters : BoardLoopCounters<T, PeerLoopCounters<Scope, T>> {
  using Bits = arith::bits_t<T>;
  using BoardLoopCounters<T, PeerLoopCounters<Scope, T>>::BoardLoopCounters;
  using BoardLoopCounters<T, PeerLoopCounters<Scope, T>>::launch;

  //! Block-level: `norm` becomes the max over the kernels' norms of this check (the board slot
  //! of this check, three by turns: a kernel writes a slot again three checks later, after every
  //! kernel has posted the check in between, so after every kernel has read it).
  __device__ bool combine(Bits& norm) {
    __shared__ Bits combined;
    __shared__ int arrived;
    const auto check = static_cast<unsigned long long>(this->checks);  // checks before this one
    const int slot = static_cast<int>(check % 3);
    if (this->leader) {
      for (int h = 0; h < launch.launches; ++h)
        cuda::atomic_ref<Bits, Scope>(launch.peers[h]->norms[slot][launch.me]).store(norm, cuda::memory_order_relaxed);
      cuda::atomic_thread_fence(cuda::memory_order_release, Scope);
      for (int h = 0; h < launch.launches; ++h)
        cuda::atomic_ref<unsigned long long, Scope>(launch.peers[h]->posted[launch.me]).store(check + 1, cuda::memory_order_relaxed);
    }
    if (threadIdx.x == 0 && threadIdx.y == 0) {
      bool ok = true;
      Bits best = 0;
      for (int h = 0; h < launch.launches && ok; ++h) {
        cuda::atomic_ref<unsigned long long, Scope> posted(launch.words->posted[h]);
        const std::uint64_t began = global_ns();
        ok = bounded_wait([&] { return posted.load(cuda::memory_order_relaxed) > check; }, &this->state->barrier.failed,
                          this->plan.barrier_timeout_ns);
        if (!ok && global_ns() - began > this->plan.barrier_timeout_ns) atomicCAS(&launch.words->stalled_launch, 0, 1 + h);
      }
      cuda::atomic_thread_fence(cuda::memory_order_acquire, Scope);
      for (int h = 0; h < launch.launches && ok; ++h) {
        const Bits theirs = cuda::atomic_ref<Bits, Scope>(launch.words->norms[slot][h]).load(cuda::memory_order_relaxed);
        best = best > theirs ? best : theirs;
      }
      combined = best;
      arrived = ok ? 1 : 0;
    }
    __syncthreads();
    norm = combined;
    return arrived != 0;
  }
};

//! The CPU-free multi-sub-domain Sync loop: one kernel of the solve (see the file comment). Its
//! dynamic shared memory holds the table of its slabs (`load_peer_table`).
template <int BlockX, int BlockY, int Rows, cuda::thread_scope Scope, class S, class T>
__global__ void __launch_bounds__(BlockX* BlockY, tuning::peer_sync_blocks_per_sm)
    peer_sync_kernel(S s, PeerLaunch<T> launch, DeviceLoopPlan plan, DeviceLoopState<T>* state,
                     DeviceLoopStepReport<T>* reports, arith::bits_t<T>* history) {
  constexpr int Rank = S::rank;
  extern __shared__ __align__(16) unsigned char peer_table[];
  launch.slabs = load_peer_table<BlockX, BlockY>(launch, peer_table);
  PeerLoopCounters<Scope, T> loop(plan, state, reports, history, launch);
  int* const failed = &state->barrier.failed;
  run_pass_loop<BlockX, BlockY, 1>(
      loop, plan, 0, 1,
      [&](int src, int dst, int) {
        const auto sweeps = static_cast<unsigned long long>(loop.sweeps);
        const PeerShare share = peer_share(launch.edge_items, launch.items, blockIdx.x, gridDim.x, launch.boundary);
        for (std::int64_t v = share.first; v < share.end; v += share.stride) {
          const PeerItem it = peer_item(launch, v, Rank);
          const PeerSlab<T>& sl = launch.slabs[it.slab];
          if constexpr (Rank == 2) {
            // 2D: the edge tiles store each edge vector twice inside the walk (measured against
            // pushing after the walk as 3D does: +0.45 against +0.51 us a sweep at 256^2, -1.8%
            // against +4.9% at 16384^2, docs/results/h200/bench_multi_peer_store*.json).
            const Shape g = sl.g;
            const T* const in = sl.array[src];
            const T* const b = sl.b;
            T* const out = sl.array[dst];
            if (it.sides == 0) {
              walk_tile<BlockX, BlockY, Rows, Rank>(
                  it.bx, it.t, in, b, g, [&](std::int64_t at, const Vec16<T>& rhs, const VectorStar<T, Rank>& star) {
                    sync_update_vector(s, out, at, rhs, star);
                  });
              continue;
            }
            if (it.flagged != 0 && !peer_wait<Scope>(sl, it.flagged, it.r, sweeps, launch, failed, plan.barrier_timeout_ns))
              break;
            const std::int64_t first_end = 2 * g.pitch, last_begin = g.ny * g.pitch;
            T* const prev = (it.sides & 1) ? sl.out[0][dst] + sl.shift[0] : nullptr;
            T* const next = (it.sides & 2) ? sl.out[1][dst] + sl.shift[1] : nullptr;
            walk_tile<BlockX, BlockY, Rows, Rank>(
                it.bx, it.t, in, b, g, [&](std::int64_t at, const Vec16<T>& rhs, const VectorStar<T, Rank>& star) {
                  const Vec16<T> value = sync_vector(s, rhs, star);
                  store_vector(out + at, value, star.valid);
                  if (prev != nullptr && at < first_end) store_vector(prev + at, value, star.valid);
                  if (next != nullptr && at >= last_begin) store_vector(next + at, value, star.valid);
                });
          } else {
            // 3D: one walk for every tile, then the edge tiles push their part of the edge plane
            // (storing twice inside the walk took the kernel from 80 to 100 registers: +20%
            // against +3.3% at 512^3).
            if (it.flagged != 0 && !peer_wait<Scope>(sl, it.flagged, it.r, sweeps, launch, failed, plan.barrier_timeout_ns))
              break;
            const Shape g = sl.g;
            T* const out = sl.array[dst];
            walk_tile<BlockX, BlockY, Rows, Rank>(
                it.bx, it.t, sl.array[src], sl.b, g,
                [&](std::int64_t at, const Vec16<T>& rhs, const VectorStar<T, Rank>& star) {
                  sync_update_vector(s, out, at, rhs, star);
                });
            if (it.sides == 0) continue;
            peer_push<BlockX, BlockY, Rank>(sl, it, dst, g);
          }
          if (it.flagged != 0) peer_signal<Scope>(sl, it.flagged, it.r, sweeps + 1);
        }
      },
      [&](int src) {
        const auto sweeps = static_cast<unsigned long long>(loop.sweeps);
        arith::bits_t<T> best = 0;
        const PeerShare share = peer_share(launch.edge_items, launch.items, blockIdx.x, gridDim.x, launch.boundary);
        for (std::int64_t v = share.first; v < share.end; v += share.stride) {
          const PeerItem it = peer_item(launch, v, Rank);
          const PeerSlab<T>& sl = launch.slabs[it.slab];
          if (it.flagged != 0 && !peer_wait<Scope>(sl, it.flagged, it.r, sweeps, launch, failed, plan.barrier_timeout_ns))
            break;
          const Shape g = sl.g;
          fold_tile_residual<BlockX, BlockY, Rows>(best, it.bx, it.t, s, sl.array[src], sl.b, g);
        }
        return best;
      });
}

//! Block-level, after the block streamed strip group (2D) or (x, y) tile (3D) `group` of a pass of
//! depth d into array `dst`: stores the rows (planes) of the band on each of `sides` that the item
//! stored, [y0, y1) ∩ the band, through the neighbour's pointer into the same global rows of the
//! neighbour's halo in its array of that parity, then, on the flagged sides, adds 1 to the
//! neighbour's word for this slab (release: every thread's stores first).
template <int Rank, int d, cuda::thread_scope Scope, class T>
__device__ __forceinline__ void peer_push_band(const PeerSlab<T>& sl, const PeerSegment& it, std::int64_t group, int dst) {
  __syncthreads();
  const Shape& g = sl.g;
  std::int64_t c0 = 0, columns = 0, r0 = 0, rows = 1;  // the item's stored columns (and rows, 3D)
  if constexpr (Rank == 2) {
    constexpr std::int64_t width = std::int64_t{stream_warps_per_block} * strip_kept<d, T>;
    c0 = group * width + 1;
    columns = min(width, g.nx - c0 + 1);
  } else {
    const std::int64_t tiles_x = tile_count(g.nx, plane_columns_kept<d, T>);
    c0 = group % tiles_x * plane_columns_kept<d, T> + 1;
    columns = min(std::int64_t{plane_columns_kept<d, T>}, g.nx - c0 + 1);
    r0 = group / tiles_x * plane_rows_kept<d> + 1;
    rows = min(std::int64_t{plane_rows_kept<d>}, g.ny - r0 + 1);
  }
  const std::int64_t step = Rank == 2 ? g.pitch : g.plane;
  const T* const own = sl.array[dst];
  const int threads = static_cast<int>(blockDim.x * blockDim.y);
  const int thread = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  for (int side = 0; side < 2; ++side) {
    if ((it.sides & (1 << side)) == 0) continue;
    const std::int64_t band0 = side == 0 ? sl.first : sl.first + sl.owned - sl.halo;
    const std::int64_t k0 = max(it.y0, band0), k1 = min(it.y1, band0 + sl.halo);
    T* const theirs = sl.out[side][dst] + sl.shift[side];
    const std::int64_t per_row = rows * columns;
    for (std::int64_t c = thread; c < (k1 - k0) * per_row; c += threads) {
      const std::int64_t k = k0 + c / per_row, i = r0 + c % per_row / columns, j = c0 + c % columns;
      const std::int64_t at = k * step + i * (Rank == 2 ? 0 : g.pitch) + j;
      theirs[at] = own[at];
    }
  }
  __syncthreads();
  if (threadIdx.x != 0 || threadIdx.y != 0 || sl.silent || it.flagged == 0) return;
  cuda::atomic_thread_fence(cuda::memory_order_release, Scope);
  for (int side = 0; side < 2; ++side)
    if (it.flagged & (1 << side))
      cuda::atomic_ref<unsigned long long, Scope>(*sl.outbound[side]).fetch_add(1, cuda::memory_order_relaxed);
}

//! The CPU-free multi-sub-domain streamed loop (`DeviceLoop<TemporalBlock<D, ColumnStream>>`,
//! a halo of H = D rows or planes): one kernel of the solve. A pass of depth d ≤ D streams every
//! segment of owned rows of every slab of the kernel (the segments that touch a band first), each
//! strip group (2D) or (x, y) tile (3D) of a segment one work item: the column stream of the
//! single-domain loop on the slab's local box, reading up to d rows into the halo and storing
//! only owned rows. An item whose rows touch the band next to a neighbour then stores those
//! rows of the band into the neighbour's halo (`peer_push_band`). Within one kernel the grid
//! barrier after the pass orders those stores before the neighbour's next pass reads them, and
//! the neighbour's reads before the stores of the pass after. A neighbour in another kernel
//! counts: each band item adds 1 to the neighbour's word for that side after its stores; an item
//! that touches a band (the items that read the halo are among them) first waits until this
//! slab's word for that side reaches the neighbour's band items of every pass so far
//! (`inbound_segments` × the strip groups of each pass), which also says that the neighbour is
//! done reading the halo rows this pass's stores overwrite in its array. Checks fold the residual
//! of the owned rows (the Sync walk's tiles; the tiles at a band after the same wait) and decide
//! as `peer_sync_kernel` does. Dynamic shared memory: the table of slabs, then (3D) the plane
//! queue.
template <int Rank, int D, cuda::thread_scope Scope, class S, class T>
__global__ void __launch_bounds__(32 * stream_block_y<Rank>, Rank == 2 ? tuning::peer_stream_blocks_per_sm : 1)
    peer_stream_kernel(S s, PeerLaunch<T> launch, Shape across, DeviceLoopPlan plan, DeviceLoopState<T>* state,
                       DeviceLoopStepReport<T>* reports, arith::bits_t<T>* history) {
  constexpr int BlockY = stream_block_y<Rank>;
  constexpr int Rows = Rank == 2 ? 8 : 4;  // the residual walk's rows (planes) a thread, as the single-domain loop's
  extern __shared__ __align__(16) unsigned char peer_table[];
  launch.slabs = load_peer_table<32, BlockY>(launch, peer_table);
  Lane<T>* const queue = reinterpret_cast<Lane<T>*>(peer_table + peer_table_bytes<T>(launch.count));
  PeerLoopCounters<Scope, T> loop(plan, state, reports, history, launch);
  int* const failed = &state->barrier.failed;
  unsigned long long groups_done = 0;  // the strip groups of every pass so far (the same in every slab)
  const auto inbound = [&](const PeerSlab<T>& sl) {
    return [&sl, groups_done](int side) { return groups_done * static_cast<unsigned long long>(sl.inbound_segments[side]); };
  };
  run_pass_loop<32, BlockY, D>(
      loop, plan, 0, 1,
      [&](int src, int dst, int d) {
        with_depth<1, D>(d, [&](auto depth) {
          constexpr int dd = decltype(depth)::value;
          const std::int64_t groups = stream_groups<Rank, dd, T>(across);
          const auto sweeps = static_cast<unsigned long long>(loop.sweeps);
          // Every block takes items in turn, the band segments first (`BlockRoles::edges_first`
          // only: with the roles' share of the pass in the loop, ptxas' spill stores of the 2D
          // kernel at D = 8 went from 180 to 224 bytes or more, and two slabs streamed 4.9% slower
          // at 16384^2; docs/results/h200/bench_multi_roles_stream_check_*.json).
          for (std::int64_t v = blockIdx.x; v < launch.items * groups; v += gridDim.x) {
            {
              const PeerSegment it = peer_segment(launch, v / groups);
              const PeerSlab<T>& sl = launch.slabs[it.slab];
              if (it.flagged != 0 &&
                  !peer_wait_for<Scope>(sl, it.flagged, 0, inbound(sl), sweeps, launch, failed, plan.barrier_timeout_ns))
                break;
              // The extents and strides every slab shares from the kernel's parameters, the
              // slowest extent and the origin from the table. (The first version read the whole
              // shape from the table and kept the item live across the stream: 690 us a sweep at
              // 16384^2, D = 8, against 528 with both changes; each alone is not measured.)
              Shape g = across;
              (Rank == 2 ? g.ny : g.nz) = Rank == 2 ? sl.g.ny : sl.g.nz;
              g.origin = sl.g.origin;
              stream_group<Rank, dd>(s, sl.array[src], sl.array[dst], sl.b, g, v % groups, it.y0, it.y1, queue);
            }
            // The item again, from the table, rather than kept live across the stream (ptxas'
            // spill loads of the 2D kernel at D = 8: 556 bytes against 600).
            std::int64_t again = v;
            asm volatile("" : "+l"(again));
            const PeerSegment it = peer_segment(launch, again / groups);
            if (it.sides != 0) peer_push_band<Rank, dd, Scope>(launch.slabs[it.slab], it, again % groups, dst);
          }
          groups_done += static_cast<unsigned long long>(groups);
        });
      },
      [&](int src) {
        const auto sweeps = static_cast<unsigned long long>(loop.sweeps);
        arith::bits_t<T> best = 0;
        std::int64_t base = 0;  // the residual tiles of the slabs before this one
        for (int k = 0; k < launch.count; ++k) {
          const PeerSlab<T>& sl = launch.slabs[k];
          Shape owned = sl.g;  // the owned rows (planes), their neighbours the halo's nearest
          const std::int64_t skip = (sl.first - 1) * (Rank == 2 ? owned.pitch : owned.plane);
          if constexpr (Rank == 2) owned.ny = sl.owned, owned.origin.y += sl.first - 1;
          else owned.nz = sl.owned, owned.origin.z += sl.first - 1;
          const std::int64_t tiles_x = tile_count(owned.nx, 32 * Vec16<T>::width);
          const std::int64_t tiles = walk_tiles<BlockY, Rows, Rank>(owned);
          const std::int64_t per_band = Rank == 2 ? 1 : tile_count(owned.ny, BlockY);
          const std::int64_t work = tiles_x * tiles;
          const auto grid = static_cast<std::int64_t>(gridDim.x);
          for (std::int64_t item = base + ((blockIdx.x - base) % grid + grid) % grid; item < base + work; item += grid) {
            const std::int64_t bx = (item - base) % tiles_x, t = (item - base) / tiles_x;
            const std::int64_t band = t / per_band, bands = tiles / per_band;
            int sides = 0;
            if (band == 0 && sl.inbound[0] != nullptr) sides |= 1;
            if (band == bands - 1 && sl.inbound[1] != nullptr) sides |= 2;
            if (sides != 0 && !peer_wait_for<Scope>(sl, sides, 0, inbound(sl), sweeps, launch, failed, plan.barrier_timeout_ns))
              return best;
            fold_tile_residual<32, BlockY, Rows>(best, bx, t, s, sl.array[src] + skip, sl.b + skip, owned);
          }
          base += work;
        }
        return best;
      });
}

//! Whether the CPU-free kernels of `DeviceLoop<SyncTile<X, Y, Rows>>` on the box `e` take
//! `tuning::sync_deep_rows` rows a thread (Rows ≠ 1; with `dynamic`, as the single-domain Sync
//! would on the current device).
template <int X, int Y, int Rows, int Rank, class T>
bool peer_deep_rows(const Extents& e) {
  if constexpr (Rows == dynamic)
    return Sweeper<SyncTile<X, Y, Rows>>::template deep_rows_fill_device<Rank, T>(
        Shape{e.nx, e.ny, e.rank == 3 ? e.nz : 1, 0, 0, {}});
  else
    return Rows != 1;
}

//! Makes every device of `devices` able to store into every other's memory (peer access).
//! \throws relax::unavailable_error when two of them cannot reach each other.
inline void enable_peer_access(const std::vector<int>& devices) {
  for (int a : devices)
    for (int b : devices) {
      if (a == b) continue;
      int can = 0;
      RELAX_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
      if (!can)
        throw unavailable_error("relax::MultiSolver<PeerStore>: device " + std::to_string(a) + " cannot access device " +
                                std::to_string(b) + "'s memory (no peer access); use relax::HostCopy");
      const DeviceScope scope(a);
      const cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) clear_cuda_status(cudaGetLastError());
      else RELAX_CUDA_CHECK(e);
    }
}

}  // namespace detail

namespace detail {

//! How the kernels of a CPU-free solve (`PeerStoreSolver`) reach each other's memory, which of
//! them run in this process, and what the processes of a solve agree on. `PeerFabric<PeerStore,
//! T>`: every kernel runs in this process, on the devices of its slabs, and reaches the others
//! through CUDA peer pointers. `PeerFabric<Nccl, T>` (`multi/nccl_device.cuh`): one process per
//! GPU, the kernels of the other processes reached through NCCL's symmetric windows.
template <class Comm, class T>
class PeerFabric;

//! A table copied from pinned host memory to the device (`PeerFabric::resolve` finds the device
//! address of a field by its place in the host copy).
struct PeerUpload {
  const void* host;
  void* device;
  std::size_t bytes;
};

template <class T>
class PeerFabric<PeerStore, T> {
 public:
  using Words = PeerLaunchWords<T>;
  using Kernels = std::vector<std::pair<int, std::vector<int>>>;
  static constexpr const char* comm_name = "PeerStore";

  PeerFabric(const PeerStore&, const Extents&, const std::vector<int>&, int) {}
  //! Every slab is held here, in memory of its own (`SlabSolverBase`'s default).
  SlabPlacement<T> placement() const { return {}; }
  //! Every kernel of the solve (its device and slabs), and [first, first + count) of them run here.
  Kernels kernels(const PeerStore& comm, const std::vector<int>& devices) const {
    require(comm.kernels_per_device >= 1, "comm.kernels_per_device", comm.kernels_per_device,
            "at least 1 kernel per device");
    return peer_kernels(devices, comm.launch_per_subdomain, comm.kernels_per_device);
  }
  std::pair<int, int> local_kernels(int total) const { return {0, total}; }
  //! Makes the devices of the kernels run here reach each other; whether the solve spans devices
  //! (the flags' scope is then the system).
  bool connect(const std::vector<int>& distinct) {
    enable_peer_access(distinct);
    return distinct.size() > 1;
  }
  //! Each held slab's `flag_words[k]` flag words, on its device, and each local kernel's words.
  void allocate(const std::vector<std::size_t>& flag_words, const std::vector<int>& slab_devices,
                const std::vector<int>& kernel_devices) {
    for (std::size_t k = 0; k < flag_words.size(); ++k) {
      const DeviceScope scope(slab_devices[k]);
      flags_.emplace_back(flag_words[k]);
    }
    for (int d : kernel_devices) {
      const DeviceScope scope(d);
      boards_.emplace_back(1);
    }
  }
  unsigned long long* flags(int k) { return flags_[static_cast<std::size_t>(k)].data(); }
  std::size_t flag_bytes(int k) const { return flags_[static_cast<std::size_t>(k)].bytes(); }
  Words* board(int h) { return boards_[static_cast<std::size_t>(h)].data(); }
  //! The held slab (kernel) whose memory stands for slab n's (kernel m's), and the process it is in.
  int twin_slab(int n) const { return n; }
  int twin_kernel(int m) const { return m; }
  int owner_of_slab(int) const { return 0; }
  int owner_of_kernel(int) const { return 0; }
  //! Sets `field` (in a host table bound for the device) to reach `local` (this process's twin of
  //! the memory meant) in process `owner`: here, `local` itself.
  template <class U>
  void point(U*& field, U* local, int) {
    field = local;
  }
  //! The address through which the kernels here reach `local`: itself.
  template <class U>
  U* alias(U* local) {
    return local;
  }
  //! Fixes the fields `point` left for the device in the tables just uploaded (none here).
  void resolve(cudaStream_t, std::initializer_list<PeerUpload>) {}
  //! Before the kernels start, with every local kernel's words zeroed on `streams`: nothing to
  //! wait for beyond this process (its events order the kernels).
  void start(const std::vector<cudaStream_t>&, std::uint64_t) {}
  //! Why the start did not complete ("": it did). After the solve.
  std::string start_failure() { return {}; }
  //! The processes' agreement: each learns whether one failed `step` (this one: `local`) and all
  //! throw if one did; `extra` comes back as the max over the processes. One process: its own.
  std::vector<unsigned long long> agree(std::exception_ptr local, const char*, std::vector<unsigned long long> extra,
                                        cudaStream_t) {
    if (local) std::rethrow_exception(local);
    return extra;
  }
  //! The least of `v` over the processes.
  std::int64_t least(std::int64_t v, cudaStream_t) { return v; }
  //! Whether every kernel of the solve runs here.
  bool alone() const { return true; }
  //! Checks that `u`'s slab memory at `p` is reachable by the other processes' kernels.
  void require_reachable(const void*, int) const {}

 private:
  std::vector<DeviceBuffer<unsigned long long>> flags_;
  std::vector<DeviceBuffer<Words>> boards_;
};

//! The fabric of a Comm policy, made before the solver's slabs (its placement says where they are).
template <class Comm, class T>
struct PeerFabricHolder {
  PeerFabric<Comm, T> fabric_;
};

//! What the CPU-free multi-sub-domain solver runs per kernel: the Sync walk
//! (`peer_sync_kernel`, a one-row halo every sweep) or the column stream (`peer_stream_kernel`,
//! a D-row halo every pass of up to D sweeps).
template <class Inner>
struct PeerSchedule;
template <int X, int Y, int Rows>
struct PeerSchedule<SyncTile<X, Y, Rows>> {
  static constexpr bool streamed = false;
  static constexpr int halo = 1, block_x = X, block_y = Y;
  static constexpr int deep_rows = Rows == dynamic ? tuning::sync_deep_rows : Rows;  //!< rows a thread, when deep
  static constexpr const char* strategy = "DeviceLoop<Sync>";
  //! Whether a thread takes `deep_rows` rows on the box `e` (`peer_deep_rows`).
  template <int Rank, class T>
  static bool deep(const Extents& e) {
    return peer_deep_rows<X, Y, Rows, Rank, T>(e);
  }
};
template <int D>
struct PeerSchedule<TemporalBlock<D, ColumnStream>> {
  static_assert(D >= 1 && D <= 16, "relax::MultiSolver<DeviceLoop<TemporalBlock<D, ColumnStream>>, Comm>: 1 <= D <= 16");
  static constexpr bool streamed = true;
  static constexpr int halo = D, block_x = 32;
  static constexpr const char* strategy = "DeviceLoop<TemporalBlock<D, ColumnStream>>";
};

//! Jacobi on the slabs of a box with no host in the loop (see the file comment): one
//! `DeviceLoop<Inner>` kernel per device (or per slab), halos stored by the kernels, the stop
//! decision taken on the device. The controller is `Fixed` (a check every M sweeps). `Comm`:
//! `PeerStore` (one process, CUDA peer pointers) or `Nccl` (one process per GPU, NCCL's device
//! API: `multi/nccl_device.cuh`); the kernels are the same.
template <class Stencil_, class Inner, class Comm_ = PeerStore>
class PeerStoreSolver : private PeerFabricHolder<Comm_, typename Stencil_::value_type>,
                        public SlabSolverBase<Stencil_> {
  static_assert(is_stencil_v<Stencil_>, "relax::MultiSolver<Stencil, Strategy, Comm>: Stencil is not a stencil");
  static_assert(Stencil_::radius == 1, "relax::MultiSolver<Stencil, DeviceLoop<...>, Comm>: radius-1 stencils only");
  using Base = SlabSolverBase<Stencil_>;
  using Holder = PeerFabricHolder<Comm_, typename Stencil_::value_type>;
  using Schedule = PeerSchedule<Inner>;
  static constexpr bool streamed = Schedule::streamed;
  static constexpr int X = Schedule::block_x;
  using Holder::fabric_;

 public:
  using Stencil = Stencil_;
  using Strategy = DeviceLoop<Inner>;
  using Comm = Comm_;
  using value_type = typename Stencil::value_type;
  //! Rows (planes) from each neighbour: one every sweep (Sync), D every pass (the stream).
  static constexpr int halo = Schedule::halo;

  //! A solver for the box `global` split into slabs, slab s on `devices[s]` (with one process
  //! per GPU, the slabs this process holds; see the Comm policy).
  //! \throws relax::invalid_argument for bad extents, devices, controller, options or `comm`;
  //!         relax::unavailable_error without cooperative launch or a way between the devices.
  PeerStoreSolver(const Extents& global, std::vector<int> devices, Stencil stencil, Fixed controller = {},
                  SolveOptions options = {}, Comm comm = {})
      : Holder{PeerFabric<Comm, value_type>(comm, global, devices, halo)},
        Base(global, devices, stencil, controller, options, halo, fabric_.placement()), comm_(comm) {
    detail::require_wait_settings(comm_.timeout_ns, comm_.silent_subdomain, this->size());
    detail::require_block_roles(comm_.blocks, streamed);
    detail::require(this->size() < (1 << detail::peer_stall_bits), "devices", this->size(),
                    "fewer sub-domains than 2^20");
    kernels_ = fabric_.kernels(comm_, this->devices_);
    const auto [first_kernel, local_count] = fabric_.local_kernels(static_cast<int>(kernels_.size()));
    first_kernel_ = first_kernel;
    const std::vector<int> local_devices = devices_of_local_kernels();
    std::vector<int> distinct;
    for (int d : local_devices)
      if (std::find(distinct.begin(), distinct.end(), d) == distinct.end()) distinct.push_back(d);
    detail::require(static_cast<int>(kernels_.size()) <= detail::peer_max_launches, "devices",
                    static_cast<int>(kernels_.size()),
                    ("at most " + std::to_string(detail::peer_max_launches) +
                     " kernels (devices, kernels_per_device, or sub-domains with launch_per_subdomain)").c_str());
    for (int d : distinct) {
      const detail::DeviceScope scope(d);
      detail::require_cooperative_launch(name().c_str(), "relax::HostCopy with a launch-based strategy");
    }
    cross_device_ = fabric_.connect(distinct);
    if constexpr (!streamed) {
      const detail::DeviceScope scope(distinct.front());
      deep_ = Schedule::template deep<Stencil::rank, value_type>(this->decomposition_.global());
    }
    for (int h = first_kernel_; h < first_kernel_ + local_count; ++h) {
      const auto& group = kernels_[static_cast<std::size_t>(h)];
      const int d = group.first;
      const detail::DeviceScope scope(d);
      const auto sharing = std::count(local_devices.begin(), local_devices.end(), d);
      launches_.push_back(std::make_unique<Launch>(d, group.second, pick_kernel(), sharing, name()));
    }
    launch_of_.assign(static_cast<std::size_t>(this->size()), 0);
    for (std::size_t h = 0; h < kernels_.size(); ++h)
      for (int s : kernels_[h].second) launch_of_[static_cast<std::size_t>(s)] = static_cast<int>(h);
    if constexpr (streamed) {
      // A kernel's slabs are cut for its resident blocks; with kernels in other processes, which
      // must cut every slab alike, for the fewest resident blocks of any process's kernels.
      std::int64_t fewest = 0;
      if (!fabric_.alone()) {
        fewest = launches_.front()->resident;
        for (const auto& l : launches_) fewest = std::min(fewest, l->resident);
        fewest = fabric_.least(fewest, launches_.front()->stream);
      }
      segment_.assign(static_cast<std::size_t>(this->size()), 0);
      for (std::size_t h = 0; h < kernels_.size(); ++h) {
        const auto here = static_cast<std::size_t>(static_cast<int>(h) - first_kernel_);
        const std::int64_t resident = fabric_.alone() ? launches_[here]->resident : fewest;
        for (int s : kernels_[h].second)
          segment_[static_cast<std::size_t>(s)] =
              stream_segment(s, std::max<std::int64_t>(1, resident / static_cast<std::int64_t>(kernels_[h].second.size())));
      }
    }
    // Flag words (one per tile of an edge band, per side) for the slabs with a neighbour in
    // another kernel; the tiles across a band do not depend on the rows a thread takes.
    // The streamed loop counts a band's pushes in one word a side.
    if constexpr (streamed) band_items_ = 1;
    else
      band_items_ = detail::peer_band_items(detail::shape_of(this->part(this->first()).scratch.layout()), Stencil::rank,
                                            X * detail::Vec16<value_type>::width, Schedule::block_y);
    std::vector<std::size_t> flag_words;
    std::vector<int> kernel_devices;
    for (int s = this->first(); s < this->first() + this->held(); ++s) {
      flag_words.push_back(static_cast<std::size_t>(flagged(s, 0) || flagged(s, 1) ? 2 * band_items_ : 1));
      const detail::DeviceScope scope(this->device(s));
      begun_.emplace_back();
    }
    for (const auto& l : launches_) kernel_devices.push_back(l->device);
    fabric_.allocate(flag_words, this->devices_, kernel_devices);
    for (std::size_t h = 0; h < launches_.size(); ++h) {
      launches_[h]->words = fabric_.board(static_cast<int>(h));
      launches_[h]->kernel_words = fabric_.alias(launches_[h]->words);
    }
    if (comm_.silent_subdomain >= 0)
      detail::require(flagged(comm_.silent_subdomain, 0) || flagged(comm_.silent_subdomain, 1), "comm.silent_subdomain",
                      comm_.silent_subdomain,
                      "a sub-domain with a neighbour in another kernel (within one kernel the grid barrier orders "
                      "the halos, and there are no flags to keep back)");
  }

  //! The kernels a solve runs (one per device, or one per sub-domain; over every process).
  int launches() const { return static_cast<int>(kernels_.size()); }

  //! Solves A u = b from the initial guess in `u` (its global ring the boundary values) in one
  //! launch per kernel; on return every held slab's owned rows hold the last iterate (each slab's
  //! storage may have been exchanged with the solver's workspace). Blocks until the solve is done.
  //! With one process per GPU, collective: every process calls it with its grids.
  //! \throws relax::device_loop_error when a wait did not complete (naming the sub-domain or the
  //!         kernel that did not signal).
  SolveReport solve(DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    const auto started = std::chrono::steady_clock::now();
    SolveReport report;
    report.rhs_norm = begin_everywhere(u, b);
    for (int s = this->first(); s < this->first() + this->held(); ++s) {  // the kernels store into the workspaces begin() filled
      const detail::DeviceScope scope(this->device(s));
      begun_[static_cast<std::size_t>(s - this->first())].record(this->part(s).stream);
    }
    detail::DeviceLoopPlan plan;
    plan.stop = criterion(this->options_);
    plan.rhs_norm = report.rhs_norm;
    plan.check_every = this->controller_.sweeps_before_check();
    plan.history_capacity =
        this->options_.record_history ? detail::tile_count(this->options_.max_sweeps, plan.check_every) : 0;
    plan.barrier_timeout_ns = comm_.timeout_ns;
    for (std::size_t h = 0; h < launches_.size(); ++h) prepare(h, u, b, plan);
    std::vector<cudaStream_t> streams;
    for (auto& l : launches_) {  // no kernel starts before every kernel's words are zeroed
      const detail::DeviceScope scope(l->device);
      for (auto& m : launches_) RELAX_CUDA_CHECK(cudaStreamWaitEvent(l->stream, m->ready.get(), 0));
      for (const Event& e : begun_) RELAX_CUDA_CHECK(cudaStreamWaitEvent(l->stream, e.get(), 0));
      streams.push_back(l->stream);
    }
    fabric_.start(streams, comm_.timeout_ns);  // nor before every other process has zeroed its words
    std::vector<detail::DeviceLoopResult> results;
    std::string stalled_launch;
    unsigned long long earliest = 0;
    bool failed = false;
    std::size_t launched = 0;
    try {
      for (; launched < launches_.size(); ++launched) launch(launched, plan);
      for (auto& l : launches_) {
        const detail::DeviceScope scope(l->device);
        RELAX_CUDA_CHECK(cudaMemcpyAsync(l->host_words.data(), l->words, sizeof(detail::PeerLaunchWords<value_type>),
                                         cudaMemcpyDeviceToHost, l->stream));
        results.push_back(l->workspace.read(l->stream, this->options_.record_history));
        failed = failed || l->workspace.failed();
        const auto& w = l->host_words.data()[0];
        earliest = std::max(earliest, w.stalled);
        if (stalled_launch.empty() && w.stalled_launch != 0)
          stalled_launch = "the kernel of sub-domain " +
                           std::to_string(kernels_[static_cast<std::size_t>(w.stalled_launch - 1)].second.front()) +
                           " never posted its norm";
      }
    } catch (...) {
      // The kernels already running still store into other slabs' memory: none outlives the
      // solve (each ends at the latest when its waits time out).
      for (std::size_t h = 0; h < launched; ++h) {
        const detail::DeviceScope scope(launches_[h]->device);
        detail::clear_cuda_status(cudaStreamSynchronize(launches_[h]->stream));
      }
      throw;
    }
    std::string stalled = stalled_launch;
    if (earliest != 0) stalled = detail::peer_stall_text(earliest, "stored");
    const std::string start = fabric_.start_failure();
    if (!start.empty()) stalled = start;
    std::exception_ptr failure;
    if (failed)
      failure = std::make_exception_ptr(device_loop_error(
          name() + ": " + (stalled.empty() ? std::string("a grid barrier") : stalled) + " did not complete within " +
          std::to_string(comm_.timeout_ns / 1'000'000) + " ms (are all blocks resident? another kernel may be holding SMs)"));
    else
      for (const auto& r : results)
        if (r.sweeps != results[0].sweeps || r.checks != results[0].checks || r.reason != results[0].reason ||
            r.in_scratch != results[0].in_scratch || std::memcmp(&r.norm, &results[0].norm, sizeof(double)) != 0)
          failure = std::make_exception_ptr(std::logic_error(name() + ": the kernels of one solve ended apart"));
    fabric_.agree(failure, "its solve (a wait that did not complete)", {}, launches_.front()->stream);
    const detail::DeviceLoopResult& r = results[0];
    if (r.in_scratch)
      for (int s = this->first(); s < this->first() + this->held(); ++s) u.part(s).swap(this->part(s).scratch);
    report = detail::device_loop_report(r, report.rhs_norm, plan.check_every, this->options_.max_sweeps,
                                        this->options_.record_history, launches_[0]->workspace);
    report.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    return report;
  }

 private:
  using Slabs = detail::PeerSlab<value_type>;
  using Words = detail::PeerLaunchWords<value_type>;
  using Kernel = std::conditional_t<
      streamed,
      void (*)(Stencil, detail::PeerLaunch<value_type>, detail::Shape, detail::DeviceLoopPlan,
               detail::DeviceLoopState<value_type>*, detail::DeviceLoopStepReport<value_type>*, arith::bits_t<value_type>*),
      void (*)(Stencil, detail::PeerLaunch<value_type>, detail::DeviceLoopPlan, detail::DeviceLoopState<value_type>*,
               detail::DeviceLoopStepReport<value_type>*, arith::bits_t<value_type>*)>;

  // The solver's name in errors.
  static std::string name() {
    return std::string("relax::MultiSolver<") + Schedule::strategy + ", " + PeerFabric<Comm, value_type>::comm_name + ">";
  }

  // The devices of the kernels run here, one entry per kernel.
  std::vector<int> devices_of_local_kernels() const {
    std::vector<int> d;
    const auto [first, count] = fabric_.local_kernels(static_cast<int>(kernels_.size()));
    for (int h = first; h < first + count; ++h) d.push_back(kernels_[static_cast<std::size_t>(h)].first);
    return d;
  }

  // The kernel of this solver: the scope of the flags (the system when the solve spans devices)
  // and, for Sync, the rows a thread takes.
  Kernel pick_kernel() const {
    constexpr auto device = cuda::thread_scope_device, system = cuda::thread_scope_system;
    if constexpr (streamed) {
      constexpr int D = Schedule::halo;
      return cross_device_ ? detail::peer_stream_kernel<Stencil::rank, D, system, Stencil, value_type>
                           : detail::peer_stream_kernel<Stencil::rank, D, device, Stencil, value_type>;
    } else {
      constexpr int deep_rows = Schedule::deep_rows;
      if (deep_)
        return cross_device_ ? detail::peer_sync_kernel<X, Schedule::block_y, deep_rows, system, Stencil, value_type>
                             : detail::peer_sync_kernel<X, Schedule::block_y, deep_rows, device, Stencil, value_type>;
      return cross_device_ ? detail::peer_sync_kernel<X, Schedule::block_y, 1, system, Stencil, value_type>
                           : detail::peer_sync_kernel<X, Schedule::block_y, 1, device, Stencil, value_type>;
    }
  }

  // Threads of a block in y.
  static constexpr int block_y() {
    if constexpr (streamed) return detail::stream_block_y<Stencil::rank>;
    else return Schedule::block_y;
  }
  // The plane queue of the 3D stream, after the table in dynamic shared memory.
  static constexpr std::size_t queue_bytes() {
    if constexpr (streamed && Stencil::rank == 3) return detail::plane_stream_shared_bytes<value_type>(Schedule::halo);
    else return 0;
  }

  // The streamed loop's segment length for slab s, run by `resident` blocks: the single-domain
  // loop's choice for its owned rows.
  std::int64_t stream_segment(int s, std::int64_t resident) const {
    detail::Shape owned = across();
    (Stencil::rank == 2 ? owned.ny : owned.nz) = this->decomposition_[s].owned.count;
    return Sweeper<Strategy>::template work<Stencil, value_type>(owned, resident).first;
  }

  // Whether slab s's neighbour on `side` is in another kernel (and so exchanges flags with it).
  bool flagged(int s, int side) const {
    const Slab& me = this->decomposition_[s];
    if (!(side == 0 ? me.has_prev : me.has_next)) return false;
    return launch_of_[static_cast<std::size_t>(s)] != launch_of_[static_cast<std::size_t>(side == 0 ? s - 1 : s + 1)];
  }

  // One kernel of the solve run here: its device, stream and slabs, the device loop's workspace,
  // its words (the fabric's), the table of its slabs and every kernel's words, and how many
  // blocks it runs. Made with its device current (its memory is there).
  struct Launch {
    // Loads the kernel (a cooperative launch must not wait on a module load) and sizes the grid:
    // the resident blocks of the device, shared by the solve's `sharing` kernels on it.
    Launch(int d, std::vector<int> s, Kernel k, std::int64_t sharing, const std::string& name)
        : device(d), slabs(std::move(s)), kernel(k), table(slabs.size()), host_table(slabs.size()),
          shared_bytes(detail::peer_table_bytes<value_type>(static_cast<int>(slabs.size()))) {
      detail::require(shared_bytes <= 48 * 1024, "devices", static_cast<int>(slabs.size()),
                      ("at most " + std::to_string(48 * 1024 / sizeof(Slabs)) +
                       " sub-domains in one kernel (its table of them is in shared memory)").c_str());
      cudaFuncAttributes attributes{};
      RELAX_CUDA_CHECK(cudaFuncGetAttributes(&attributes, k));
      shared_bytes += queue_bytes();
      if (shared_bytes + attributes.sharedSizeBytes > detail::shared_bytes_limit())
        throw invalid_argument("D", std::to_string(halo),
                               "a depth whose plane queue and table of sub-domains fit in a block's shared memory (" +
                                   name + ")");
      // Raised, never lowered: kernels of one solve with tables of different sizes share the
      // function (lowering it for a smaller table made the larger one's launch too large).
      if (shared_bytes > static_cast<std::size_t>(attributes.maxDynamicSharedSizeBytes))
        RELAX_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)));
      resident = detail::resident_blocks(k, X * block_y(), shared_bytes, name.c_str()) / sharing;
      detail::require(resident >= 1, "devices", static_cast<int>(sharing), "fewer kernels on one device than it has SMs");
    }
    int device;
    std::vector<int> slabs;
    Kernel kernel;
    Stream stream;
    DeviceLoopWorkspace<value_type> workspace;
    Words* words = nullptr;         // the fabric's
    Words* kernel_words = nullptr;  // the same, as the kernel reaches it (`PeerFabric::alias`)
    PinnedBuffer<Words> host_words{1};
    DeviceBuffer<Slabs> table;
    PinnedBuffer<Slabs> host_table;
    std::size_t shared_bytes;  // the table, in the kernel's shared memory
    DeviceBuffer<Words*> peers{static_cast<std::size_t>(detail::peer_max_launches)};
    PinnedBuffer<Words*> host_peers{static_cast<std::size_t>(detail::peer_max_launches)};
    Event ready;
    std::int64_t resident = 0;
    std::int64_t edge_items = 0, items = 0;  // its work items (the stream: its segments)
    std::int64_t most_items = 0;              // the work items of its largest pass
  };

  // Collective with one process per GPU: checks the grids, gives the workspaces `u`'s rings, and
  // returns ‖b‖ over every process's slabs (the max of the bits of |‖b‖|: NaN above every
  // number, as in `collect_max`), in one agreement that no process refused its grids.
  double begin_everywhere(DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    std::exception_ptr local;
    double mine = 0;
    try {
      this->begin(u, b);
      for (int s = this->first(); s < this->first() + this->held(); ++s) fabric_.require_reachable(u.part(s).data(), s);
      mine = this->rhs_norm(u, b);
    } catch (...) {
      local = std::current_exception();
    }
    const auto most = fabric_.agree(
        local, "to begin its solve (its grids)",
        {static_cast<unsigned long long>(arith::abs_bits(static_cast<value_type>(mine)))}, launches_.front()->stream);
    if (fabric_.alone()) return mine;
    return static_cast<double>(arith::from_bits<value_type>(static_cast<arith::bits_t<value_type>>(most[0])));
  }

  // Zeroes the launch's words and its slabs' flags and uploads its tables, on its stream.
  void prepare(std::size_t h, DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b,
               const detail::DeviceLoopPlan& plan) {
    Launch& l = *launches_[h];
    const detail::DeviceScope scope(l.device);
    l.workspace.reserve(1, plan.history_capacity);
    l.workspace.reset(l.stream);
    RELAX_CUDA_CHECK(cudaMemsetAsync(l.words, 0, sizeof(Words), l.stream));
    for (std::size_t k = 0; k < l.slabs.size(); ++k) {
      const int s = l.slabs[k];
      const int held = s - this->first();
      RELAX_CUDA_CHECK(cudaMemsetAsync(fabric_.flags(held), 0, fabric_.flag_bytes(held), l.stream));
      describe(s, u, b, l.host_table.data()[k]);
    }
    if constexpr (streamed) {
      std::tie(l.edge_items, l.items) = detail::peer_stream_number(l.host_table.data(), l.slabs.size());
      l.most_items = l.items * stream_groups_deepest();
    } else {
      std::tie(l.edge_items, l.items) = detail::peer_number(l.host_table.data(), l.slabs.size());
      l.most_items = l.items;
    }
    for (int m = 0; m < launches(); ++m)
      fabric_.point(l.host_peers.data()[m], fabric_.board(fabric_.twin_kernel(m) - first_kernel_), fabric_.owner_of_kernel(m));
    const std::size_t table_bytes = l.slabs.size() * sizeof(Slabs);
    const std::size_t peer_bytes = static_cast<std::size_t>(launches()) * sizeof(Words*);
    RELAX_CUDA_CHECK(cudaMemcpyAsync(l.table.data(), l.host_table.data(), table_bytes, cudaMemcpyHostToDevice, l.stream));
    RELAX_CUDA_CHECK(cudaMemcpyAsync(l.peers.data(), l.host_peers.data(), peer_bytes, cudaMemcpyHostToDevice, l.stream));
    fabric_.resolve(l.stream, {{l.host_table.data(), l.table.data(), table_bytes}, {l.host_peers.data(), l.peers.data(), peer_bytes}});
    l.ready.record(l.stream);
  }

  // Slab s as its kernel sees it, written into `t` (its entry of the host table: the fabric may
  // leave fields there for the device to fill).
  void describe(int s, DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b, Slabs& t) {
    const Slab& me = this->decomposition_[s];
    t = Slabs{};
    // The slab's own arrays and flags as its kernel reaches them (the neighbours' stores come
    // through the same addresses); b is only read.
    const int mine = fabric_.owner_of_slab(s);
    fabric_.point(t.array[0], u.part(s).origin(), mine);
    fabric_.point(t.array[1], this->part(s).scratch.origin(), mine);
    t.b = b.part(s).origin();
    t.g = detail::shape_of(u.part(s).layout());
    for (int side = 0; side < 2; ++side) {
      const bool has = side == 0 ? me.has_prev : me.has_next;
      const int n = side == 0 ? s - 1 : s + 1;
      t.neighbour[side] = has ? n : -1;
      if (!has) continue;
      // The neighbour's memory: that of its twin here (the held slab at its place, allocated
      // alike), in the neighbour's process, at the neighbour's own lead.
      const int twin = fabric_.twin_slab(n), owner = fabric_.owner_of_slab(n);
      const GridLayout theirs = this->decomposition_[n].template layout<value_type>();
      fabric_.point(t.out[side][0], u.part(twin).data() + theirs.lead, owner);
      fabric_.point(t.out[side][1], this->part(twin).scratch.data() + theirs.lead, owner);
      if constexpr (streamed)
        t.shift[side] = detail::peer_halo_shift(me.origin_row, this->decomposition_[n].origin_row,
                                                Stencil::rank == 2 ? t.g.pitch : t.g.plane);
      else
        t.shift[side] = detail::peer_ring_shift(side, t.g, detail::shape_of(theirs), Stencil::rank);
      if (flagged(s, side)) {
        fabric_.point(t.inbound[side], fabric_.flags(s - this->first()) + side * band_items_, mine);
        fabric_.point(t.outbound[side], fabric_.flags(twin - this->first()) + (1 - side) * band_items_, owner);
      }
    }
    if constexpr (streamed) {
      const std::int64_t owned = me.owned.count;
      detail::peer_stream_tile(t, me.has_prev ? halo : 1, owned, halo, segment_[static_cast<std::size_t>(s)]);
      for (int side = 0; side < 2; ++side) {
        const int n = side == 0 ? s - 1 : s + 1;
        t.inbound_segments[side] =
            t.neighbour[side] < 0
                ? 0
                : detail::peer_band_segments(this->decomposition_[n].owned.count, halo,
                                             segment_[static_cast<std::size_t>(n)], 1 - side);
      }
    } else {
      detail::peer_tile(t, t.g, Stencil::rank, X * detail::Vec16<value_type>::width, Schedule::block_y,
                        deep_ ? Schedule::deep_rows : 1);
    }
    t.index = s;
    t.silent = comm_.silent_subdomain == s ? 1 : 0;
  }

  void launch(std::size_t h, const detail::DeviceLoopPlan& plan) {
    Launch& l = *launches_[h];
    const detail::DeviceScope scope(l.device);
    const unsigned blocks = static_cast<unsigned>(std::max<std::int64_t>(1, std::min(l.most_items, l.resident)));
    // Boundary blocks (the Sync kernel; the constructor refuses roles for the streamed one).
    const std::int64_t boundary =
        !streamed && comm_.blocks == BlockRoles::specialised ? detail::peer_boundary_blocks(l.edge_items, l.items, blocks) : 0;
    const detail::PeerLaunch<value_type> args{l.table.data(), static_cast<int>(l.slabs.size()), l.edge_items, l.items,
                                              l.kernel_words, l.peers.data(), launches(),
                                              first_kernel_ + static_cast<int>(h), boundary};
    if constexpr (streamed)
      detail::launch_cooperative(l.kernel, dim3(blocks), dim3(X, block_y()), l.shared_bytes, l.stream, this->stencil_,
                                 args, across(), plan, l.workspace.state(), l.workspace.reports(), l.workspace.history());
    else
      detail::launch_cooperative(l.kernel, dim3(blocks), dim3(X, block_y()), l.shared_bytes, l.stream, this->stencil_,
                                 args, plan, l.workspace.state(), l.workspace.reports(), l.workspace.history());
  }

  // The streamed kernel's shape of what every slab shares (the extents across the slowest axis
  // and the strides; the slowest extent and the origin are each slab's own).
  detail::Shape across() const { return detail::shape_of(this->part(this->first()).scratch.layout()); }

  // The strip groups (2D) or (x, y) tiles (3D) of a pass of depth D (the most of any pass: the
  // kept part of a strip or tile narrows as the depth grows).
  std::int64_t stream_groups_deepest() const {
    return detail::stream_groups<Stencil::rank, Schedule::halo, value_type>(across());
  }

  Comm comm_;
  bool deep_ = false;
  bool cross_device_ = false;
  std::int64_t band_items_ = 0;                          // tiles of an edge band, the same in every slab
  std::vector<std::pair<int, std::vector<int>>> kernels_;  // every kernel of the solve: its device and slabs
  int first_kernel_ = 0;                                 // the first of them run here
  std::vector<int> launch_of_;                           // the kernel of each slab
  std::vector<Event> begun_;                             // each held slab's copies of begin(), on its stream
  std::vector<std::unique_ptr<Launch>> launches_;        // the kernels run here
  std::vector<std::int64_t> segment_;                    // the streamed loop: each slab's segment length
};

}  // namespace detail

//! Jacobi on the slabs of a box with no host in the loop, one row (plane) of halo every sweep
//! (see the file comment).
template <class Stencil_, int X, int Y, int Rows>
class MultiSolver<Stencil_, DeviceLoop<SyncTile<X, Y, Rows>>, PeerStore>
    : public detail::PeerStoreSolver<Stencil_, SyncTile<X, Y, Rows>> {
 public:
  using detail::PeerStoreSolver<Stencil_, SyncTile<X, Y, Rows>>::PeerStoreSolver;
};

//! Jacobi on the slabs of a box with no host in the loop and exact temporal blocking: passes of
//! up to D sweeps of the column stream, a D-row (plane) halo after every pass (see
//! `peer_stream_kernel`). Float32 and float64 in 2D and 3D, as the single-domain streamed loop.
template <class Stencil_, int D>
class MultiSolver<Stencil_, DeviceLoop<TemporalBlock<D, ColumnStream>>, PeerStore>
    : public detail::PeerStoreSolver<Stencil_, TemporalBlock<D, ColumnStream>> {
 public:
  using detail::PeerStoreSolver<Stencil_, TemporalBlock<D, ColumnStream>>::PeerStoreSolver;
};

}  // namespace relax
