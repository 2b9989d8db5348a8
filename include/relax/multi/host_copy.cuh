#pragma once
//! \file
//! Jacobi on several sub-domains, controlled from the host: the slabs of a `relax::Decomposition`
//! (`domain/decomposition.hpp`), each on a GPU of its own or several on one GPU (a device may be
//! named more than once), swept by a launch-based exact strategy, their halo rows exchanged by
//! copies the host queues (`HostCopy`). The CPU-controlled baseline of the multi-GPU study.
//!
//! One solve, as `reference::solve_split` emulates it on the host:
//! - rounds of up to H sweeps (H = the strategy's exchange depth: 1 for Sync, D for
//!   `TemporalBlock<D, ColumnStream>`), one launch per slab and round, each slab on its own stream;
//! - after every round the halo exchange: slab k receives the H rows next to its owned rows from
//!   each neighbour, a `cudaMemcpyPeerAsync` on k's stream that waits (an event) for the
//!   neighbour's round, and the neighbour's next round waits for that copy;
//! - a check every M sweeps, after an exchange: every slab's residual over its whole local box
//!   (its halo rows then hold the neighbours' current values, so each local point's residual is
//!   the global one), ρ the max over the slabs (order-free), and the single-domain stop decision.
//! So sweeps, checks, ρ and the owned rows equal the single-domain solve bit for bit. ‖b‖ is the
//! max over the slabs' owned rows, with boundary values only from the global ring.
//!
//! Not yet built: overlap of interior compute with the exchange, the other Comm policies (Nccl,
//! Nvshmem), BlockAsync across slabs. The CPU-free form is `multi/peer_store.cuh`.

#include <relax/multi/distributed.cuh>
#include <relax/strategy/column_stream.cuh>
#include <relax/strategy/sync.cuh>
#include <relax/strategy/traits.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace relax {

namespace detail {

//! Sweeps a strategy runs between two halo exchanges, and so the halo it needs (× the radius): 0
//! for strategies the multi-sub-domain solver does not run.
template <class Strategy>
struct exchange_depth : std::integral_constant<int, 0> {};
template <int X, int Y, int R>
struct exchange_depth<SyncTile<X, Y, R>> : std::integral_constant<int, 1> {};
template <int D>
struct exchange_depth<TemporalBlock<D, ColumnStream>> : std::integral_constant<int, D == dynamic ? 0 : D> {};

}  // namespace detail

//! Jacobi on the slabs of a box, one per entry of `devices`, the host queueing the halo copies
//! (see the file comment).
template <class Stencil_, class Strategy_, class Comm_>
class MultiSolver : public detail::SlabSolverBase<Stencil_> {
  static_assert(is_stencil_v<Stencil_>, "relax::MultiSolver<Stencil, Strategy, Comm>: Stencil is not a stencil");
  static_assert(detail::exchange_depth<Strategy_>::value > 0,
                "relax::MultiSolver<Stencil, Strategy, HostCopy>: the strategy must be Sync (SyncTile) or "
                "TemporalBlock<D, ColumnStream> with a fixed D (exact, with a known exchange depth)");
  static_assert(std::is_same_v<Comm_, HostCopy>,
                "relax::MultiSolver<Stencil, Strategy, Comm>: the Comm policies built so far are relax::HostCopy "
                "(launch-based strategies) and relax::PeerStore (with DeviceLoop<Sync>, multi/peer_store.cuh)");
  using Base = detail::SlabSolverBase<Stencil_>;

 public:
  using Stencil = Stencil_;
  using Strategy = Strategy_;
  using Comm = Comm_;
  using value_type = typename Stencil::value_type;
  //! Rows (planes) each slab receives from a neighbour: radius × the sweeps between exchanges.
  static constexpr int halo = Stencil::radius * detail::exchange_depth<Strategy>::value;

  //! A solver for the box `global` split into `devices.size()` slabs, slab s on `devices[s]`.
  //! \throws relax::invalid_argument for bad extents, devices, controller or options (overlapped
  //!         checks included), or a slab thinner than the halo.
  MultiSolver(const Extents& global, std::vector<int> devices, Stencil stencil, Fixed controller = {},
              SolveOptions options = {})
      : Base(global, std::move(devices), stencil, controller, options, halo),
        events_(static_cast<std::size_t>(this->size())) {}

  //! Solves A u = b from the initial guess in `u` (its global ring the boundary values); on return
  //! every slab's owned rows hold the last iterate (each slab's storage may have been exchanged
  //! with the solver's workspace). Blocks until the solve is done.
  SolveReport solve(DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    const auto started = std::chrono::steady_clock::now();
    this->begin(u, b);
    SolveReport report;
    report.rhs_norm = this->rhs_norm(u, b);
    const StopCriterion stop = criterion(this->options_);
    const std::int64_t check_every = this->controller_.sweeps_before_check();
    for (;;) {
      const std::int64_t batch = std::min(check_every, this->options_.max_sweeps - report.sweeps);
      for (std::int64_t done = 0; done < batch;) {
        const int sweeps = static_cast<int>(std::min<std::int64_t>(detail::exchange_depth<Strategy>::value, batch - done));
        round(u, b, sweeps);
        exchange(u);
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
  // The events that order a slab's rounds and copies against its neighbours'.
  struct Events {
    Event swept;   // its last round is done
    Event copied;  // its last halo copies (reads of its neighbours' owned rows) are done
  };

  // The slabs' neighbours.
  template <class F>
  void for_neighbours(int s, F&& f) const {
    if (this->decomposition_[s].has_prev) f(s - 1);
    if (this->decomposition_[s].has_next) f(s + 1);
  }

  // `sweeps` sweeps (one launch) on every slab, each after its neighbours have copied the rows
  // this round overwrites.
  void round(DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b, int sweeps) {
    for (int s = 0; s < this->size(); ++s) {
      const detail::DeviceScope scope(this->device(s));
      auto& p = this->part(s);
      for_neighbours(s, [&](int n) { RELAX_CUDA_CHECK(cudaStreamWaitEvent(p.stream, events_[n].copied.get(), 0)); });
      Sweeper<Strategy>::run(this->stencil_, u.part(s), p.scratch, b.part(s),
                             Batch{sweeps, detail::exchange_depth<Strategy>::value, family_v<Strategy>}, p.stream);
      events_[s].swept.record(p.stream);
    }
  }

  // Every slab receives the H rows next to its owned rows from each neighbour, once that
  // neighbour's round is done.
  void exchange(DistributedGrid<value_type>& u) {
    const GridLayout& l = this->part(0).scratch.layout();
    const std::int64_t line = l.rank() == 3 ? l.plane : l.pitch;  // elements of one storage row (plane)
    for (int s = 0; s < this->size(); ++s) {
      const detail::DeviceScope scope(this->device(s));
      auto& p = this->part(s);
      const Slab& me = this->decomposition_[s];
      auto receive = [&](const RowRange& rows, int from) {
        RELAX_CUDA_CHECK(cudaStreamWaitEvent(p.stream, events_[from].swept.get(), 0));
        const Slab& them = this->decomposition_[from];
        value_type* to = u.part(s).data() + me.storage_row(rows.first) * line;
        const value_type* source = u.part(from).data() + them.storage_row(rows.first) * line;
        RELAX_CUDA_CHECK(cudaMemcpyPeerAsync(to, this->device(s), source, this->device(from),
                                             static_cast<std::size_t>(rows.count * line) * sizeof(value_type), p.stream));
      };
      if (me.has_prev) receive(me.receive_from_prev(), s - 1);
      if (me.has_next) receive(me.receive_from_next(), s + 1);
      events_[s].copied.record(p.stream);
    }
  }

  // ρ's numerator: the max over the slabs of the residual over their whole local boxes (after an
  // exchange, every local point's residual is the global one).
  double residual_norm(const DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    for (int s = 0; s < this->size(); ++s) {
      const detail::DeviceScope scope(this->device(s));
      request_residual_norm(this->stencil_, u.part(s), b.part(s), this->part(s).slot, this->part(s).stream);
    }
    return this->collect_max();
  }

  std::vector<Events> events_;
};

}  // namespace relax
