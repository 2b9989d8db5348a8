// Study (not a strategy): the 3D plane stream of `TemporalBlock<D, ColumnStream>`
// (`agent/plane_stream.cuh`) with its blocks in thread-block clusters that exchange tile edges
// through distributed shared memory instead of recomputing a ghost zone between them.
//
// Each block streams a 128 x 32 tile down z as the plane stream does; within a cluster of CX x CY
// blocks, a block publishes its first and last rows of every level into the neighbouring blocks'
// edge-row padding, and its first and last columns into their x halo (remote stores: every read
// stays local), one cluster barrier a step (split: arrive after the last publish, having read
// level D's halos, wait at the next step). Along x a cluster of CX > 1 blocks covers the box's
// first 128 CX columns with no ghost zone (the boundary columns wait in a ring of planes beside
// b's); CX = 1 keeps the plane stream's x tiles with their ghost zone. Along y a cluster has D
// ghost rows on each side. It compares bits and time against the plane stream on the same grids.
//
// Measured on the H200 (docs/results/h200/logs/cluster_plane_stream_study.txt; docs/performance-
// notes.md, "Clusters for the 3D stream"): bit-identical everywhere, and slower than the plane
// stream at 512^3 in every shape (0.70-0.96x at D = 4): the exchange and the cluster barrier cost
// more than the ghost zone they remove. Built with the benchmarks (relax_study_cluster_stream);
// run it with no arguments.
#include <relax/stencil/stencil7.hpp>
#include <relax/strategy/column_stream.cuh>
#include <relax/domain/device_grid.hpp>
#include <cooperative_groups.h>
#include <cstdio>
#include <vector>
#include <cstring>

#include "study_support.cuh"

namespace cg = cooperative_groups;
using namespace relax;
using namespace relax::detail;
using study::time_ms;

__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory"); }

template <int D, int CX, int CY, bool Split, class S, class T>
__device__ __forceinline__ void stream_cluster(const S& s, const T* u, T* __restrict__ out, const T* __restrict__ b,
                                               const Shape& g, std::int64_t x0, std::int64_t y0, std::int64_t z0,
                                               std::int64_t z1, std::int64_t ys0, std::int64_t ys1, int lane, int warp,
                                               Lane<T>* shared) {
  constexpr int W = Lane<T>::width;
  constexpr int RW = plane_rows_per_warp;
  constexpr int NW = plane_stream_warps;
  constexpr int R = plane_stream_rows;
  constexpr int slots = D + 2;
  constexpr unsigned whole = (1u << W) - 1;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  const int cx = static_cast<int>(rank % CX), cy = static_cast<int>(rank / CX);

  const std::int64_t x = x0 + lane * W;
  const std::int64_t i0 = y0 + warp * RW;
  unsigned col_grid = 0, col_interior = 0, col_stored = 0, row_grid = 0, row_interior = 0, row_stored = 0;
#pragma unroll
  for (int q = 0; q < W; ++q) {
    const std::int64_t c = x + q;
    if (c >= 0 && c <= g.nx + 1) col_grid |= 1u << q;
    if (c >= 1 && c <= g.nx) col_interior |= 1u << q;
  }
  col_stored = col_interior;
  if constexpr (CX == 1) {  // x tiles with a ghost zone (no exchange along x)
    constexpr int G = plane_ghost_columns<D, T>;
    col_stored = 0;
#pragma unroll
    for (int q = 0; q < W; ++q) {
      const int local = lane * W + q;
      if ((col_interior >> q & 1u) && local >= G && local < 32 * W - G) col_stored |= 1u << q;
    }
  }
#pragma unroll
  for (int r = 0; r < RW; ++r) {
    const std::int64_t i = i0 + r;
    if (i >= 0 && i <= g.ny + 1) row_grid |= 1u << r;
    if (i >= 1 && i <= g.ny) row_interior |= 1u << r;
    if (i >= 1 && i <= g.ny && i >= ys0 && i < ys1) row_stored |= 1u << r;
  }
  unsigned keeps = 0;
#pragma unroll
  for (int r = 0; r < RW; ++r)
#pragma unroll
    for (int q = 0; q < W; ++q)
      if (!((row_interior >> r) & (col_interior >> q) & 1u)) keeps |= 1u << (r * W + q);
  asm volatile("" : "+r"(keeps));
  const std::int64_t base = i0 * g.pitch + x;
  const int nz = static_cast<int>(g.nz);
  const int kz0 = static_cast<int>(z0), kz1 = static_cast<int>(z1);
  const unsigned u_rows = col_grid != 0 ? row_grid : 0u, b_rows = col_interior != 0 ? row_interior : 0u;

  Lane<T>* const edges = shared;
  constexpr int edge_lanes = 4 * D * (NW + 2) * 32;
  Lane<T>* const ring = shared + edge_lanes + warp * RW * 32 + lane;
  Lane<T>* const staged = shared + edge_lanes + slots * R * 32 + warp * RW * 32 + lane;
  // x halo: [parity][level][row][side 0: column x0 - 1 (west), 1: column x0 + 32 W (east)], filled
  // by the neighbouring blocks; at the box's faces the boundary columns wait in a ring of planes
  // beside b's ([slot][row][side]), staged with u.
  T* const xin = reinterpret_cast<T*>(shared + edge_lanes + (slots + 1) * R * 32);
  T* const ring_x = xin + 2 * D * R * 2;
  auto xe = [&](T* base_, int parity, int level, int side, int row) -> T& {
    return base_[((parity * D + level) * R + row) * 2 + side];
  };
  T* const west_nb = cx > 0 ? cluster.map_shared_rank(xin, rank - 1) : nullptr;
  T* const east_nb = cx + 1 < CX ? cluster.map_shared_rank(xin, rank + 1) : nullptr;
  const bool west_boundary = CX > 1 && cx == 0 && x0 == 1;
  const bool east_boundary = CX > 1 && cx + 1 == CX && x0 + 32 * W == g.nx + 1;
  Lane<T>* const north_nb = (warp == 0 && cy > 0) ? cluster.map_shared_rank(edges, rank - CX) : nullptr;
  Lane<T>* const south_nb = (warp == NW - 1 && cy + 1 < CY) ? cluster.map_shared_rank(edges, rank + CX) : nullptr;
  auto edge_in = [&](Lane<T>* arr, int parity, int level, int w, int side) -> Lane<T>& {
    return arr[(((parity * D + level) * (NW + 2) + w + 1) * 2 + side) * 32 + lane];
  };
  auto edge = [&](int parity, int level, int w, int side) -> Lane<T>& { return edge_in(edges, parity, level, w, side); };
  // Publishes level `level` of the warp's rows: its top and bottom rows for the warps above and
  // below (in the neighbouring block for the first and last warp), its first and last columns
  // for the neighbouring blocks.
  auto publish = [&](int parity, int level, const Lane<T> (&v)[RW]) {
    edge(parity, level, warp, 0) = v[0];
    edge(parity, level, warp, 1) = v[RW - 1];
    if (north_nb) edge_in(north_nb, parity, level, NW, 0) = v[0];
    if (south_nb) edge_in(south_nb, parity, level, -1, 1) = v[RW - 1];
    if (lane == 0 && west_nb)
#pragma unroll
      for (int r = 0; r < RW; ++r) xe(west_nb, parity, level, 1, warp * RW + r) = v[r].v[0];
    if (lane == 31 && east_nb)
#pragma unroll
      for (int r = 0; r < RW; ++r) xe(east_nb, parity, level, 0, warp * RW + r) = v[r].v[W - 1];
  };
  const T* const u_lane = u + base;
  const T* const b_lane = b + base;
  auto fetch = [&](int k, int slot) {
    const std::int64_t at = k * g.plane;
    const unsigned u_read = k >= 0 && k <= nz + 1 ? u_rows : 0u, b_read = k >= 1 && k <= nz ? b_rows : 0u;
#pragma unroll
    for (int r = 0; r < RW; ++r) {
      const bool read = u_read >> r & 1u;
      copy_async_16(staged + 32 * r, read ? u_lane + at + r * g.pitch : u + 1, read);
    }
    if ((west_boundary || east_boundary) && lane < RW) {
      const std::int64_t kk = k < 0 ? 0 : k > nz + 1 ? nz + 1 : k;
      const std::int64_t i = i0 + lane < 0 ? 0 : i0 + lane > g.ny + 1 ? g.ny + 1 : i0 + lane;
      const T* const row = u + kk * g.plane + i * g.pitch;
      T* const to = ring_x + (slot * R + warp * RW + lane) * 2;
      if (west_boundary) copy_async<sizeof(T)>(to, row);
      if (east_boundary) copy_async<sizeof(T)>(to + 1, row + g.nx + 1);
    }
    commit_copies();
#pragma unroll
    for (int r = 0; r < RW; ++r) {
      const bool read = b_read >> r & 1u;
      copy_async_16(ring + (slot * R + r) * 32, read ? b_lane + at + r * g.pitch : b + 1, read);
    }
    commit_copies();
  };
  auto point = [&](int p, int r, int q) {
    const std::int64_t k = p < 1 ? 1 : p > nz ? nz : p;
    const std::int64_t i = i0 + r < 1 ? 1 : i0 + r > g.ny ? g.ny : i0 + r;
    const std::int64_t j = x + q < 1 ? 1 : x + q > g.nx ? g.nx : x + q;
    return g.point<3>(k, i, j);
  };
  const int first = kz0 - D, end = kz1 + D;
  // Every halo starts at zero (the first step reads the parity before it; a ghost side is never
  // written): the edge rows with their padding, and the x halo.
  for (int i = warp * 32 + lane; i < 4 * D * (NW + 2) * 32; i += NW * 32) shared[i] = Lane<T>{};
  for (int i = warp * 32 + lane; i < 2 * D * 2 * R + slots * R * 2; i += NW * 32) xin[i] = T(0);
  cluster.sync();
  int slot = ((first % slots) + slots) % slots;
  fetch(first, slot);

  auto step = [&](int k, Lane<T> (&up)[D][RW], Lane<T> (&mid)[D][RW]) {
    const int parity = k & 1;
    const int next_slot = slot + 1 == slots ? 0 : slot + 1;
    if (Split && k != first) cluster_wait();  // the neighbours published step k - 1 and read all of its halos
    wait_copies<1>();
    Lane<T> fresh[RW];
#pragma unroll
    for (int r = 0; r < RW; ++r) fresh[r] = staged[32 * r];
    if (k + 1 < end) fetch(k + 1, next_slot);
    publish(parity, 0, fresh);
    // Split: level D's halos, read before the arrival (after it the neighbours may overwrite them).
    // The x halo of level t - 1 for the warp's rows: [row][side], from the neighbours' columns or
    // the boundary ring (plane k - t).
    auto x_halo = [&](int t, T (&h)[RW][2]) {
      constexpr int V = 2 * RW / W;
      const Lane<T>* const from = reinterpret_cast<const Lane<T>*>(&xe(xin, parity ^ 1, t - 1, 0, warp * RW));
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const Lane<T> v = from[i];
#pragma unroll
        for (int q = 0; q < W; ++q) h[(i * W + q) / 2][(i * W + q) % 2] = v.v[q];
      }
      if (west_boundary || east_boundary) {
        const int b_slot = slot - t < 0 ? slot - t + slots : slot - t;
        const Lane<T>* const bnd = reinterpret_cast<const Lane<T>*>(ring_x + (b_slot * R + warp * RW) * 2);
#pragma unroll
        for (int i = 0; i < V; ++i) {
          const Lane<T> v = bnd[i];
#pragma unroll
          for (int q = 0; q < W; ++q) {
            const int side = (i * W + q) % 2;
            if (side == 0 ? west_boundary : east_boundary) h[(i * W + q) / 2][side] = v.v[q];
          }
        }
      }
    };
    Lane<T> last_north, last_south;
    T last_x[RW][2];
    auto grab = [&](int t) {
      last_north = edge(parity ^ 1, t - 1, warp - 1, 1);
      last_south = edge(parity ^ 1, t - 1, warp + 1, 0);
      if constexpr (CX > 1) x_halo(t, last_x);
    };
    if constexpr (Split && D == 1) {
      grab(1);
      cluster_arrive();
    }
    for_each_level<1, D>([&](auto level) {
      constexpr int t = decltype(level)::value;
      const int p = k - t;
      const Lane<T>(&c)[RW] = mid[t - 1];
      constexpr bool grabbed = Split && t == D;
      const Lane<T> north = grabbed ? last_north : edge(parity ^ 1, t - 1, warp - 1, 1);
      const Lane<T> south = grabbed ? last_south : edge(parity ^ 1, t - 1, warp + 1, 0);
      const int b_slot = slot - t < 0 ? slot - t + slots : slot - t;
      Lane<T> next[RW];
      T hx[RW][2];
      if constexpr (CX == 1) {
        (void)hx;  // no x halo: the tile's own ghost columns, as in the plane stream
      } else if constexpr (grabbed) {
#pragma unroll
        for (int r = 0; r < RW; ++r) hx[r][0] = last_x[r][0], hx[r][1] = last_x[r][1];
      } else {
        x_halo(t, hx);
      }
#pragma unroll
      for (int r = 0; r < RW; ++r) {
        const Lane<T> rhs = ring[(b_slot * R + r) * 32];
        T west = __shfl_up_sync(0xffffffffu, c[r].v[W - 1], 1);
        T east = __shfl_down_sync(0xffffffffu, c[r].v[0], 1);
        if constexpr (CX > 1) {
          west = lane == 0 ? hx[r][0] : west;
          east = lane == 31 ? hx[r][1] : east;
        }
        const Lane<T>& n = r > 0 ? c[r > 0 ? r - 1 : 0] : north;
        const Lane<T>& so = r + 1 < RW ? c[r + 1 < RW ? r + 1 : r] : south;
#pragma unroll
        for (int q = 0; q < W; ++q) {
          const Neighbours<T, 3> nb{c[r].v[q], n.v[q], so.v[q],
                                    q + 1 < W ? c[r].v[q + 1 < W ? q + 1 : q] : east,
                                    q > 0 ? c[r].v[q > 0 ? q - 1 : 0] : west,
                                    up[t - 1][r].v[q], fresh[r].v[q]};
          next[r].v[q] = s.update(nb, point(p, r, q), rhs.v[q]);
        }
      }
      if (p < 1 || p > nz) {
#pragma unroll
        for (int r = 0; r < RW; ++r) next[r] = c[r];
      } else if (keeps != 0) {
#pragma unroll
        for (int r = 0; r < RW; ++r)
#pragma unroll
          for (int q = 0; q < W; ++q)
            if (keeps >> (r * W + q) & 1u) next[r].v[q] = c[r].v[q];
      }
#pragma unroll
      for (int r = 0; r < RW; ++r) up[t - 1][r] = fresh[r];
      if constexpr (t < D) {
        publish(parity, t, next);
        if constexpr (Split && t == D - 1) {
          grab(D);
          cluster_arrive();
        }
#pragma unroll
        for (int r = 0; r < RW; ++r) fresh[r] = next[r];
      } else if (p >= kz0 && p < kz1 && row_stored != 0 && col_stored != 0) {
        T* const at = out + p * g.plane + base;
#pragma unroll
        for (int r = 0; r < RW; ++r) {
          if (!(row_stored >> r & 1u)) continue;
          T* const row = at + r * g.pitch;
          if (col_stored == whole) {
            *reinterpret_cast<Lane<T>*>(row) = next[r];
          } else {
#pragma unroll
            for (int q = 0; q < W; ++q)
              if (col_stored >> q & 1u) row[q] = next[r].v[q];
          }
        }
      }
    });
    slot = next_slot;
    if constexpr (!Split) cluster.sync();
  };
  Lane<T> even[D][RW], odd[D][RW];
#pragma unroll
  for (int t = 0; t < D; ++t)
#pragma unroll
    for (int r = 0; r < RW; ++r) even[t][r] = odd[t][r] = Lane<T>{};
  for (int k = first; k < end; k += 2) {
    step(k, even, odd);
    if (k + 1 < end) step(k + 1, odd, even);
  }
  if constexpr (Split) cluster_wait();  // no neighbour writes into this block's shared memory any more
  wait_copies<0>();
}

template <int D, class T>
constexpr std::size_t cluster_shared_bytes() {
  return plane_stream_shared_bytes<T>(D) + (2 * D + D + 2) * 2 * plane_stream_rows * sizeof(T);
}

// One cluster column (nx <= 128 CX); cluster rows of 32 CY loaded rows, D ghost rows each side.
template <int D, int CX, int CY, bool Split, class S, class T>
__global__ void __launch_bounds__(32 * plane_stream_warps, 1)
    cluster_kernel(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b, Shape g,
                   std::int64_t segment_planes) {
  extern __shared__ Lane<T> shared[];
  const int cx = blockIdx.x % CX, cy = blockIdx.y % CY;
  const std::int64_t crow = blockIdx.y / CY;
  constexpr int kept = plane_stream_rows * CY - 2 * D;
  const std::int64_t Y = crow * kept + 1 - D;  // first loaded row of the cluster
  const std::int64_t x0 = CX == 1 ? static_cast<std::int64_t>(blockIdx.x) * plane_columns_kept<D, T> + 1 - plane_ghost_columns<D, T>
                                  : 1 + static_cast<std::int64_t>(cx) * 32 * Lane<T>::width;
  const std::int64_t y0 = Y + cy * plane_stream_rows;
  const std::int64_t z0 = static_cast<std::int64_t>(blockIdx.z) * segment_planes + 1;
  const std::int64_t z1 = min(z0 + segment_planes, g.nz + 1);
  stream_cluster<D, CX, CY, Split>(s, u, out, b, g, x0, y0, z0, z1, Y + D, Y + D + kept, threadIdx.x, threadIdx.y, shared);
}

template <int D, int CX, int CY, bool Split, class S, class T>
float run_cluster(const S& s, const DeviceGrid<T>& u, DeviceGrid<T>& out, const DeviceGrid<T>& b, int reps,
                  int forced_segments) {
  const Shape g = shape_of(u.layout());
  if (CX > 1 && g.nx > 128 * CX) { printf("nx too wide\n"); return -1; }
  const std::int64_t xtiles = CX == 1 ? tile_count(g.nx, plane_columns_kept<D, T>) : CX;
  constexpr int kept = plane_stream_rows * CY - 2 * D;
  const std::int64_t crows = (g.ny + kept - 1) / kept;
  auto kernel = cluster_kernel<D, CX, CY, Split, S, T>;
  const std::size_t bytes = cluster_shared_bytes<D, T>();
  RELAX_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
  if (CX * CY > 8) RELAX_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = CX; attr[0].val.clusterDim.y = CY; attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr; cfg.numAttrs = 1;
  cfg.blockDim = dim3(32, plane_stream_warps);
  cfg.dynamicSmemBytes = bytes;
  cfg.gridDim = dim3(xtiles, CY * crows, 1);
  int clusters = 0;
  RELAX_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg));
  std::int64_t segments = forced_segments > 0 ? forced_segments : plane_segments(crows * (CX == 1 ? xtiles : 1), g.nz, D, clusters);
  const std::int64_t planes = tile_count(g.nz, segments);
  cfg.gridDim = dim3(xtiles, CY * crows, tile_count(g.nz, planes));
  printf("  cluster %dx%d D=%d: %lld cluster rows, max active clusters %d, segments %lld (planes %lld), shared %zu\n",
         CX, CY, D, (long long)crows, clusters, (long long)segments, (long long)planes, bytes);
  return time_ms(reps, [&] {
    RELAX_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, s, u.origin(), out.origin(), b.origin(), g, planes));
  });
}

template <int D, int CX, int CY, bool Split = true>
void compare(std::int64_t nx, std::int64_t ny, std::int64_t nz, int forced = 0) {
  const Stencil7<float> s(10.0);
  study::Box box(Extents(nx, ny, nz));
  const int reps = nx * ny * nz > 50'000'000 ? 20 : 3;
  const float ms_ref =
      time_ms(reps, [&] { launch_plane_stream<D>(s, box.u, box.ref, box.b, nullptr, PlaneSchedule::segments); });
  const float ms = run_cluster<D, CX, CY, Split>(s, box.u, box.got, box.b, reps, forced);
  const std::int64_t diff = box.differing();
  const double pts = double(nx) * ny * nz * D;
  printf("%lldx%lldx%lld D=%d cluster %dx%d split %d: differing %lld | plane stream %.3f ms %.1f G/s | cluster %.3f ms %.1f G/s | x%.3f\n",
         (long long)nx, (long long)ny, (long long)nz, D, CX, CY, (int)Split, (long long)diff, ms_ref, pts / ms_ref / 1e6, ms,
         pts / ms / 1e6, ms_ref / ms);
}

int main() {
  // 512^3: x exchanged by clusters of 4 blocks (no x ghost), y by 1 or 2; y only (x tiles with a
  // ghost zone) in clusters of 1 to 8 blocks; split = arrive after the last publish, wait at the
  // next step (0: one cluster.sync a step).
  compare<4, 4, 2, false>(512, 512, 512);
  compare<4, 4, 2, true>(512, 512, 512);
  compare<4, 4, 1, true>(512, 512, 512);
  compare<4, 1, 1, true>(512, 512, 512);
  compare<4, 1, 2, false>(512, 512, 512);
  compare<4, 1, 2, true>(512, 512, 512);
  compare<4, 1, 4, true>(512, 512, 512);
  compare<4, 1, 8, true>(512, 512, 512);
  compare<3, 4, 2, true>(512, 512, 512);
  compare<3, 1, 4, true>(512, 512, 512);
  // The same work as the plane stream (one 120-column tile): the cost of the cluster code alone.
  compare<4, 1, 1, true>(120, 512, 512);
  compare<4, 1, 8, true>(120, 512, 512);
  // Awkward boxes (bits against the plane stream).
  compare<4, 4, 2, true>(500, 77, 33);
  compare<4, 2, 4, true>(250, 300, 41);
  compare<4, 1, 2, true>(333, 200, 100);
  compare<2, 4, 2, true>(333, 200, 100);
  compare<1, 4, 2, true>(333, 200, 100);
  compare<4, 1, 4, true>(256, 256, 256);
  return 0;
}
