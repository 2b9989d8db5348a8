#pragma once
//! \file
//! Jacobi on several sub-domains with no host in the loop: `MultiSolver<S, DeviceLoop<Sync>,
//! PeerStore>`. One cooperative kernel per device runs the whole solve over the slabs that device
//! holds (or one kernel per slab, `PeerStore::launch_per_subdomain`); the kernels exchange halo
//! rows and take the stop decision among themselves.
//!
//! One sweep, in every kernel (the Sync walk's tiles of all its slabs, taken by the resident
//! blocks in turn, then the kernel's grid barrier):
//! - the tiles that own a slab's edge row (plane) come first ("boundary blocks": they push the
//!   edges while the interior tiles follow). Such a tile also stores its part of the edge row,
//!   through the neighbour's pointer (a peer pointer across devices), into the neighbour's ring
//!   of the same parity: in 2D as a second store of each edge vector inside the walk, in 3D
//!   after the walk, read back from the array just written (see the kernel);
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
//! The same kernel over NVSHMEM, one process per GPU: `multi/nvshmem.cuh`. Not yet built:
//! temporal blocking across slabs (a D-row halo every D sweeps) in the CPU-free form.

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
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace relax {

namespace detail {

//! Block-level: waits until the neighbours' tiles facing tile `r` of the edge bands on `sides`
//! have stored the edge rows of `sweeps` sweeps into the slab's ring. False (and the kernel's
//! failure flag raised) when a wait timed out or another wait failed first; the sub-domain that
//! did not signal is recorded only by a wait that itself ran out of time (a wait cut short by
//! another's failure says nothing of its neighbour). `Scope`: the device, or the system when the
//! solve spans devices.
template <cuda::thread_scope Scope, class T>
__device__ bool peer_wait(const PeerSlab<T>& sl, int sides, std::int64_t r, unsigned long long sweeps,
                          const PeerLaunch<T>& launch, int* failed, std::uint64_t timeout_ns) {
  bool ok = true;
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    for (int side = 0; side < 2 && ok; ++side) {
      if ((sides & (1 << side)) == 0) continue;
      cuda::atomic_ref<unsigned long long, Scope> word(sl.inbound[side][r]);
      const std::uint64_t began = global_ns();
      ok = bounded_wait([&] { return word.load(cuda::memory_order_relaxed) >= sweeps; }, failed, timeout_ns);
      if (!ok && global_ns() - began > timeout_ns)
        atomicMax(&launch.words->stalled, ~(sweeps << peer_stall_bits | static_cast<unsigned long long>(sl.neighbour[side])));
    }
    cuda::atomic_thread_fence(cuda::memory_order_acquire, Scope);
  }
  return __syncthreads_or(!ok) == 0;
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
template <cuda::thread_scope Scope, class T>
struct PeerLoopCounters : DeviceLoopCounters<T> {
  using Bits = arith::bits_t<T>;
  const PeerLaunch<T>& launch;

  __device__ PeerLoopCounters(const DeviceLoopPlan& p, DeviceLoopState<T>* s, DeviceLoopStepReport<T>* reports, Bits* h,
                              const PeerLaunch<T>& l)
      : DeviceLoopCounters<T>(p, s, reports, h), launch(l) {}

  template <int BlockX, int BlockY>
  __device__ bool check(Bits best) {
    this->template post<BlockX, BlockY>(best);
    if (!this->barrier.wait(this->token)) return false;
    Bits norm = this->posted_norm();
    if (launch.launches > 1 && !combine(norm)) return false;
    this->decide(norm);
    return true;
  }

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
__global__ void __launch_bounds__(BlockX* BlockY)
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
        for (std::int64_t v = blockIdx.x; v < launch.items; v += gridDim.x) {
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
        for (std::int64_t v = blockIdx.x; v < launch.items; v += gridDim.x) {
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

//! Jacobi on the slabs of a box with no host in the loop (see the file comment): one
//! `DeviceLoop<SyncTile<X, Y, Rows>>` kernel per device (or per slab), halos stored by the
//! kernels, the stop decision taken on the device. The controller is `Fixed` (a check every M
//! sweeps).
template <class Stencil_, int X, int Y, int Rows>
class MultiSolver<Stencil_, DeviceLoop<SyncTile<X, Y, Rows>>, PeerStore> : public detail::SlabSolverBase<Stencil_> {
  static_assert(is_stencil_v<Stencil_>, "relax::MultiSolver<Stencil, Strategy, Comm>: Stencil is not a stencil");
  static_assert(Stencil_::radius == 1, "relax::MultiSolver<Stencil, DeviceLoop<Sync>, PeerStore>: radius-1 stencils only");
  using Base = detail::SlabSolverBase<Stencil_>;

 public:
  using Stencil = Stencil_;
  using Strategy = DeviceLoop<SyncTile<X, Y, Rows>>;
  using Comm = PeerStore;
  using value_type = typename Stencil::value_type;
  static constexpr int halo = 1;  //!< one row (plane) from each neighbour, every sweep

  //! A solver for the box `global` split into `devices.size()` slabs, slab s on `devices[s]`.
  //! \throws relax::invalid_argument for bad extents, devices, controller, options or `comm`;
  //!         relax::unavailable_error without cooperative launch or peer access between the devices.
  MultiSolver(const Extents& global, std::vector<int> devices, Stencil stencil, Fixed controller = {},
              SolveOptions options = {}, PeerStore comm = {})
      : Base(global, std::move(devices), stencil, controller, options, halo), comm_(comm) {
    detail::require_wait_settings(comm_.timeout_ns, comm_.silent_subdomain, this->size());
    detail::require(this->size() < (1 << detail::peer_stall_bits), "devices", this->size(),
                    "fewer sub-domains than 2^20");
    detail::require(comm_.kernels_per_device >= 1, "comm.kernels_per_device", comm_.kernels_per_device,
                    "at least 1 kernel per device");
    auto groups = detail::peer_kernels(this->devices_, comm_.launch_per_subdomain, comm_.kernels_per_device);
    std::vector<int> distinct;
    for (const auto& g : groups)
      if (std::find(distinct.begin(), distinct.end(), g.first) == distinct.end()) distinct.push_back(g.first);
    detail::require(static_cast<int>(groups.size()) <= detail::peer_max_launches, "devices", static_cast<int>(groups.size()),
                    ("at most " + std::to_string(detail::peer_max_launches) +
                     " kernels (devices, kernels_per_device, or sub-domains with launch_per_subdomain)").c_str());
    for (int d : distinct) {
      const detail::DeviceScope scope(d);
      detail::require_cooperative_launch("relax::MultiSolver<DeviceLoop<Sync>, PeerStore>",
                                         "relax::HostCopy with a launch-based strategy");
    }
    detail::enable_peer_access(distinct);
    {
      const detail::DeviceScope scope(distinct.front());
      deep_ = detail::peer_deep_rows<X, Y, Rows, Stencil::rank, value_type>(this->decomposition_.global());
    }
    cross_device_ = distinct.size() > 1;
    for (auto& group : groups) {
      const int d = group.first;
      const detail::DeviceScope scope(d);
      const auto sharing = std::count_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == d; });
      launches_.push_back(std::make_unique<Launch>(d, std::move(group.second), pick_kernel(), sharing));
    }
    launch_of_.assign(static_cast<std::size_t>(this->size()), 0);
    for (std::size_t h = 0; h < launches_.size(); ++h)
      for (int s : launches_[h]->slabs) launch_of_[static_cast<std::size_t>(s)] = static_cast<int>(h);
    // Flag words (one per tile of an edge band, per side) for the slabs with a neighbour in
    // another kernel; the tiles across a band do not depend on the rows a thread takes.
    band_items_ = detail::peer_band_items(detail::shape_of(this->part(0).scratch.layout()), Stencil::rank,
                                          X * detail::Vec16<value_type>::width, Y);
    for (int s = 0; s < this->size(); ++s) {
      const detail::DeviceScope scope(this->device(s));
      words_.emplace_back(static_cast<std::size_t>(flagged(s, 0) || flagged(s, 1) ? 2 * band_items_ : 1));
      begun_.emplace_back();
    }
    if (comm_.silent_subdomain >= 0)
      detail::require(flagged(comm_.silent_subdomain, 0) || flagged(comm_.silent_subdomain, 1), "comm.silent_subdomain",
                      comm_.silent_subdomain,
                      "a sub-domain with a neighbour in another kernel (within one kernel the grid barrier orders "
                      "the halos, and there are no flags to keep back)");
  }

  //! The kernels a solve runs (one per device, or one per sub-domain).
  int launches() const { return static_cast<int>(launches_.size()); }

  //! Solves A u = b from the initial guess in `u` (its global ring the boundary values) in one
  //! launch per kernel; on return every slab's owned rows hold the last iterate (each slab's
  //! storage may have been exchanged with the solver's workspace). Blocks until the solve is done.
  //! \throws relax::device_loop_error when a wait did not complete (naming the sub-domain or the
  //!         kernel that did not signal).
  SolveReport solve(DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    const auto started = std::chrono::steady_clock::now();
    this->begin(u, b);
    SolveReport report;
    report.rhs_norm = this->rhs_norm(u, b);
    for (int s = 0; s < this->size(); ++s) {  // the kernels store into the workspaces begin() filled
      const detail::DeviceScope scope(this->device(s));
      begun_[static_cast<std::size_t>(s)].record(this->part(s).stream);
    }
    detail::DeviceLoopPlan plan;
    plan.stop = criterion(this->options_);
    plan.rhs_norm = report.rhs_norm;
    plan.check_every = this->controller_.sweeps_before_check();
    plan.history_capacity =
        this->options_.record_history ? detail::tile_count(this->options_.max_sweeps, plan.check_every) : 0;
    plan.barrier_timeout_ns = comm_.timeout_ns;
    for (int h = 0; h < launches(); ++h) prepare(h, u, b, plan);
    for (auto& l : launches_) {  // no kernel starts before every kernel's words are zeroed
      const detail::DeviceScope scope(l->device);
      for (auto& m : launches_) RELAX_CUDA_CHECK(cudaStreamWaitEvent(l->stream, m->ready.get(), 0));
      for (const Event& e : begun_) RELAX_CUDA_CHECK(cudaStreamWaitEvent(l->stream, e.get(), 0));
    }
    std::vector<detail::DeviceLoopResult> results;
    std::string stalled_launch;
    unsigned long long earliest = 0;
    bool failed = false;
    int launched = 0;
    try {
      for (; launched < launches(); ++launched) launch(launched, plan);
      for (auto& l : launches_) {
        const detail::DeviceScope scope(l->device);
        RELAX_CUDA_CHECK(cudaMemcpyAsync(l->host_words.data(), l->words.data(), sizeof(detail::PeerLaunchWords<value_type>),
                                         cudaMemcpyDeviceToHost, l->stream));
        results.push_back(l->workspace.read(l->stream, this->options_.record_history));
        failed = failed || l->workspace.failed();
        const auto& w = l->host_words.data()[0];
        earliest = std::max(earliest, w.stalled);
        if (stalled_launch.empty() && w.stalled_launch != 0)
          stalled_launch = "the kernel of sub-domain " +
                           std::to_string(launches_[static_cast<std::size_t>(w.stalled_launch - 1)]->slabs.front()) +
                           " never posted its norm";
      }
    } catch (...) {
      // The kernels already running still store into other slabs' memory: none outlives the
      // solve (each ends at the latest when its waits time out).
      for (int h = 0; h < launched; ++h) {
        const detail::DeviceScope scope(launches_[static_cast<std::size_t>(h)]->device);
        detail::clear_cuda_status(cudaStreamSynchronize(launches_[static_cast<std::size_t>(h)]->stream));
      }
      throw;
    }
    std::string stalled = stalled_launch;
    if (earliest != 0) stalled = detail::peer_stall_text(earliest, "stored");
    if (failed)
      throw device_loop_error("relax::MultiSolver<DeviceLoop<Sync>, PeerStore>: " +
                              (stalled.empty() ? std::string("a grid barrier") : stalled) + " did not complete within " +
                              std::to_string(comm_.timeout_ns / 1'000'000) +
                              " ms (are all blocks resident? another kernel may be holding SMs)");
    for (const auto& r : results)
      if (r.sweeps != results[0].sweeps || r.checks != results[0].checks || r.reason != results[0].reason ||
          r.in_scratch != results[0].in_scratch || std::memcmp(&r.norm, &results[0].norm, sizeof(double)) != 0)
        throw std::logic_error("relax::MultiSolver<PeerStore>: the kernels of one solve ended apart");
    const detail::DeviceLoopResult& r = results[0];
    if (r.in_scratch)
      for (int s = 0; s < this->size(); ++s) u.part(s).swap(this->part(s).scratch);
    report = detail::device_loop_report(r, report.rhs_norm, plan.check_every, this->options_.max_sweeps,
                                        this->options_.record_history, launches_[0]->workspace);
    report.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    return report;
  }

 private:
  using Slabs = detail::PeerSlab<value_type>;
  using Words = detail::PeerLaunchWords<value_type>;
  static constexpr int deep_rows = Rows == dynamic ? tuning::sync_deep_rows : Rows;
  using Kernel = void (*)(Stencil, detail::PeerLaunch<value_type>, detail::DeviceLoopPlan,
                          detail::DeviceLoopState<value_type>*, detail::DeviceLoopStepReport<value_type>*,
                          arith::bits_t<value_type>*);

  // The kernel of this solver: rows a thread takes, and the scope of the flags (the system when
  // the solve spans devices).
  Kernel pick_kernel() const {
    constexpr auto device = cuda::thread_scope_device, system = cuda::thread_scope_system;
    if (deep_)
      return cross_device_ ? detail::peer_sync_kernel<X, Y, deep_rows, system, Stencil, value_type>
                           : detail::peer_sync_kernel<X, Y, deep_rows, device, Stencil, value_type>;
    return cross_device_ ? detail::peer_sync_kernel<X, Y, 1, system, Stencil, value_type>
                         : detail::peer_sync_kernel<X, Y, 1, device, Stencil, value_type>;
  }

  // Whether slab s's neighbour on `side` is in another kernel (and so exchanges flags with it).
  bool flagged(int s, int side) const {
    const Slab& me = this->decomposition_[s];
    if (!(side == 0 ? me.has_prev : me.has_next)) return false;
    return launch_of_[static_cast<std::size_t>(s)] != launch_of_[static_cast<std::size_t>(side == 0 ? s - 1 : s + 1)];
  }

  // One kernel of the solve: its device, stream and slabs, the device loop's workspace, its
  // words, the table of its slabs and every kernel's words, and how many blocks it runs. Made
  // with its device current (its memory is there).
  struct Launch {
    // Loads the kernel (a cooperative launch must not wait on a module load) and sizes the grid:
    // the resident blocks of the device, shared by the solve's `sharing` kernels on it.
    Launch(int d, std::vector<int> s, Kernel k, std::int64_t sharing)
        : device(d), slabs(std::move(s)), kernel(k), table(slabs.size()), host_table(slabs.size()),
          shared_bytes(slabs.size() * sizeof(Slabs)) {
      detail::require(shared_bytes <= 48 * 1024, "devices", static_cast<int>(slabs.size()),
                      ("at most " + std::to_string(48 * 1024 / sizeof(Slabs)) +
                       " sub-domains in one kernel (its table of them is in shared memory)").c_str());
      cudaFuncAttributes attributes{};
      RELAX_CUDA_CHECK(cudaFuncGetAttributes(&attributes, k));
      resident = detail::resident_blocks(k, X * Y, shared_bytes, "MultiSolver<DeviceLoop<SyncTile>, PeerStore>") / sharing;
      detail::require(resident >= 1, "devices", static_cast<int>(sharing), "fewer kernels on one device than it has SMs");
    }
    int device;
    std::vector<int> slabs;
    Kernel kernel;
    Stream stream;
    DeviceLoopWorkspace<value_type> workspace;
    DeviceBuffer<Words> words{1};
    PinnedBuffer<Words> host_words{1};
    DeviceBuffer<Slabs> table;
    PinnedBuffer<Slabs> host_table;
    std::size_t shared_bytes;  // the table, in the kernel's shared memory
    DeviceBuffer<Words*> peers{static_cast<std::size_t>(detail::peer_max_launches)};
    PinnedBuffer<Words*> host_peers{static_cast<std::size_t>(detail::peer_max_launches)};
    Event ready;
    std::int64_t resident = 0;
    std::int64_t edge_items = 0, items = 0;
  };

  // Zeroes the launch's words and its slabs' flags and uploads its tables, on its stream.
  void prepare(int h, DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b,
               const detail::DeviceLoopPlan& plan) {
    Launch& l = *launches_[static_cast<std::size_t>(h)];
    const detail::DeviceScope scope(l.device);
    l.workspace.reserve(1, plan.history_capacity);
    l.workspace.reset(l.stream);
    RELAX_CUDA_CHECK(cudaMemsetAsync(l.words.data(), 0, sizeof(Words), l.stream));
    for (std::size_t k = 0; k < l.slabs.size(); ++k) {
      const int s = l.slabs[k];
      auto& flags = words_[static_cast<std::size_t>(s)];
      RELAX_CUDA_CHECK(cudaMemsetAsync(flags.data(), 0, flags.size() * sizeof(unsigned long long), l.stream));
      l.host_table.data()[k] = describe(s, u, b);
    }
    std::tie(l.edge_items, l.items) = detail::peer_number(l.host_table.data(), l.slabs.size());
    for (int m = 0; m < launches(); ++m) l.host_peers.data()[m] = launches_[static_cast<std::size_t>(m)]->words.data();
    RELAX_CUDA_CHECK(cudaMemcpyAsync(l.table.data(), l.host_table.data(), l.slabs.size() * sizeof(Slabs),
                                     cudaMemcpyHostToDevice, l.stream));
    RELAX_CUDA_CHECK(cudaMemcpyAsync(l.peers.data(), l.host_peers.data(), static_cast<std::size_t>(launches()) * sizeof(Words*),
                                     cudaMemcpyHostToDevice, l.stream));
    l.ready.record(l.stream);
  }

  // Slab s as its kernel sees it.
  Slabs describe(int s, DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    const Slab& me = this->decomposition_[s];
    Slabs t{};
    t.array[0] = u.part(s).origin();
    t.array[1] = this->part(s).scratch.origin();
    t.b = b.part(s).origin();
    t.g = detail::shape_of(u.part(s).layout());
    for (int side = 0; side < 2; ++side) {
      const bool has = side == 0 ? me.has_prev : me.has_next;
      const int n = side == 0 ? s - 1 : s + 1;
      t.neighbour[side] = has ? n : -1;
      if (!has) continue;
      t.out[side][0] = u.part(n).origin();
      t.out[side][1] = this->part(n).scratch.origin();
      t.shift[side] = detail::peer_ring_shift(side, t.g, detail::shape_of(u.part(n).layout()), Stencil::rank);
      if (flagged(s, side)) {
        t.inbound[side] = words_[static_cast<std::size_t>(s)].data() + side * band_items_;
        t.outbound[side] = words_[static_cast<std::size_t>(n)].data() + (1 - side) * band_items_;
      }
    }
    detail::peer_tile(t, t.g, Stencil::rank, X * detail::Vec16<value_type>::width, Y, deep_ ? deep_rows : 1);
    t.index = s;
    t.silent = comm_.silent_subdomain == s ? 1 : 0;
    return t;
  }

  void launch(int h, const detail::DeviceLoopPlan& plan) {
    Launch& l = *launches_[static_cast<std::size_t>(h)];
    const detail::DeviceScope scope(l.device);
    const detail::PeerLaunch<value_type> args{l.table.data(), static_cast<int>(l.slabs.size()), l.edge_items, l.items,
                                              l.words.data(), l.peers.data(), launches(), h};
    const unsigned blocks = static_cast<unsigned>(std::max<std::int64_t>(1, std::min(l.items, l.resident)));
    detail::launch_cooperative(l.kernel, dim3(blocks), dim3(X, Y), l.shared_bytes, l.stream, this->stencil_, args, plan, l.workspace.state(),
                               l.workspace.reports(), l.workspace.history());
  }

  PeerStore comm_;
  bool deep_ = false;
  bool cross_device_ = false;
  std::int64_t band_items_ = 0;                        // tiles of an edge band, the same in every slab
  std::vector<int> launch_of_;                         // the kernel of each slab
  std::vector<DeviceBuffer<unsigned long long>> words_;  // each slab's flags, on its device
  std::vector<Event> begun_;                             // each slab's copies of begin(), on its stream
  std::vector<std::unique_ptr<Launch>> launches_;
};

}  // namespace relax
