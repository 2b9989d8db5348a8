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
//! Not yet built: overlap of interior compute with the exchange, the CPU-free (device-loop) form,
//! the other Comm policies (PeerStore, Nccl, Nvshmem), BlockAsync across slabs.

#include <relax/control/fixed.hpp>
#include <relax/control/report.hpp>
#include <relax/control/stop.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/core/device.hpp>
#include <relax/core/error.hpp>
#include <relax/core/stream.hpp>
#include <relax/domain/decomposition.hpp>
#include <relax/domain/device_grid.hpp>
#include <relax/primitives/blas1.cuh>
#include <relax/primitives/max_norm.cuh>
#include <relax/problem/diffusion.hpp>
#include <relax/reference/split.hpp>
#include <relax/stencil/traits.hpp>
#include <relax/strategy/column_stream.cuh>
#include <relax/strategy/residual.cuh>
#include <relax/strategy/sync.cuh>
#include <relax/strategy/traits.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace relax {

//! The Comm policy of the host-controlled multi-sub-domain solver: the host queues the halo copies
//! after every round of sweeps (see the file comment).
struct HostCopy {};

namespace detail {

//! Sweeps a strategy runs between two halo exchanges, and so the halo it needs (× the radius): 0
//! for strategies the multi-sub-domain solver does not run.
template <class Strategy>
struct exchange_depth : std::integral_constant<int, 0> {};
template <int X, int Y, int R>
struct exchange_depth<SyncTile<X, Y, R>> : std::integral_constant<int, 1> {};
template <int D>
struct exchange_depth<TemporalBlock<D, ColumnStream>> : std::integral_constant<int, D == dynamic ? 0 : D> {};

//! Makes `device` current for the scope and restores the previous one.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    RELAX_CUDA_CHECK(cudaGetDevice(&previous_));
    if (device != previous_) RELAX_CUDA_CHECK(cudaSetDevice(device));
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  ~DeviceScope() { clear_cuda_status(cudaSetDevice(previous_)); }

 private:
  int previous_ = 0;
};

//! Every entry of `devices` names a CUDA device here (repeats allowed), and there is one per slab.
inline void require_devices(const std::vector<int>& devices) {
  require(!devices.empty(), "devices", "none", "at least one device (one per sub-domain; repeats allowed)");
  const int count = device_count();
  for (int d : devices)
    require(d >= 0 && d < count, "devices", d,
            count == 0 ? "a CUDA device, but none is present" : "indices of CUDA devices present here");
}

}  // namespace detail

//! A grid split into the slabs of a `Decomposition`, slab s on device `devices[s]` (its local grid:
//! owned rows, halo rows and ring, with the global index of its first point as its origin).
template <class T>
class DistributedGrid {
 public:
  DistributedGrid(const Decomposition& d, const std::vector<int>& devices) : decomposition_(d), devices_(devices) {
    detail::require_devices(devices);
    detail::require(static_cast<int>(devices.size()) == d.size(), "devices", static_cast<int>(devices.size()),
                    "one device per sub-domain of the decomposition");
    for (int s = 0; s < d.size(); ++s) {
      const detail::DeviceScope scope(devices[static_cast<std::size_t>(s)]);
      parts_.emplace_back(d[s].template layout<T>());
      // The zeroing is on the legacy stream, which the solver's non-blocking streams do not wait for.
      RELAX_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    }
  }

  const Decomposition& decomposition() const { return decomposition_; }
  int size() const { return decomposition_.size(); }
  int device(int s) const { return devices_.at(static_cast<std::size_t>(s)); }
  DeviceGrid<T>& part(int s) { return parts_.at(static_cast<std::size_t>(s)); }
  const DeviceGrid<T>& part(int s) const { return parts_.at(static_cast<std::size_t>(s)); }

  //! Fills every slab from the global grid `global` (its rows, halo rows and ring); blocks.
  //! \throws relax::invalid_argument for a grid of another box.
  void scatter(const HostGrid<T>& global) {
    require_global(global);
    for (int s = 0; s < size(); ++s) {
      const detail::DeviceScope scope(device(s));
      copy(reference::scatter(global, decomposition_[s]), part(s));
    }
  }
  //! Puts every slab's owned rows into `global`; blocks.
  void gather(HostGrid<T>& global) const {
    require_global(global);
    std::vector<HostGrid<T>> locals;
    for (int s = 0; s < size(); ++s) {
      const detail::DeviceScope scope(device(s));
      locals.push_back(to_host(part(s)));
    }
    reference::gather(locals, decomposition_, global);
  }

 private:
  void require_global(const HostGrid<T>& global) const {
    detail::require(global.layout().extents == decomposition_.global(), "global grid", global.layout().extents.to_text(),
                    ("a grid of the decomposition's box " + decomposition_.global().to_text()).c_str());
  }

  Decomposition decomposition_;
  std::vector<int> devices_;
  std::vector<DeviceGrid<T>> parts_;
};

//! Jacobi on the slabs of a box, one per entry of `devices` (see the file comment).
template <class Stencil_, class Strategy_, class Comm_ = HostCopy>
class MultiSolver {
  static_assert(is_stencil_v<Stencil_>, "relax::MultiSolver<Stencil, Strategy, Comm>: Stencil is not a stencil");
  static_assert(detail::exchange_depth<Strategy_>::value > 0,
                "relax::MultiSolver<Stencil, Strategy, Comm>: the strategy must be Sync (SyncTile) or "
                "TemporalBlock<D, ColumnStream> with a fixed D (exact, with a known exchange depth)");
  static_assert(std::is_same_v<Comm_, HostCopy>,
                "relax::MultiSolver<Stencil, Strategy, Comm>: the Comm policy built so far is relax::HostCopy");

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
      : stencil_(stencil), controller_(controller), options_(options), devices_(std::move(devices)),
        decomposition_(checked(global, devices_), static_cast<int>(devices_.size()), halo) {
    controller_.validate();
    options_.validate();
    detail::require(options_.checks == CheckMode::blocking, "options.checks", to_string(options_.checks),
                    "blocking: the multi-sub-domain solver checks after an exchange, with no batch in flight");
    detail::require(global.rank == Stencil::rank, "extents", global.to_text(),
                    Stencil::rank == 3 ? "a 3D box (the stencil is 3D)" : "a 2D box (the stencil is 2D)");
    for (int s = 0; s < decomposition_.size(); ++s) {
      const detail::DeviceScope scope(devices_[static_cast<std::size_t>(s)]);
      parts_.push_back(std::make_unique<Part>(decomposition_[s].template layout<value_type>()));
    }
  }

  const Decomposition& decomposition() const { return decomposition_; }
  const std::vector<int>& devices() const { return devices_; }
  //! A distributed grid of this solver's slabs and devices (zeroed).
  DistributedGrid<value_type> make_grid() const { return DistributedGrid<value_type>(decomposition_, devices_); }

  //! Solves A u = b from the initial guess in `u` (its global ring the boundary values); on return
  //! every slab's owned rows hold the last iterate (each slab's storage may have been exchanged
  //! with the solver's workspace). Blocks until the solve is done.
  SolveReport solve(DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    require_grid(u, "u");
    require_grid(b, "b");
    const auto started = std::chrono::steady_clock::now();
    SolveReport report;
    for (int s = 0; s < size(); ++s) {  // the workspace gets the rings (and the received rows)
      const detail::DeviceScope scope(device(s));
      copy(u.part(s), part(s).scratch, part(s).stream);
    }
    report.rhs_norm = rhs_norm(u, b);
    const StopCriterion stop = criterion(options_);
    const std::int64_t check_every = controller_.sweeps_before_check();
    for (;;) {
      const std::int64_t batch = std::min(check_every, options_.max_sweeps - report.sweeps);
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
      if (options_.record_history) report.history.push_back({report.sweeps, report.rho});
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
  // What one slab keeps: its stream, its workspace grid, its norm word, and the events that order
  // its rounds and its copies against its neighbours'.
  struct Part {
    explicit Part(const GridLayout& layout) : scratch(layout, stream) {}
    Stream stream;
    DeviceGrid<value_type> scratch;
    MaxNormSlot<value_type> slot;
    Event swept;   // its last round is done
    Event copied;  // its last halo copies (reads of its neighbours' owned rows) are done
  };

  static const Extents& checked(const Extents& global, const std::vector<int>& devices) {
    detail::require_devices(devices);
    global.validate();
    return global;
  }
  int size() const { return decomposition_.size(); }
  int device(int s) const { return devices_[static_cast<std::size_t>(s)]; }
  Part& part(int s) { return *parts_[static_cast<std::size_t>(s)]; }
  const Part& part(int s) const { return *parts_[static_cast<std::size_t>(s)]; }

  void require_grid(const DistributedGrid<value_type>& g, const char* what) const {
    detail::require(g.decomposition().global() == decomposition_.global() && g.size() == size(), what,
                    g.decomposition().global().to_text(), "a grid made by this solver (make_grid)");
    for (int s = 0; s < size(); ++s) {
      detail::require(g.device(s) == device(s), what, g.device(s), "the solver's device for each sub-domain");
      detail::require_layout(g.part(s).layout(), part(s).scratch.layout(), what);
    }
  }

  // The slabs' neighbours.
  template <class F>
  void for_neighbours(int s, F&& f) const {
    if (decomposition_[s].has_prev) f(s - 1);
    if (decomposition_[s].has_next) f(s + 1);
  }

  // `sweeps` sweeps (one launch) on every slab, each after its neighbours have copied the rows
  // this round overwrites.
  void round(DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b, int sweeps) {
    for (int s = 0; s < size(); ++s) {
      const detail::DeviceScope scope(device(s));
      Part& p = part(s);
      for_neighbours(s, [&](int n) { RELAX_CUDA_CHECK(cudaStreamWaitEvent(p.stream, part(n).copied.get(), 0)); });
      Sweeper<Strategy>::run(stencil_, u.part(s), p.scratch, b.part(s),
                             Batch{sweeps, detail::exchange_depth<Strategy>::value, family_v<Strategy>}, p.stream);
      p.swept.record(p.stream);
    }
  }

  // Every slab receives the H rows next to its owned rows from each neighbour, once that
  // neighbour's round is done.
  void exchange(DistributedGrid<value_type>& u) {
    const GridLayout& l = part(0).scratch.layout();
    const std::int64_t line = l.rank() == 3 ? l.plane : l.pitch;  // elements of one storage row (plane)
    for (int s = 0; s < size(); ++s) {
      const detail::DeviceScope scope(device(s));
      Part& p = part(s);
      const Slab& me = decomposition_[s];
      auto receive = [&](const RowRange& rows, int from) {
        RELAX_CUDA_CHECK(cudaStreamWaitEvent(p.stream, part(from).swept.get(), 0));
        const Slab& them = decomposition_[from];
        value_type* to = u.part(s).data() + me.storage_row(rows.first) * line;
        const value_type* source = u.part(from).data() + them.storage_row(rows.first) * line;
        RELAX_CUDA_CHECK(cudaMemcpyPeerAsync(to, device(s), source, device(from),
                                             static_cast<std::size_t>(rows.count * line) * sizeof(value_type), p.stream));
      };
      if (me.has_prev) receive(me.receive_from_prev(), s - 1);
      if (me.has_next) receive(me.receive_from_next(), s + 1);
      p.copied.record(p.stream);
    }
  }

  // ‖b‖: the max over the slabs of their owned rows' part (boundary values from the global ring
  // only: the local ring on a side with a neighbour holds that neighbour's rows).
  double rhs_norm(const DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    for (int s = 0; s < size(); ++s) {
      const detail::DeviceScope scope(device(s));
      const Slab& me = decomposition_[s];
      request_rhs_norm(stencil_, u.part(s), b.part(s), part(s).slot, part(s).stream,
                       {me.storage_row(me.owned.first), me.owned.count, me.has_prev, me.has_next});
    }
    return collect_max();
  }

  // ρ's numerator: the max over the slabs of the residual over their whole local boxes (after an
  // exchange, every local point's residual is the global one).
  double residual_norm(const DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    for (int s = 0; s < size(); ++s) {
      const detail::DeviceScope scope(device(s));
      request_residual_norm(stencil_, u.part(s), b.part(s), part(s).slot, part(s).stream);
    }
    return collect_max();
  }

  double collect_max() {
    value_type best = value_type(0);
    for (int s = 0; s < size(); ++s) {
      const value_type v = part(s).slot.wait();
      best = arith::abs_bits(v) > arith::abs_bits(best) ? v : best;  // NaN propagates as in one slot
    }
    return static_cast<double>(best);
  }

  Stencil stencil_;
  Fixed controller_;
  SolveOptions options_;
  std::vector<int> devices_;
  Decomposition decomposition_;
  std::vector<std::unique_ptr<Part>> parts_;
};

//! The diffusion problem's state on the slabs of a decomposition: u, Δt f and b, each a
//! `DistributedGrid` (see `DiffusionState`).
template <class T>
class DistributedDiffusionState {
 public:
  DistributedDiffusionState(const DiffusionParams& p, const Decomposition& d, const std::vector<int>& devices)
      : params_((p.validate(), p)), u_(d, devices), f_(d, devices), b_(d, devices) {
    detail::require(p.extents() == d.global(), "extents", p.extents().to_text(),
                    ("the decomposition's box " + d.global().to_text()).c_str());
    u_.scatter(initial_state<T>(p));
    f_.scatter(source_term<T>(p));
  }

  const DiffusionParams& params() const { return params_; }
  DistributedGrid<T>& u() { return u_; }
  const DistributedGrid<T>& u() const { return u_; }
  const DistributedGrid<T>& b() const { return b_; }
  //! b = u + Δt f on every slab, over its whole allocation (its halo rows hold the neighbours'
  //! values after a solve, so they get the global b); blocks.
  void form_rhs() {
    for (int s = 0; s < u_.size(); ++s) {
      const detail::DeviceScope scope(u_.device(s));
      add(static_cast<std::int64_t>(u_.part(s).layout().size()), u_.part(s).data(), f_.part(s).data(),
          b_.part(s).data(), nullptr);
      RELAX_CUDA_CHECK(cudaStreamSynchronize(nullptr));  // the solver's streams do not wait for it
    }
  }

 private:
  DiffusionParams params_;
  DistributedGrid<T> u_, f_, b_;
};

//! Runs `state.params().steps` implicit steps with a multi-sub-domain `solver`, a solve per step
//! after b = uⁿ + Δt f (as `run_diffusion` with a launch per step). Stops after a step that does
//! not converge; `on_step(step, report)` is called after each step.
template <class S, class Strategy, class Comm, class T = typename S::value_type>
RunReport run_diffusion(MultiSolver<S, Strategy, Comm>& solver, DistributedDiffusionState<T>& state,
                        const std::function<void(int, const SolveReport&)>& on_step = {}) {
  detail::require(state.params().dims == S::rank, "dims", state.params().dims, "the rank of the solver's stencil");
  RunReport run;
  run.points = state.params().extents().points();
  const auto started = std::chrono::steady_clock::now();
  for (int step = 0; step < state.params().steps; ++step) {
    state.form_rhs();
    run.steps.push_back(solver.solve(state.u(), state.b()));
    if (on_step) on_step(step, run.steps.back());
    if (!run.steps.back().converged()) break;
  }
  run.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return run;
}

}  // namespace relax
