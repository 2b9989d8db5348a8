#pragma once
//! \file
//! `Sweeper<Adaptive>`: runs each batch with the family and depth the controller chose.

#include <relax/core/family.hpp>
#include <relax/strategy/adaptive.hpp>
#include <relax/strategy/column_stream.cuh>
#include <relax/strategy/tiled.cuh>

#include <type_traits>

namespace relax {

template <>
struct Sweeper<Adaptive> {
  //! The exact family: the streaming kernels, 2D and 3D (`TemporalBlock<D, ColumnStream>`; in 3D
  //! its deepest D is what the plane queue's shared memory allows).
  template <int Rank>
  using Exact = Sweeper<TemporalBlock<dynamic, ColumnStream>>;
  using Async = Sweeper<BlockAsync<dynamic>>;

  //! Loads the kernels of both families (see the ColumnStream sweeper).
  template <class S, class T>
  static void preload() {
    Exact<S::rank>::template preload<S, T>();
    Async::template preload<S, T>();
  }

  //! The deepest D of the exact family for stencil `S` on the current device.
  template <class S, class T>
  static int deepest_depth() {
    return Exact<S::rank>::template deepest_depth<S, T>();
  }

  //! `batch.sweeps` sweeps of `batch.family` at `batch.depth`.
  template <class S, class T>
  static void run(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                  const Batch& batch, cudaStream_t stream) {
    if (batch.family == Family::temporal) Exact<S::rank>::run(s, u, scratch, b, batch, stream);
    else Async::run(s, u, scratch, b, batch, stream);
  }
};

}  // namespace relax
