#pragma once
//! \file
//! Host emulation of the tiled schedules (`BlockAsync<D>`, `TemporalBlock<D>`): the same tiles,
//! the same halos frozen at load time, the same local sweeps and the same split of a batch into
//! launches, so the GPU's result is reproduced bit for bit on the host.

#include <relax/core/batches.hpp>
#include <relax/core/launch.hpp>
#include <relax/domain/tile.hpp>
#include <relax/reference/jacobi.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace relax::reference {

//! The schedule of a tiled strategy: tile shape, depth D per launch, exact (ghost zone of width D)
//! or not (one-cell halo).
struct TiledSchedule {
  int tile_x = 32;
  int tile_y = 8;
  int depth = 1;
  bool exact = false;
  int tile_z = 4;  //!< planes of a tile in 3D (`relax::Tile<X, Y, Z>`)

  void validate() const {
    relax::detail::require(tile_x >= 1 && tile_y >= 1 && tile_z >= 1, "tile", tile_x * tile_y * tile_z,
                           "a tile of >= 1 point");
    relax::detail::require(depth >= 1, "depth", depth, "D >= 1");
    if (exact)
      relax::detail::require(depth <= std::min(tile_x, tile_y), "depth", depth,
                             "D no larger than the tile's width and height");
  }
};

//! The same schedule with depth `d` (what a controller that chooses D asks for).
inline TiledSchedule with_depth(TiledSchedule s, int d) {
  s.depth = d;
  return s;
}

namespace detail {
//! One launch of depth `depth` over every tile: reads `u`, writes the tiles' points of `out`.
template <class S, class T>
void tiled_launch(const S& s, const HostGrid<T>& u, HostGrid<T>& out, const HostGrid<T>& b,
                  const TiledSchedule& sched, int depth, Exec exec) {
  using namespace relax::detail;
  constexpr int rank = S::rank;
  const Shape g = shape_of(u.layout());
  const int halo = sched.exact ? depth : 1;
  const TileRegion r = tile_region<rank>(sched.tile_x, sched.tile_y, sched.tile_z, halo);
  const std::int64_t tiles_x = tile_count(g.nx, sched.tile_x), tiles_y = tile_count(g.ny, sched.tile_y);
  const std::int64_t tiles = tiles_x * tiles_y * (rank == 3 ? tile_count(g.nz, sched.tile_z) : 1);
  const T* pu = reference::detail::origin(u);
  const T* pb = reference::detail::origin(b);
  T* po = reference::detail::origin(out);
  const int threads = exec.resolved_threads();
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    std::vector<T> cur(static_cast<std::size_t>(r.cells())), next(cur.size()), rhs(cur.size());
#pragma omp for schedule(static)
    for (std::int64_t t = 0; t < tiles; ++t) {
      const TileOrigin o = tile_origin<rank>(t / (tiles_x * tiles_y), t / tiles_x % tiles_y, t % tiles_x,
                                             sched.tile_x, sched.tile_y, sched.tile_z, halo);
      for (int c = 0; c < r.cells(); ++c) {
        int ck, ci, cj;
        cell_coordinates(c, r, ck, ci, cj);
        const std::int64_t k = o.k0 + ck, i = o.i0 + ci, j = o.j0 + cj;
        cur[c] = in_grid<rank>(g, k, i, j) ? pu[g.at(k, i, j)] : T(0);
        rhs[c] = in_interior<rank>(g, k, i, j) ? pb[g.at(k, i, j)] : T(0);
      }
      for (int sweep = 0; sweep < depth; ++sweep) {
        const int reach = sched.exact ? sweep + 1 : 1;  // distance from the loaded edge to update
        for (int c = 0; c < r.cells(); ++c) {
          int ck, ci, cj;
          cell_coordinates(c, r, ck, ci, cj);
          const std::int64_t k = o.k0 + ck, i = o.i0 + ci, j = o.j0 + cj;
          next[c] = distance_to_edge<rank>(r, ck, ci, cj) >= reach && in_interior<rank>(g, k, i, j)
                        ? s.update(region_neighbours<rank>(cur.data(), c, r), g.point<rank>(k, i, j), rhs[c])
                        : cur[c];
        }
        std::swap(cur, next);
      }
      for (int ck = rank == 3 ? halo : 0; ck < (rank == 3 ? halo + sched.tile_z : 1); ++ck)
        for (int ci = halo; ci < halo + sched.tile_y; ++ci)
          for (int cj = halo; cj < halo + sched.tile_x; ++cj) {
            const std::int64_t k = o.k0 + ck, i = o.i0 + ci, j = o.j0 + cj;
            if (in_interior<rank>(g, k, i, j)) po[g.at(k, i, j)] = cur[(ck * r.ry + ci) * r.rx + cj];
          }
    }
  }
}
}  // namespace detail

//! `count` sweeps under a tiled schedule, split into launches of `sched.depth` and a remainder;
//! the iterate ends in `u` (`scratch` is the second buffer; both hold the boundary ring).
template <class S, class T>
void sweeps(const S& s, HostGrid<T>& u, HostGrid<T>& scratch, const HostGrid<T>& b,
            const TiledSchedule& sched, std::int64_t count, Exec exec = {}) {
  static_assert(is_stencil_v<S>, "relax::reference::sweeps: S is not a stencil");
  sched.validate();
  relax::detail::require_layout(scratch.layout(), u.layout(), "scratch");
  relax::detail::require_layout(b.layout(), u.layout(), "b");
  detail::require_distinct(scratch, u, "scratch", "u");
  detail::require_distinct(scratch, b, "scratch", "b");
  relax::detail::for_each_launch(count, sched.depth, [&](int depth) {
    detail::tiled_launch(s, u, scratch, b, sched, depth, exec);
    std::swap(u, scratch);
  });
}

}  // namespace relax::reference
