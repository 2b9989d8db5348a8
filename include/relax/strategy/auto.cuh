#pragma once
//! \file
//! `Sweeper<Auto>`: dispatches each batch to the strategy `auto_select` picks for the grid, the
//! stencil and the current device.

#include <relax/core/device.hpp>
#include <relax/strategy/auto.hpp>
#include <relax/strategy/column_stream.cuh>
#include <relax/strategy/sync.cuh>
#include <relax/strategy/tiled.cuh>

namespace relax {

template <>
struct Sweeper<Auto> {
  //! What `run` picks for `u`'s grid and `s` on the current device.
  template <class S, class T>
  static AutoChoice choice(const S& s, const DeviceGrid<T>& u) {
    static_assert(detail::has_coupling<S>::value,
                  "relax::Auto: the stencil has no coupling r; Auto's decision tree was trained on "
                  "Stencil5 and needs r as a feature. Name a strategy instead.");
    return auto_select(u.n(), static_cast<double>(s.r), sizeof(T), current_l2_bytes());
  }

  //! `count` sweeps with the strategy of `choice(s, u)`.
  template <class S, class T>
  static void run(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                  std::int64_t count, cudaStream_t stream) {
    const AutoChoice c = choice(s, u);
    switch (c.family) {
      case AutoFamily::sync: return Sweeper<Sync>::run(s, u, scratch, b, count, stream);
      case AutoFamily::temporal:
        return Sweeper<TemporalBlock<dynamic, ColumnStream>>::run_with_depth(s, u, scratch, b, count,
                                                                             c.depth, stream);
      case AutoFamily::blockasync:
        return Sweeper<BlockAsync<dynamic>>::run_with_depth(s, u, scratch, b, count, c.depth, stream);
    }
  }
};

}  // namespace relax
