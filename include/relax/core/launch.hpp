#pragma once
//! \file
//! Launch geometry for kernels that cover a box's interior with 2D tiles of blocks.

#include <relax/config.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

namespace relax::detail {

//! Tiles of `tile` points needed to cover `n` points.
RELAX_HOST_DEVICE inline std::int64_t tile_count(std::int64_t n, std::int64_t tile) { return (n + tile - 1) / tile; }

//! The grid for tiles of `tile_x × tile_y` points over `nx × ny` points. blockIdx.y is capped at
//! the hardware limit of 65535; kernels loop over the remaining tile rows (`for (ty = blockIdx.y;
//! ty < tiles_y; ty += gridDim.y)`), so any box that fits in memory works.
inline dim3 tile_grid(std::int64_t nx, std::int64_t ny, int tile_x, int tile_y) {
  const std::int64_t tx = tile_count(nx, tile_x);
  const std::int64_t ty = std::min<std::int64_t>(tile_count(ny, tile_y), 65535);
  return dim3(static_cast<unsigned>(tx), static_cast<unsigned>(ty), 1);
}

}  // namespace relax::detail
