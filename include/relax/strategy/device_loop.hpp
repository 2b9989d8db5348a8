#pragma once
//! \file
//! `DeviceLoop<Inner>`: the device loop (CPU-free). One cooperative kernel runs a whole solve:
//! every sweep of the inner schedule, a grid-wide barrier between sweeps, the residual every M
//! sweeps from block partials, and the stop decision on the device (`StopCriterion::decide`,
//! the same function the host loop calls). The host launches once per solve and reads a report,
//! so a convergence check costs a grid barrier instead of a round trip to the host. Every wait is
//! bounded (`relax/primitives/grid_barrier.cuh`); the kernel is in `device_loop.cuh`.
//!
//! Inner schedules built so far: `Sync` and `SyncTile<X, Y, Rows>` (one sweep per barrier, the
//! iterates, sweeps, checks and ρ of the host loop with blocking checks, bit for bit). The
//! controller must be one that decides on the device: `Fixed`.

#include <relax/config.hpp>
#include <relax/strategy/sync.hpp>
#include <relax/strategy/traits.hpp>

#include <type_traits>

namespace relax {

namespace detail {
template <class S>
struct is_sync_tile : std::false_type {};
template <int X, int Y, int R>
struct is_sync_tile<SyncTile<X, Y, R>> : std::true_type {};
}  // namespace detail

template <class Inner = Sync>
struct DeviceLoop {
  static_assert(detail::is_sync_tile<Inner>::value,
                "relax::DeviceLoop<Inner>: the inner schedule must be Sync or SyncTile<X, Y, Rows> "
                "(temporal blocking and BlockAsync inside the device loop are not built yet)");
  static constexpr bool exact = Inner::exact;
  static constexpr bool device_loop = true;  //!< the solve's loop runs in the kernel
  using inner = Inner;
};

template <class I>
struct is_strategy<DeviceLoop<I>> : std::true_type {};

}  // namespace relax
