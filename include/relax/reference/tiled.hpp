#pragma once
//! \file
//! Host emulation of the tiled schedules (`BlockAsync<D>`, `TemporalBlock<D>`): the same tiles,
//! the same halos frozen at load time, the same local sweeps and the same split of a batch into
//! launches, so the GPU's result is reproduced bit for bit on the host.

#include <relax/core/batches.hpp>
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

  void validate() const {
    relax::detail::require(tile_x >= 1 && tile_y >= 1, "tile", tile_x * tile_y, "a tile of >= 1 point");
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
  const std::int64_t n = u.n();
  const int halo = sched.exact ? depth : 1;
  const int rx = sched.tile_x + 2 * halo, ry = sched.tile_y + 2 * halo;
  const std::int64_t tiles_x = (n + sched.tile_x - 1) / sched.tile_x;
  const std::int64_t tiles = tiles_x * ((n + sched.tile_y - 1) / sched.tile_y);
  const int threads = exec.resolved_threads();
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    std::vector<T> cur(static_cast<std::size_t>(rx) * ry), next(cur.size()), rhs(cur.size());
#pragma omp for schedule(static)
    for (std::int64_t t = 0; t < tiles; ++t) {
      const std::int64_t i0 = (t / tiles_x) * sched.tile_y + 1 - halo;
      const std::int64_t j0 = (t % tiles_x) * sched.tile_x + 1 - halo;
      auto in_grid = [&](std::int64_t gi, std::int64_t gj) {
        return gi >= 0 && gj >= 0 && gi <= n + 1 && gj <= n + 1;
      };
      auto interior = [&](std::int64_t gi, std::int64_t gj) {
        return gi >= 1 && gj >= 1 && gi <= n && gj <= n;
      };
      for (int ri = 0; ri < ry; ++ri)
        for (int rj = 0; rj < rx; ++rj) {
          const std::int64_t gi = i0 + ri, gj = j0 + rj;
          const std::size_t c = static_cast<std::size_t>(ri) * rx + rj;
          cur[c] = in_grid(gi, gj) ? u(gi, gj) : T(0);
          rhs[c] = interior(gi, gj) ? b(gi, gj) : T(0);
        }
      for (int sweep = 0; sweep < depth; ++sweep) {
        const int reach = sched.exact ? sweep + 1 : 1;  // distance from the loaded edge to update
        for (int ri = 0; ri < ry; ++ri)
          for (int rj = 0; rj < rx; ++rj) {
            const std::size_t c = static_cast<std::size_t>(ri) * rx + rj;
            const int dist = std::min({ri, rj, ry - 1 - ri, rx - 1 - rj});
            next[c] = dist >= reach && interior(i0 + ri, j0 + rj)
                          ? s.update(rhs[c], cur[c - rx], cur[c + rx], cur[c + 1], cur[c - 1])
                          : cur[c];
          }
        std::swap(cur, next);
      }
      for (int ri = halo; ri < halo + sched.tile_y; ++ri)
        for (int rj = halo; rj < halo + sched.tile_x; ++rj)
          if (interior(i0 + ri, j0 + rj))
            out(i0 + ri, j0 + rj) = cur[static_cast<std::size_t>(ri) * rx + rj];
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
  relax::detail::for_each_launch(count, sched.depth, [&](int depth) {
    detail::tiled_launch(s, u, scratch, b, sched, depth, exec);
    std::swap(u, scratch);
  });
}

}  // namespace relax::reference
