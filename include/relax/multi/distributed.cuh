#pragma once
//! \file
//! What the multi-sub-domain solvers share: the Comm tags, `DistributedGrid` (a grid split into
//! the slabs of a `relax::Decomposition`, each on a device of its own or several on one device),
//! the diffusion problem's state on such a grid and its time loop, and the common part of the
//! solvers (`detail::SlabSolverBase`: the slabs' workspaces and streams, ‖b‖ over the owned
//! rows). The solvers are in `multi/host_copy.cuh` (the host queues the halo copies) and
//! `multi/peer_store.cuh` (one persistent kernel per device stores the halos itself).

#include <relax/control/fixed.hpp>
#include <relax/control/report.hpp>
#include <relax/control/stop.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/core/device.hpp>
#include <relax/core/device_scope.hpp>
#include <relax/core/error.hpp>
#include <relax/core/stream.hpp>
#include <relax/cpu/split.hpp>
#include <relax/domain/decomposition.hpp>
#include <relax/domain/device_grid.hpp>
#include <relax/multi/comm.hpp>
#include <relax/primitives/blas1.cuh>
#include <relax/primitives/max_norm.cuh>
#include <relax/problem/diffusion.hpp>
#include <relax/stencil/traits.hpp>
#include <relax/strategy/residual.cuh>

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace relax {

//! Jacobi on the slabs of a box, one per entry of `devices`, with the Comm policy `Comm`:
//! `MultiSolver<S, Strategy, HostCopy>` (`multi/host_copy.cuh`),
//! `MultiSolver<S, DeviceLoop<Sync>, PeerStore>` and
//! `MultiSolver<S, DeviceLoop<TemporalBlock<D, ColumnStream>>, PeerStore>` (`multi/peer_store.cuh`).
template <class Stencil, class Strategy, class Comm = HostCopy>
class MultiSolver;

namespace detail {

//! What the CPU-free Comm policies (`PeerStore`, `Nvshmem`) take for their waits: a time limit for
//! each, more than 0 and at most an hour, and the test hook's silent sub-domain, −1 or one of
//! `subdomains`.
//! The processes' agreement before and after a collective step of a solver with one process
//! per GPU: `local` is this process's failure (or null); `extra` are further words to take the
//! max of with the failure flag, by `max_over` (the program's collective: a vector in, the max
//! over the processes out). If any process failed, all throw: this one its own error, the others
//! one saying that `another` (e.g. "another PE") failed `step`. Returns `extra`'s maxima.
template <class MaxOver>
std::vector<unsigned long long> agree_across(std::exception_ptr local, const std::string& who, const char* another,
                                             const char* step, std::vector<unsigned long long> extra, MaxOver&& max_over) {
  extra.insert(extra.begin(), local ? 1ull : 0ull);
  extra = max_over(std::move(extra));
  if (local) std::rethrow_exception(local);
  if (extra[0] != 0) throw std::runtime_error(who + ": " + another + " failed " + step + " (it reports its own error)");
  extra.erase(extra.begin());
  return extra;
}

inline void require_wait_settings(std::uint64_t timeout_ns, int silent_subdomain, int subdomains) {
  checked_timeout(timeout_ns);
  require(silent_subdomain >= -1 && silent_subdomain < subdomains, "comm.silent_subdomain", silent_subdomain,
          "-1 or a sub-domain");
}

}  // namespace detail

//! A grid split into the slabs of a `Decomposition`, slab s on device `devices[s]` (its local grid:
//! owned rows, halo rows and ring, with the global index of its first point as its origin). In a
//! program of one process per GPU (`Nvshmem`), each process holds a run of the slabs only
//! (`first()` and `held()`), in storage from the Comm policy's allocator (its symmetric heap).
template <class T>
class DistributedGrid {
 public:
  //! The storage of one slab: a zeroed device grid of the layout (`DeviceGrid`'s constructors
  //! when none is given).
  using Allocate = std::function<DeviceGrid<T>(const GridLayout&)>;

  //! Every slab of `d`, slab s on `devices[s]`.
  DistributedGrid(const Decomposition& d, const std::vector<int>& devices) : DistributedGrid(d, 0, devices, {}) {
    detail::require(static_cast<int>(devices.size()) == d.size(), "devices", static_cast<int>(devices.size()),
                    "one device per sub-domain of the decomposition");
  }
  //! The slabs `first` .. `first + devices.size() - 1` of `d`, slab first + i on `devices[i]`,
  //! their storage from `allocate` (if not empty).
  DistributedGrid(const Decomposition& d, int first, const std::vector<int>& devices, const Allocate& allocate)
      : decomposition_(d), first_(first), devices_(devices) {
    detail::require_devices(devices);
    detail::require(first >= 0 && first + static_cast<int>(devices.size()) <= d.size(), "devices",
                    static_cast<int>(devices.size()), "one device per held sub-domain of the decomposition");
    for (int s = first; s < first + held(); ++s) {
      const detail::DeviceScope scope(device(s));
      const GridLayout layout = d[s].template layout<T>();
      parts_.push_back(allocate ? allocate(layout) : DeviceGrid<T>(layout));
      // The zeroing is on the legacy stream, which the solver's non-blocking streams do not wait for.
      RELAX_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    }
  }

  const Decomposition& decomposition() const { return decomposition_; }
  int size() const { return decomposition_.size(); }
  //! The slabs this grid holds: `first()` .. `first() + held() - 1` (all of them unless each
  //! process of the program holds its own).
  int first() const { return first_; }
  int held() const { return static_cast<int>(devices_.size()); }
  bool holds(int s) const { return s >= first_ && s < first_ + held(); }
  int device(int s) const { return devices_.at(local(s)); }
  DeviceGrid<T>& part(int s) { return parts_.at(local(s)); }
  const DeviceGrid<T>& part(int s) const { return parts_.at(local(s)); }

  //! Fills every held slab from the global grid `global` (its rows, halo rows and ring); blocks.
  //! \throws relax::invalid_argument for a grid of another box.
  void scatter(const HostGrid<T>& global) {
    require_global(global);
    for (int s = first_; s < first_ + held(); ++s) {
      const detail::DeviceScope scope(device(s));
      copy(reference::scatter(global, decomposition_[s]), part(s));
    }
  }
  //! Puts every held slab's owned rows into `global` (the other rows stay as they are); blocks.
  void gather(HostGrid<T>& global) const {
    require_global(global);
    for (int s = first_; s < first_ + held(); ++s) {
      const detail::DeviceScope scope(device(s));
      reference::gather(to_host(part(s)), decomposition_[s], global);
    }
  }

 private:
  std::size_t local(int s) const {
    detail::require(holds(s), "sub-domain", s, "a sub-domain this grid holds");
    return static_cast<std::size_t>(s - first_);
  }
  void require_global(const HostGrid<T>& global) const {
    detail::require(global.layout().extents == decomposition_.global(), "global grid", global.layout().extents.to_text(),
                    ("a grid of the decomposition's box " + decomposition_.global().to_text()).c_str());
  }

  Decomposition decomposition_;
  int first_ = 0;
  std::vector<int> devices_;  // of the held slabs
  std::vector<DeviceGrid<T>> parts_;
};

//! Copies every held slab of `from` into `to` on the device (both of one decomposition, held
//! slabs and devices); blocks.
template <class T>
void copy(const DistributedGrid<T>& from, DistributedGrid<T>& to) {
  detail::require(from.decomposition().global() == to.decomposition().global() && from.size() == to.size() &&
                      from.first() == to.first() && from.held() == to.held(),
                  "to", to.decomposition().global().to_text(), "a grid of the same decomposition and held sub-domains");
  for (int s = from.first(); s < from.first() + from.held(); ++s) {
    detail::require(from.device(s) == to.device(s), "to", to.device(s), "the same device for each sub-domain");
    const detail::DeviceScope scope(from.device(s));
    copy(from.part(s), to.part(s), nullptr);
    RELAX_CUDA_CHECK(cudaStreamSynchronize(nullptr));  // the solvers' streams do not wait for it
  }
}

namespace detail {

//! Which slabs of how many a process holds, and where their storage comes from: by default
//! every slab (one per device), in `DeviceGrid`'s own memory.
template <class T>
struct SlabPlacement {
  int parts = 0;  //!< slabs in all (0: one per device)
  int first = 0;  //!< the first slab held here (the held: one per device)
  typename DistributedGrid<T>::Allocate allocate;
};

//! What every multi-sub-domain solver keeps and checks: the stencil, the controller and options,
//! the decomposition into slabs of halo `halo` (one per entry of `devices`, or, in a program of
//! one process per GPU, `Placement::parts` of which this process holds a run), and per held slab
//! its stream, its workspace grid (the second array of its sweeps) and a norm word.
template <class Stencil_>
class SlabSolverBase {
 public:
  using Stencil = Stencil_;
  using value_type = typename Stencil::value_type;

  const Decomposition& decomposition() const { return decomposition_; }
  //! The devices of the slabs this process holds (all of them, unless each process holds its own).
  const std::vector<int>& devices() const { return devices_; }
  //! A distributed grid of this solver's slabs and devices (zeroed).
  DistributedGrid<value_type> make_grid() const {
    return DistributedGrid<value_type>(decomposition_, first_, devices_, allocate_);
  }

 protected:
  using Placement = SlabPlacement<value_type>;

  //! \throws relax::invalid_argument for bad extents, devices, controller or options (overlapped
  //!         checks included), or a slab thinner than the halo.
  SlabSolverBase(const Extents& global, std::vector<int> devices, Stencil stencil, Fixed controller,
                 SolveOptions options, int halo, Placement placement = {})
      : stencil_(stencil), controller_(controller), options_(options), devices_(std::move(devices)),
        decomposition_(checked(global, devices_), placement.parts > 0 ? placement.parts : static_cast<int>(devices_.size()),
                       halo),
        first_(placement.first), allocate_(std::move(placement.allocate)) {
    require(first_ >= 0 && first_ + held() <= decomposition_.size(), "devices", held(),
            "one device per held sub-domain of the decomposition");
    controller_.validate();
    options_.validate();
    require(options_.checks == CheckMode::blocking, "options.checks", to_string(options_.checks),
            "blocking: the multi-sub-domain solvers check after an exchange, with no batch in flight");
    require(global.rank == Stencil::rank, "extents", global.to_text(),
            Stencil::rank == 3 ? "a 3D box (the stencil is 3D)" : "a 2D box (the stencil is 2D)");
    for (int s = first_; s < first_ + held(); ++s) {
      const DeviceScope scope(device(s));
      const GridLayout layout = decomposition_[s].template layout<value_type>();
      parts_.push_back(allocate_ ? std::make_unique<Part>(allocate_(layout)) : std::make_unique<Part>(layout));
    }
  }

  // What one slab keeps.
  struct Part {
    explicit Part(const GridLayout& layout) : scratch(layout, stream) {}
    explicit Part(DeviceGrid<value_type> storage) : scratch(std::move(storage)) {
      RELAX_CUDA_CHECK(cudaStreamSynchronize(nullptr));  // its zeroing, on the legacy stream
    }
    Stream stream;
    DeviceGrid<value_type> scratch;
    MaxNormSlot<value_type> slot;
  };

  int size() const { return decomposition_.size(); }
  //! The slabs held here: `first()` .. `first() + held() - 1`.
  int first() const { return first_; }
  int held() const { return static_cast<int>(devices_.size()); }
  int device(int s) const { return devices_[static_cast<std::size_t>(s - first_)]; }
  Part& part(int s) { return *parts_[static_cast<std::size_t>(s - first_)]; }
  const Part& part(int s) const { return *parts_[static_cast<std::size_t>(s - first_)]; }

  void require_grid(const DistributedGrid<value_type>& g, const char* what) const {
    require(g.decomposition().global() == decomposition_.global() && g.size() == size() && g.first() == first_ &&
                g.held() == held(),
            what, g.decomposition().global().to_text(), "a grid made by this solver (make_grid)");
    for (int s = first_; s < first_ + held(); ++s) {
      require(g.device(s) == device(s), what, g.device(s), "the solver's device for each sub-domain");
      require_layout(g.part(s).layout(), part(s).scratch.layout(), what);
    }
  }

  //! Checks both grids and gives every slab's workspace the rings (and the received rows) of `u`.
  void begin(DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    require_grid(u, "u");
    require_grid(b, "b");
    for (int s = first_; s < first_ + held(); ++s) {
      const DeviceScope scope(device(s));
      copy(u.part(s), part(s).scratch, part(s).stream);
    }
  }

  //! ‖b‖: the max over the held slabs of their owned rows' part (boundary values from the global
  //! ring only: the local ring on a side with a neighbour holds that neighbour's rows). Blocks.
  double rhs_norm(const DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    for (int s = first_; s < first_ + held(); ++s) {
      const DeviceScope scope(device(s));
      const Slab& me = decomposition_[s];
      request_rhs_norm(stencil_, u.part(s), b.part(s), part(s).slot, part(s).stream,
                       {me.storage_row(me.owned.first), me.owned.count, me.has_prev, me.has_next});
    }
    return collect_max();
  }

  //! The max over the held slabs of the norms their words received (NaN propagates as in one word).
  double collect_max() {
    value_type best = value_type(0);
    for (int s = first_; s < first_ + held(); ++s) {
      const value_type v = part(s).slot.wait();
      best = arith::abs_bits(v) > arith::abs_bits(best) ? v : best;
    }
    return static_cast<double>(best);
  }

  Stencil stencil_;
  Fixed controller_;
  SolveOptions options_;
  std::vector<int> devices_;
  Decomposition decomposition_;
  int first_ = 0;
  typename DistributedGrid<value_type>::Allocate allocate_;
  std::vector<std::unique_ptr<Part>> parts_;

 private:
  static const Extents& checked(const Extents& global, const std::vector<int>& devices) {
    require_devices(devices);
    global.validate();
    return global;
  }
};

}  // namespace detail

//! The diffusion problem's state on the slabs of a decomposition: u, Δt f and b, each a
//! `DistributedGrid` (see `DiffusionState`).
template <class T>
class DistributedDiffusionState {
 public:
  DistributedDiffusionState(const DiffusionParams& p, const Decomposition& d, const std::vector<int>& devices)
      : DistributedDiffusionState(p, DistributedGrid<T>(d, devices), DistributedGrid<T>(d, devices),
                                  DistributedGrid<T>(d, devices)) {}
  //! The state on `solver`'s slabs, in grids it makes (the slabs this process holds, in the
  //! storage its Comm policy needs).
  template <class Solver, class = decltype(std::declval<const Solver&>().make_grid())>
  DistributedDiffusionState(const DiffusionParams& p, const Solver& solver)
      : DistributedDiffusionState(p, solver.make_grid(), solver.make_grid(), solver.make_grid()) {}

  const DiffusionParams& params() const { return params_; }
  DistributedGrid<T>& u() { return u_; }
  const DistributedGrid<T>& u() const { return u_; }
  const DistributedGrid<T>& b() const { return b_; }
  //! b = u + Δt f on every held slab, over its whole allocation (its halo rows hold the
  //! neighbours' values after a solve, so they get the global b); blocks.
  void form_rhs() {
    for (int s = u_.first(); s < u_.first() + u_.held(); ++s) {
      const detail::DeviceScope scope(u_.device(s));
      add(static_cast<std::int64_t>(u_.part(s).layout().size()), u_.part(s).data(), f_.part(s).data(),
          b_.part(s).data(), nullptr);
      RELAX_CUDA_CHECK(cudaStreamSynchronize(nullptr));  // the solver's streams do not wait for it
    }
  }

 private:
  DistributedDiffusionState(const DiffusionParams& p, DistributedGrid<T> u, DistributedGrid<T> f, DistributedGrid<T> b)
      : params_((p.validate(), p)), u_(std::move(u)), f_(std::move(f)), b_(std::move(b)) {
    const Decomposition& d = u_.decomposition();
    detail::require(p.extents() == d.global(), "extents", p.extents().to_text(),
                    ("the decomposition's box " + d.global().to_text()).c_str());
    u_.scatter(initial_state<T>(p));
    f_.scatter(source_term<T>(p));
  }

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
