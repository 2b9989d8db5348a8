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
  static FamilyChoice choice(const S& s, const DeviceGrid<T>& u) {
    return auto_select(u.extents(), equivalent_coupling(s), sizeof(T), current_l2_bytes());
  }

  //! `batch.sweeps` sweeps with the strategy of `choice(s, u)`.
  template <class S, class T>
  static void run(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                  const Batch& batch, cudaStream_t stream) {
    const FamilyChoice c = choice(s, u);
    const Batch chosen{batch.sweeps, c.depth, c.family};
    switch (c.family) {
      case Family::sync: return Sweeper<Sync>::run(s, u, scratch, b, chosen, stream);
      case Family::temporal:
        if constexpr (S::rank == 2)
          return Sweeper<TemporalBlock<dynamic, ColumnStream>>::run(s, u, scratch, b, chosen, stream);
        else
          detail::require(false, "Auto's choice", to_string(c), "Sync in 3D (auto_select)");
        return;
      case Family::blockasync: return Sweeper<BlockAsync<dynamic>>::run(s, u, scratch, b, chosen, stream);
    }
  }
};

}  // namespace relax
