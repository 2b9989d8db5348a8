#pragma once
//! \file
//! `Sweeper<Adaptive>`: runs each batch with the family and depth the controller chose.

#include <relax/core/family.hpp>
#include <relax/strategy/adaptive.hpp>
#include <relax/strategy/column_stream.cuh>
#include <relax/strategy/tiled.cuh>

namespace relax {

template <>
struct Sweeper<Adaptive> {
  using Exact = Sweeper<TemporalBlock<dynamic, ColumnStream>>;
  using Async = Sweeper<BlockAsync<dynamic>>;

  //! Loads the kernels of both families (see the ColumnStream sweeper).
  template <class S, class T>
  static void preload() {
    Exact::template preload<S, T>();
    Async::template preload<S, T>();
  }

  //! `count` sweeps of the family and depth in `c`.
  template <class S, class T>
  static void run_with_choice(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch,
                              const DeviceGrid<T>& b, std::int64_t count, FamilyChoice c,
                              cudaStream_t stream) {
    if (c.family == Family::temporal) Exact::run_with_depth(s, u, scratch, b, count, c.depth, stream);
    else Async::run_with_depth(s, u, scratch, b, count, c.depth, stream);
  }
};

}  // namespace relax
