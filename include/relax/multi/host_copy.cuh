#pragma once
//! \file
//! Jacobi on several sub-domains, controlled from the host: the slabs of a `relax::Decomposition`
//! (`domain/decomposition.hpp`), each on a GPU of its own or several on one GPU (a device may be
//! named more than once), swept by a launch-based exact strategy, their halo rows exchanged by
//! copies the host queues (`HostCopy`). The CPU-controlled baseline of the multi-GPU study.
//!
//! One solve, as `reference::solve_split` emulates it on the host:
//! - rounds of up to H sweeps (H = the strategy's exchange depth: 1 for Sync, D for
//!   `TemporalBlock<D, ColumnStream>` and `TemporalBlock<D, Tile>`), one launch per slab and
//!   round, each slab on its own stream;
//! - after every round the halo exchange: slab k receives the H rows next to its owned rows from
//!   each neighbour, a `cudaMemcpyPeerAsync` on k's stream that waits (an event) for the
//!   neighbour's round, and the neighbour's next round waits for that copy;
//! - a check every M sweeps, after an exchange: every slab's residual over its whole local box
//!   (its halo rows then hold the neighbours' current values, so each local point's residual is
//!   the global one), ρ the max over the slabs (order-free), and the single-domain stop decision.
//! So sweeps, checks, ρ and the owned rows equal the single-domain solve bit for bit. ‖b‖ is the
//! max over the slabs' owned rows, with boundary values only from the global ring.
//!
//! `BlockAsync<D, Tile>` runs rounds of one launch of D local sweeps with a one-row halo: its tiles
//! read their halos (the slab's ring rows too) as they were at the launch's start, and the slabs'
//! tiles are cut at the slabs' edges, so the solve is not the single-domain one but its split
//! host emulation, `reference::solve_split` with the `TiledSchedule` of D and the tile, bit for bit.
//!
//! With `HostCopy::overlap` (Sync), a round sweeps each slab's edge rows first (the rows its
//! neighbours receive), on the slab's stream; the copies wait only for those, and the rest of the
//! slab is swept on a second stream meanwhile, joined before the slab's next round and its check.
//! The same solver with `Nccl` (`multi/nccl.cuh`) sends and receives the halos through NCCL
//! instead (`detail::HaloExchange` is the part that differs). The CPU-free forms are
//! `multi/peer_store.cuh` and `multi/nvshmem.cuh`.

#include <relax/multi/distributed.cuh>
#include <relax/strategy/device_loop.hpp>
#include <relax/strategy/column_stream.cuh>
#include <relax/strategy/sync.cuh>
#include <relax/strategy/tiled.cuh>
#include <relax/strategy/traits.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace relax {

namespace detail {

//! Sweeps of one round of a strategy on a slab (one launch) between two halo exchanges: 0 for
//! strategies the multi-sub-domain solver does not run (a depth chosen at run time among them).
template <class Strategy>
struct round_sweeps : std::integral_constant<int, 0> {};
template <int X, int Y, int R>
struct round_sweeps<SyncTile<X, Y, R>> : std::integral_constant<int, 1> {};
template <int D, class TileShape>
struct round_sweeps<TemporalBlock<D, TileShape>>
    : std::integral_constant<int, D == dynamic || is_resident_shape<TileShape> ? 0 : D> {};
template <int D, class TileShape>
struct round_sweeps<BlockAsync<D, TileShape>> : std::integral_constant<int, D == dynamic ? 0 : D> {};

//! Rows (× the radius) a slab receives from each neighbour after a round: the round's sweeps for
//! an exact strategy (the rows its D sweeps read across the slab's edge), one for a
//! block-asynchronous one (its halos stay as they were at the launch's start).
template <class Strategy>
struct exchange_depth : round_sweeps<Strategy> {};
template <int D, class TileShape>
struct exchange_depth<BlockAsync<D, TileShape>> : std::integral_constant<int, D == dynamic ? 0 : 1> {};

//! Comm policies whose halos the host moves after every round (each has a `HaloExchange`).
template <class Comm>
struct is_host_exchange : std::false_type {};
template <>
struct is_host_exchange<HostCopy> : std::true_type {};

//! How a host-controlled solver with Comm policy `Comm` moves the halos after a round: `HostCopy`
//! here, `Nccl` in `multi/nccl.cuh`, `Nvshmem` in `multi/nvshmem.cuh`. `held<T>(global, devices,
//! comm, halo)` says which slabs this process holds and where their storage comes from (the
//! default `SlabPlacement`: one per device, all of them);
//! `before_round(s, stream)` orders slab s's next round after what the exchange still reads or
//! writes of its arrays; `after_round(s, stream)` marks the round done; `exchange(u, stream_of)`
//! gives every held slab the H rows next to its owned rows from each neighbour (slab s's work on
//! `stream_of(s)`); `global_max<T>(v, stream)` is the max of this process's norm `v` over every
//! process of the solve (`v` itself when one process holds every slab).
template <class Comm>
class HaloExchange;

template <>
class HaloExchange<HostCopy> {
 public:
  template <class T>
  static SlabPlacement<T> held(const Extents&, const std::vector<int>&, const HostCopy&, int) {
    return {};
  }

  //! The events of slab s on `devices[s]` (an event is recorded on streams of its own device).
  HaloExchange(const Decomposition& d, const std::vector<int>& devices, const HostCopy&) : decomposition_(d) {
    events_.reserve(devices.size());
    for (int device : devices) {
      const DeviceScope scope(device);
      events_.emplace_back();
    }
  }

  void before_round(int s, cudaStream_t stream) {
    for_neighbours(s, [&](int n) { RELAX_CUDA_CHECK(cudaStreamWaitEvent(stream, event(n).copied.get(), 0)); });
  }
  void after_round(int s, cudaStream_t stream) { event(s).swept.record(stream); }
  template <class T>
  double global_max(double v, cudaStream_t) const {
    return v;
  }

  //! Slab s copies the rows from each neighbour with `cudaMemcpyPeerAsync` on its stream, once
  //! that neighbour's round is done.
  template <class T, class Streams>
  void exchange(DistributedGrid<T>& u, Streams&& stream_of) {
    const GridLayout& l = u.part(0).layout();
    const std::int64_t line = l.rank() == 3 ? l.plane : l.pitch;  // elements of one storage row (plane)
    for (int s = 0; s < decomposition_.size(); ++s) {
      const DeviceScope scope(u.device(s));
      const cudaStream_t stream = stream_of(s);
      const Slab& me = decomposition_[s];
      auto receive = [&](const RowRange& rows, int from) {
        RELAX_CUDA_CHECK(cudaStreamWaitEvent(stream, event(from).swept.get(), 0));
        const Slab& them = decomposition_[from];
        T* to = u.part(s).data() + me.storage_row(rows.first) * line;
        const T* source = u.part(from).data() + them.storage_row(rows.first) * line;
        RELAX_CUDA_CHECK(cudaMemcpyPeerAsync(to, u.device(s), source, u.device(from),
                                             static_cast<std::size_t>(rows.count * line) * sizeof(T), stream));
      };
      if (me.has_prev) receive(me.receive_from_prev(), s - 1);
      if (me.has_next) receive(me.receive_from_next(), s + 1);
      event(s).copied.record(stream);
    }
  }

 private:
  // The events that order a slab's rounds and copies against its neighbours'.
  struct Events {
    Event swept;   // its last round is done
    Event copied;  // its last halo copies (reads of its neighbours' owned rows) are done
  };
  Events& event(int s) { return events_[static_cast<std::size_t>(s)]; }
  template <class F>
  void for_neighbours(int s, F&& f) const {
    if (decomposition_[s].has_prev) f(s - 1);
    if (decomposition_[s].has_next) f(s + 1);
  }

  Decomposition decomposition_;
  std::vector<Events> events_;
};

}  // namespace detail

//! Jacobi on the slabs of a box, one per entry of `devices`, the host moving the halos after
//! every round (`HostCopy`: peer copies; `Nccl`: NCCL send/receive) (see the file comment).
template <class Stencil_, class Strategy_, class Comm_>
class MultiSolver : public detail::SlabSolverBase<Stencil_> {
  static_assert(is_stencil_v<Stencil_>, "relax::MultiSolver<Stencil, Strategy, Comm>: Stencil is not a stencil");
  static_assert(detail::round_sweeps<Strategy_>::value > 0,
                "relax::MultiSolver<Stencil, Strategy, HostCopy>: the strategy must be Sync (SyncTile), "
                "TemporalBlock<D, ColumnStream>, TemporalBlock<D, Tile> or BlockAsync<D, Tile>, with a fixed D");
  static_assert(detail::is_host_exchange<Comm_>::value,
                "relax::MultiSolver<Stencil, Strategy, Comm>: the Comm policies built so far are relax::HostCopy and "
                "relax::Nccl (multi/nccl.cuh) with launch-based strategies, and relax::PeerStore with DeviceLoop<Sync> "
                "(multi/peer_store.cuh)");
  using Base = detail::SlabSolverBase<Stencil_>;

 public:
  using Stencil = Stencil_;
  using Strategy = Strategy_;
  using Comm = Comm_;
  using value_type = typename Stencil::value_type;
  //! Rows (planes) each slab receives from a neighbour: radius × the sweeps between exchanges
  //! (radius × 1 for BlockAsync).
  static constexpr int halo = Stencil::radius * detail::exchange_depth<Strategy>::value;
  //! Sweeps between two exchanges (one launch a slab).
  static constexpr int sweeps_per_round = detail::round_sweeps<Strategy>::value;

  //! A solver for the box `global` split into `devices.size()` slabs, slab s on `devices[s]`.
  //! \throws relax::invalid_argument for bad extents, devices, controller or options (overlapped
  //!         checks included), a slab thinner than the halo, or `comm.overlap` with a strategy
  //!         other than Sync.
  MultiSolver(const Extents& global, std::vector<int> devices, Stencil stencil, Fixed controller = {},
              SolveOptions options = {}, Comm comm = {})
      : Base(global, devices, stencil, controller, options, halo, placement(global, devices, comm)),
        exchange_(this->decomposition_, this->devices_, comm) {
    if constexpr (std::is_same_v<Comm, HostCopy>) {
      detail::require(!comm.overlap || detail::is_sync_tile<Strategy>::value, "comm.overlap", "true",
                      "false with this strategy: the overlap of the exchange with interior compute is built for Sync");
      if (comm.overlap)
        for (int s = this->first(); s < this->first() + this->held(); ++s) {
          const detail::DeviceScope scope(this->device(s));
          overlap_.push_back(std::make_unique<Overlap>());
        }
    }
  }

  //! Solves A u = b from the initial guess in `u` (its global ring the boundary values); on return
  //! every slab's owned rows hold the last iterate (each slab's storage may have been exchanged
  //! with the solver's workspace). Blocks until the solve is done.
  SolveReport solve(DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    const auto started = std::chrono::steady_clock::now();
    this->begin(u, b);
    SolveReport report;
    report.rhs_norm = exchange_.template global_max<value_type>(this->rhs_norm(u, b), this->part(this->first()).stream);
    const StopCriterion stop = criterion(this->options_);
    const std::int64_t check_every = this->controller_.sweeps_before_check();
    for (;;) {
      const std::int64_t batch = std::min(check_every, this->options_.max_sweeps - report.sweeps);
      for (std::int64_t done = 0; done < batch;) {
        const int sweeps = static_cast<int>(std::min<std::int64_t>(sweeps_per_round, batch - done));
        if constexpr (detail::is_sync_tile<Strategy>::value) {
          if (!overlap_.empty()) {
            overlapped_round(u, b);
            exchange_.exchange(u, [&](int s) { return this->part(s).stream.get(); });
            join_interiors();
            done += sweeps;
            continue;
          }
        }
        round(u, b, sweeps);
        exchange_.exchange(u, [&](int s) { return this->part(s).stream.get(); });
        done += sweeps;
      }
      report.sweeps += batch;
      const double norm = residual_norm(u, b);
      report.rho = StopCriterion::relative(norm, report.rhs_norm);
      ++report.checks;
      if (this->options_.record_history) report.history.push_back({report.sweeps, report.rho});
      const StopReason decision = stop.decide(norm, report.rhs_norm, report.sweeps);
      if (decision != StopReason::go_on) {
        report.status = to_solve_status(decision);
        break;
      }
    }
    report.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    return report;
  }

 private:
  // `sweeps` sweeps (one launch) on every slab, each once the exchange is done with the rows
  // this round overwrites.
  void round(DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b, int sweeps) {
    for (int s = this->first(); s < this->first() + this->held(); ++s) {
      const detail::DeviceScope scope(this->device(s));
      auto& p = this->part(s);
      exchange_.before_round(s, p.stream);
      Sweeper<Strategy>::run(this->stencil_, u.part(s), p.scratch, b.part(s),
                             Batch{sweeps, sweeps_per_round, family_v<Strategy>}, p.stream);
      exchange_.after_round(s, p.stream);
    }
  }

  // What a slab adds to overlap its exchange: the stream of its interior, and the events that
  // start it after the slab's round may begin and join it before the slab's next round.
  struct Overlap {
    Stream inner;
    Event start, done;
  };

  // One Sync sweep on every slab with the exchange overlapped: the edge rows on the slab's stream
  // (the exchange waits for those), the interior on its second stream.
  void overlapped_round(DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    for (int s = this->first(); s < this->first() + this->held(); ++s) {
      const detail::DeviceScope scope(this->device(s));
      auto& p = this->part(s);
      Overlap& o = *overlap_[static_cast<std::size_t>(s - this->first())];
      const Slab& me = this->decomposition_[s];
      const GridLayout& l = u.part(s).layout();
      const std::int64_t along = l.rank() == 3 ? l.nz() : l.ny();
      exchange_.before_round(s, p.stream);
      o.start.record(p.stream);
      RELAX_CUDA_CHECK(cudaStreamWaitEvent(o.inner.get(), o.start.get(), 0));
      const std::int64_t first_inner = me.has_prev ? 2 : 1, last_inner = me.has_next ? along - 1 : along;
      Sweeper<Strategy>::sweep_rows(this->stencil_, u.part(s), p.scratch, b.part(s), first_inner,
                                    std::max<std::int64_t>(0, last_inner - first_inner + 1), o.inner.get());
      o.done.record(o.inner.get());
      if (me.has_prev) Sweeper<Strategy>::sweep_rows(this->stencil_, u.part(s), p.scratch, b.part(s), 1, 1, p.stream);
      if (me.has_next && (along > 1 || !me.has_prev))
        Sweeper<Strategy>::sweep_rows(this->stencil_, u.part(s), p.scratch, b.part(s), along, 1, p.stream);
      exchange_.after_round(s, p.stream);
      u.part(s).swap(p.scratch);
    }
  }

  // Every slab's stream waits for its interior (after the exchange's copies are queued on it).
  void join_interiors() {
    for (int s = this->first(); s < this->first() + this->held(); ++s) {
      const detail::DeviceScope scope(this->device(s));
      RELAX_CUDA_CHECK(
          cudaStreamWaitEvent(this->part(s).stream.get(), overlap_[static_cast<std::size_t>(s - this->first())]->done.get(), 0));
    }
  }

  // ρ's numerator: the max over the slabs of the residual over their whole local boxes (after an
  // exchange, every local point's residual is the global one).
  double residual_norm(const DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    for (int s = this->first(); s < this->first() + this->held(); ++s) {
      const detail::DeviceScope scope(this->device(s));
      request_residual_norm(this->stencil_, u.part(s), b.part(s), this->part(s).slot, this->part(s).stream);
    }
    return exchange_.template global_max<value_type>(this->collect_max(), this->part(this->first()).stream);
  }

  // The slabs this process holds, as the Comm policy says (all of them, but for a communicator
  // of one process per GPU).
  static typename Base::Placement placement(const Extents& global, const std::vector<int>& devices, const Comm& comm) {
    return detail::HaloExchange<Comm>::template held<value_type>(global, devices, comm, halo);
  }

  detail::HaloExchange<Comm> exchange_;
  std::vector<std::unique_ptr<Overlap>> overlap_;  // one per slab with HostCopy::overlap, else none
};

}  // namespace relax
