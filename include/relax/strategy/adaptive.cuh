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
  //! The exact family: streaming through registers in 2D, shared-memory tiles in 3D (whose
  //! deepest D, the tile's shorter side, is 8 like the streaming kernel's).
  template <int Rank>
  using Exact = Sweeper<std::conditional_t<Rank == 2, TemporalBlock<dynamic, ColumnStream>,
                                           TemporalBlock<dynamic, Tile<32, 8, 4>>>>;
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
    if constexpr (S::rank == 2) return Adaptive::max_depth;
    else return Exact<S::rank>::template deepest_depth<S, T>();
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
