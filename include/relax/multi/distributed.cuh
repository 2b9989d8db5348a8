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
#include <relax/core/error.hpp>
#include <relax/core/stream.hpp>
#include <relax/domain/decomposition.hpp>
#include <relax/domain/device_grid.hpp>
#include <relax/primitives/blas1.cuh>
#include <relax/primitives/max_norm.cuh>
#include <relax/problem/diffusion.hpp>
#include <relax/reference/split.hpp>
#include <relax/stencil/traits.hpp>
#include <relax/strategy/residual.cuh>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace relax {

//! The Comm policy of the host-controlled multi-sub-domain solver: the host queues the halo copies
//! after every round of sweeps (`multi/host_copy.cuh`).
struct HostCopy {};

//! The Comm policy of the CPU-free multi-sub-domain solver (`multi/peer_store.cuh`): the kernel
//! stores its edge rows straight into the neighbours' halos (through peer pointers across
//! devices) and releases a system-scope flag carrying the sweep count, which the neighbour
//! acquires.
struct PeerStore {
  //! One cooperative launch per sub-domain, even where several share a device (their blocks then
  //! split it). Off: one launch per device, covering all of its sub-domains. On, with several
  //! sub-domains on one GPU, the flags and the global reduction cross kernels as they cross GPUs;
  //! CUDA does not promise that separate launches are resident together, so a wait that outlives
  //! the timeout ends the solve with an error instead of a hang.
  bool launch_per_subdomain = false;
  //! Without `launch_per_subdomain`: the kernels each device's sub-domains are split into
  //! (consecutive runs of them, as even as can be; at most one per sub-domain). 1: one kernel per
  //! device. More than 1 puts flags between some neighbours of one device and none between others.
  int kernels_per_device = 1;
  //! Test hook: the sub-domain that never raises its flags (−1: none), so its neighbours' waits
  //! time out and the solve ends with an error naming it.
  int silent_subdomain = -1;
  std::uint64_t timeout_ns = 20'000'000'000ull;  //!< the longest any wait of the kernels lasts
};

//! Jacobi on the slabs of a box, one per entry of `devices`, with the Comm policy `Comm`:
//! `MultiSolver<S, Strategy, HostCopy>` (`multi/host_copy.cuh`),
//! `MultiSolver<S, DeviceLoop<Sync>, PeerStore>` (`multi/peer_store.cuh`).
template <class Stencil, class Strategy, class Comm = HostCopy>
class MultiSolver;

namespace detail {

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

//! Copies every slab of `from` into `to` on the device (both of one decomposition and devices);
//! blocks.
template <class T>
void copy(const DistributedGrid<T>& from, DistributedGrid<T>& to) {
  detail::require(from.decomposition().global() == to.decomposition().global() && from.size() == to.size(), "to",
                  to.decomposition().global().to_text(), "a grid of the same decomposition");
  for (int s = 0; s < from.size(); ++s) {
    detail::require(from.device(s) == to.device(s), "to", to.device(s), "the same device for each sub-domain");
    const detail::DeviceScope scope(from.device(s));
    copy(from.part(s), to.part(s), nullptr);
    RELAX_CUDA_CHECK(cudaStreamSynchronize(nullptr));  // the solvers' streams do not wait for it
  }
}

namespace detail {

//! What every multi-sub-domain solver keeps and checks: the stencil, the controller and options,
//! the decomposition into `devices.size()` slabs of halo `halo`, and per slab its stream, its
//! workspace grid (the second array of its sweeps) and a norm word.
template <class Stencil_>
class SlabSolverBase {
 public:
  using Stencil = Stencil_;
  using value_type = typename Stencil::value_type;

  const Decomposition& decomposition() const { return decomposition_; }
  const std::vector<int>& devices() const { return devices_; }
  //! A distributed grid of this solver's slabs and devices (zeroed).
  DistributedGrid<value_type> make_grid() const { return DistributedGrid<value_type>(decomposition_, devices_); }

 protected:
  //! \throws relax::invalid_argument for bad extents, devices, controller or options (overlapped
  //!         checks included), or a slab thinner than the halo.
  SlabSolverBase(const Extents& global, std::vector<int> devices, Stencil stencil, Fixed controller,
                 SolveOptions options, int halo)
      : stencil_(stencil), controller_(controller), options_(options), devices_(std::move(devices)),
        decomposition_(checked(global, devices_), static_cast<int>(devices_.size()), halo) {
    controller_.validate();
    options_.validate();
    require(options_.checks == CheckMode::blocking, "options.checks", to_string(options_.checks),
            "blocking: the multi-sub-domain solvers check after an exchange, with no batch in flight");
    require(global.rank == Stencil::rank, "extents", global.to_text(),
            Stencil::rank == 3 ? "a 3D box (the stencil is 3D)" : "a 2D box (the stencil is 2D)");
    for (int s = 0; s < decomposition_.size(); ++s) {
      const DeviceScope scope(device(s));
      parts_.push_back(std::make_unique<Part>(decomposition_[s].template layout<value_type>()));
    }
  }

  // What one slab keeps.
  struct Part {
    explicit Part(const GridLayout& layout) : scratch(layout, stream) {}
    Stream stream;
    DeviceGrid<value_type> scratch;
    MaxNormSlot<value_type> slot;
  };

  int size() const { return decomposition_.size(); }
  int device(int s) const { return devices_[static_cast<std::size_t>(s)]; }
  Part& part(int s) { return *parts_[static_cast<std::size_t>(s)]; }
  const Part& part(int s) const { return *parts_[static_cast<std::size_t>(s)]; }

  void require_grid(const DistributedGrid<value_type>& g, const char* what) const {
    require(g.decomposition().global() == decomposition_.global() && g.size() == size(), what,
            g.decomposition().global().to_text(), "a grid made by this solver (make_grid)");
    for (int s = 0; s < size(); ++s) {
      require(g.device(s) == device(s), what, g.device(s), "the solver's device for each sub-domain");
      require_layout(g.part(s).layout(), part(s).scratch.layout(), what);
    }
  }

  //! Checks both grids and gives every slab's workspace the rings (and the received rows) of `u`.
  void begin(DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    require_grid(u, "u");
    require_grid(b, "b");
    for (int s = 0; s < size(); ++s) {
      const DeviceScope scope(device(s));
      copy(u.part(s), part(s).scratch, part(s).stream);
    }
  }

  //! ‖b‖: the max over the slabs of their owned rows' part (boundary values from the global ring
  //! only: the local ring on a side with a neighbour holds that neighbour's rows). Blocks.
  double rhs_norm(const DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    for (int s = 0; s < size(); ++s) {
      const DeviceScope scope(device(s));
      const Slab& me = decomposition_[s];
      request_rhs_norm(stencil_, u.part(s), b.part(s), part(s).slot, part(s).stream,
                       {me.storage_row(me.owned.first), me.owned.count, me.has_prev, me.has_next});
    }
    return collect_max();
  }

  //! The max over the slabs of the norms their words received (NaN propagates as in one word).
  double collect_max() {
    value_type best = value_type(0);
    for (int s = 0; s < size(); ++s) {
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
