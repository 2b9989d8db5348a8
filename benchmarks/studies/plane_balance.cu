// Study (not a strategy): what each tile of the 3D plane stream costs, and how evenly the launched
// stream-K kernel's blocks finish (issue 12).
//
// Nsight Compute found the folded stream-K kernel at 512^3, D = 4, with its slowest SM busy 9.3%
// longer than the mean (docs/performance-notes.md, "Unchecked steps on, and folded tiles").
// Stream-K gives every block the same number of planes; if tiles' planes do not cost the same,
// the blocks do not finish together. This study measures, with the GPU's global timer:
// - every tile streamed alone down all its planes by one block (`stream_planes`, the library's
//   agent; all tiles at once where they fit on the SMs), folded and unfolded;
// - every block of the library's stream-K schedule (the same shares and pieces as
//   `plane_stream_k_kernel`), with the tiles its pieces cover, and of its weighted shares
//   (`plane_stream_w_kernel`'s), with the mean time of the blocks of one piece, two and more;
// - stream-K's equal shares on one and two blocks fewer than resident (whether vertical
//   neighbours streamed at the same planes matter: with whole tiles at 512^3 on 132 blocks six
//   shares are a row of tiles), and heads and tails (`PlaneHeadsTable`), which lines them up on
//   purpose, in the library's form and others (equal or weighted, a piece's overhead, rounds);
// and checks the timed kernels' output against the library's launch bit for bit. First it times
// the library's stream-K with shares equal in planes, weighted by the model fitted on those tile
// times (`weighted_plane_shares`), and heads and tails, bits compared, and the host time of a
// launch of each schedule; `--shares` stops there, `--aligned` runs only the 512^3 boxes' part
// after it. Built with the benchmarks (relax_study_plane_balance); run it with no arguments.
#include <relax/domain/device_grid.hpp>
#include <relax/stencil/stencil7.hpp>
#include <relax/strategy/column_stream.cuh>

#include "study_support.cuh"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

using namespace relax;
using namespace relax::detail;

struct BlockTime {
  unsigned long long start, end;  // global timer, ns
  int sm, pieces;
  long long first_tile, last_tile;
};

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ int sm_id() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return static_cast<int>(r);
}

// Block k streams tile k down all planes.
template <int D, class S, class T>
__global__ void __launch_bounds__(32 * plane_stream_warps, 1)
    tile_kernel(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b, Shape g,
                PlaneTiling tiling, BlockTime* times) {
  extern __shared__ __align__(16) unsigned char queue_bytes[];
  __syncthreads();
  const unsigned long long start = global_ns();
  stream_planes<D>(s, u, out, b, g, plane_tile(tiling, blockIdx.x), 1, g.nz + 1, threadIdx.x, threadIdx.y,
                   reinterpret_cast<Lane<T>*>(queue_bytes));
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0)
    times[blockIdx.x] = {start, global_ns(), sm_id(), 1, static_cast<long long>(blockIdx.x),
                         static_cast<long long>(blockIdx.x)};
}

// `plane_stream_k_kernel` (`weighted` false: `plane_share`'s equal share) or `plane_stream_w_kernel`
// (true: the share from `shares`), timed: the library's `stream_share` over the same share.
template <int D, class S, class T>
__global__ void __launch_bounds__(32 * plane_stream_warps, 1)
    stream_k_timed(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b, Shape g,
                   PlaneTiling tiling, std::int64_t planes, bool weighted, const PlaneShareTable shares,
                   BlockTime* times) {
  extern __shared__ __align__(16) unsigned char queue_bytes[];
  __syncthreads();
  const unsigned long long start = global_ns();
  const PlaneShare share = weighted ? PlaneShare{shares.first[blockIdx.x], shares.first[blockIdx.x + 1]}
                                    : plane_share(planes, blockIdx.x, gridDim.x);
  stream_share<D>(s, u, out, b, g, tiling, share.first, share.last, reinterpret_cast<Lane<T>*>(queue_bytes));
  __syncthreads();
  // The pieces the share was streamed as, and the tiles of its first and last.
  int pieces = 0;
  long long first = -1, last = -1;
  for (std::int64_t at = share.first; at < share.last; ++pieces) {
    const PlanePiece piece = plane_piece(at, share.last, g.nz);
    if (first < 0) first = piece.tile;
    last = piece.tile;
    at += piece.z1 - piece.z0;
  }
  if (threadIdx.x == 0 && threadIdx.y == 0) times[blockIdx.x] = {start, global_ns(), sm_id(), pieces, first, last};
}

// `plane_stream_h_kernel` (heads and tails, `PlaneHeadsTable`), timed: the library's
// `next_heads_piece` over the table given.
template <int D, class S, class T>
__global__ void __launch_bounds__(32 * plane_stream_warps, 1)
    heads_timed(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b, Shape g,
                PlaneTiling tiling, const PlaneHeadsTable heads, BlockTime* times) {
  extern __shared__ __align__(16) unsigned char queue_bytes[];
  __syncthreads();
  const unsigned long long start = global_ns();
  PlaneHeadsCursor cursor;
  PlanePiece piece;
  int pieces = 0;
  long long first = -1, last = -1;
  while (next_heads_piece(heads, blockIdx.x, gridDim.x, tiling.tiles, g.nz, cursor, piece)) {
    stream_planes<D>(s, u, out, b, g, plane_tile(tiling, piece.tile), piece.z0, piece.z1, threadIdx.x, threadIdx.y,
                     reinterpret_cast<Lane<T>*>(queue_bytes));
    if (pieces++ == 0) first = piece.tile;
    last = piece.tile;
  }
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) times[blockIdx.x] = {start, global_ns(), sm_id(), pieces, first, last};
}

const char* kind(const PlaneTiling& t, const PlaneTile& tile) {
  if (tile.stacks > 1) return "stacked";
  if (tile.segments > 1) return "folded";
  if (tile.lanes < 32) return "folded1";
  const bool first_x = tile.x0 + t.ghost_columns == 1;
  const bool last_x = tile.x0 + t.ghost_columns == 1 + (t.tiles_x - 1) * t.columns_kept;
  const bool first_y = tile.y0 + t.ghost_rows == 1;
  const bool last_y = tile.y0 + t.ghost_rows == 1 + (t.tiles_y - 1) * t.rows_kept;
  if (last_y) return last_x ? "last row, last x" : "last row";
  if (first_y) return first_x ? "first row, first x" : last_x ? "first row, last x" : "first row";
  return first_x ? "first x" : last_x ? "last x" : "inner";
}

// The blocks in order of their time: the block indices, fastest first.
std::vector<int> by_time(const std::vector<BlockTime>& h) {
  std::vector<int> order(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(),
            [&](int a, int c) { return h[a].end - h[a].start < h[c].end - h[c].start; });
  return order;
}

// The best of three timings of one launch (`launch()`), in ms.
template <class F>
float best_of_three(F&& launch) {
  float best = 1e30f;
  for (int round = 0; round < 3; ++round) best = std::min(best, study::time_ms(1, launch));
  return best;
}

// The 8 fastest and 12 slowest blocks of `order` (`by_time`): time, block, SM, pieces, tiles.
void print_blocks_by_time(const std::vector<BlockTime>& h, const std::vector<int>& order, const PlaneTiling& tiling) {
  const int blocks = static_cast<int>(order.size());
  printf("  blocks by time (us, block, SM, pieces, tiles: kinds):\n");
  for (int r = 0; r < blocks; ++r) {
    if (r >= 8 && r < blocks - 12) continue;
    const BlockTime& b = h[order[r]];
    printf("    %7.1f  %3d  %3d  %d  %lld..%lld: %s / %s\n", (b.end - b.start) / 1e3, order[r], b.sm, b.pieces,
           b.first_tile, b.last_tile, kind(tiling, plane_tile(tiling, b.first_tile)),
           kind(tiling, plane_tile(tiling, b.last_tile)));
  }
}

std::vector<BlockTime> fetch(const relax::DeviceBuffer<BlockTime>& times, std::size_t n) {
  std::vector<BlockTime> h(n);
  RELAX_CUDA_CHECK(cudaMemcpy(h.data(), times.data(), n * sizeof(BlockTime), cudaMemcpyDeviceToHost));
  return h;
}

// Returns whether every timed kernel's output was the library's launch's, bit for bit.
template <int D>
bool study_box(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  using T = float;
  const Stencil7<T> s(10.0);
  study::Box box(Extents(nx, ny, nz));
  std::int64_t differing_points = 0;  // over every kernel compared
  auto differing = [&] {
    const std::int64_t d = box.differing();
    differing_points += d;
    return static_cast<long long>(d);
  };
  const Shape g = shape_of(box.u.layout());
  constexpr std::size_t bytes = plane_stream_shared_bytes<T>(D);
  const PlaneTiling library = plane_stream_tiling<D, T>(g);
  for (int form = 0; form < 3; ++form) {
    // The plain walk, the library's tiles (`plane_stream_tiling`: folded, and stacked where it
    // can), and where those are stacked, folded only.
    const bool folding = form > 0;
    if (form == 2 && library.stack == 1) continue;
    const PlaneTiling tiling =
        form == 1 ? library
                  : plane_tiling(g.nx, g.ny, Lane<T>::width, plane_columns_kept<D, T>, plane_rows_kept<D>,
                                 plane_ghost_columns<D, T>, D, folding, 0);
    printf("%lldx%lldx%lld D=%d %s: %lld tiles (%lld x %lld, fold %lld of %d lanes, stack %d of %d warps)\n",
           (long long)nx, (long long)ny, (long long)nz, D,
           form == 0 ? "whole tiles" : form == 1 ? "folded" : "folded, not stacked", (long long)tiling.tiles,
           (long long)tiling.tiles_x, (long long)tiling.tiles_y, (long long)tiling.fold, tiling.lanes, tiling.stack,
           tiling.stack_warps);
    // Each tile alone, all at once where they fit (twice: the first warms up).
    relax::DeviceBuffer<BlockTime> times(static_cast<std::size_t>(std::max<std::int64_t>(tiling.tiles, 4096)));
    constexpr auto tk = tile_kernel<D, Stencil7<T>, T>;
    plane_stream_resident<tk, bytes>(D);  // sets the kernel's shared memory
    for (int round = 0; round < 2; ++round) {
      tk<<<static_cast<unsigned>(tiling.tiles), dim3(32, plane_stream_warps), bytes>>>(
          s, box.u.origin(), box.got.origin(), box.b.origin(), g, tiling, times.data());
      RELAX_CUDA_CHECK_LAUNCH();
      RELAX_CUDA_CHECK(cudaDeviceSynchronize());
    }
    std::vector<BlockTime> h = fetch(times, static_cast<std::size_t>(tiling.tiles));
    // By kind, with the mean over the inner tiles' of what the tiles cost and of what the model of
    // the weighted shares (`plane_tile_weight`) says they cost: where the two part, refit it.
    printf("  one block a tile, all planes (us); by kind: mean, min, max, count; over inner: measured, modelled\n");
    const char* kinds[] = {"inner", "first x", "last x", "first row", "first row, first x", "first row, last x",
                           "last row", "last row, last x", "folded", "folded1", "stacked"};
    double inner_us = 0, inner_weight = 0;
    for (const char* k : kinds) {
      double sum = 0, lo = 1e30, hi = 0, weight = 0;
      int count = 0;
      for (std::int64_t t = 0; t < tiling.tiles; ++t) {
        const PlaneTile tile = plane_tile(tiling, t);
        if (std::strcmp(kind(tiling, tile), k) != 0) continue;
        const double us = (h[t].end - h[t].start) / 1e3;
        sum += us, lo = std::min(lo, us), hi = std::max(hi, us), ++count;
        weight += plane_tile_weight(tiling, tile, g.nx, g.ny, Lane<T>::width);
      }
      if (count == 0) continue;
      if (inner_us == 0) inner_us = sum / count, inner_weight = weight / count;  // "inner" comes first
      printf("    %-20s %8.1f %8.1f %8.1f %4d   %.3f %.3f\n", k, sum / count, lo, hi, count, sum / count / inner_us,
             weight / count / inner_weight);
    }
    // The stream-K schedule, timed per block, against the library's launch (bits): shares equal
    // in planes, then weighted (the folded tiling only: the library's). Both on at most the
    // table's blocks (256): on a GPU with more resident blocks the equal shares are not the
    // library's launch's.
    constexpr auto sk = stream_k_timed<D, Stencil7<T>, T>;
    const int blocks = static_cast<int>(std::min<std::int64_t>(
        {plane_stream_resident<sk, bytes>(D), tiling.tiles * g.nz, std::int64_t{PlaneShareTable::capacity}}));
    const PlaneShareTable table = weighted_plane_shares(tiling, g.nx, g.ny, g.nz, Lane<T>::width, blocks);
    for (bool weighted : {false, true}) {
      if (weighted && !folding) continue;
      box.reset();
      launch_plane_stream<D>(s, box.u, box.ref, box.b, nullptr,
                             weighted ? PlaneSchedule::weighted : PlaneSchedule::stream_k);
      const float best = best_of_three([&] {
        sk<<<blocks, dim3(32, plane_stream_warps), bytes>>>(s, box.u.origin(), box.got.origin(), box.b.origin(), g,
                                                           tiling, tiling.tiles * g.nz, weighted, table,
                                                           times.data());
        RELAX_CUDA_CHECK_LAUNCH();
      });
      h = fetch(times, static_cast<std::size_t>(blocks));
      unsigned long long t0 = ~0ull, t1 = 0;
      double sum = 0, by_pieces[4] = {}, count_by_pieces[4] = {};
      for (const BlockTime& b : h) {
        const double us = (b.end - b.start) / 1e3;
        t0 = std::min(t0, b.start), t1 = std::max(t1, b.end), sum += us;
        by_pieces[std::min(b.pieces, 3)] += us, count_by_pieces[std::min(b.pieces, 3)] += 1;
      }
      const std::vector<int> order = by_time(h);
      const double mean = sum / blocks;
      printf("  stream-K %s, %d blocks, %.1f planes each: kernel %.1f us (events, best of 3: %.1f us, %.1f G/s); "
             "block mean %.1f, min %.1f, max %.1f us; differing %lld\n",
             weighted ? "weighted" : "equal shares", blocks, double(tiling.tiles * g.nz) / blocks, (t1 - t0) / 1e3,
             best * 1e3, double(nx) * ny * nz * D / best / 1e6, mean,
             (h[order.front()].end - h[order.front()].start) / 1e3,
             (h[order.back()].end - h[order.back()].start) / 1e3, differing());
      printf("  block mean by pieces (us, blocks):");
      for (int p = 1; p < 4; ++p)
        if (count_by_pieces[p] > 0)
          printf(" %d%s: %.1f (%.0f)", p, p == 3 ? "+" : "", by_pieces[p] / count_by_pieces[p], count_by_pieces[p]);
      printf("\n");
      print_blocks_by_time(h, order, tiling);
    }
    // Vertical neighbours at the same planes (the thirteenth session's hypothesis): with whole
    // tiles at 512^3 and 132 blocks, six equal shares are five tiles (a row of tiles), so the
    // block six on streams the tile below at the same planes and their common ghost rows come
    // from L2. One or two blocks fewer break that; they should cost 0.8% and 1.5% of the speed
    // (fewer SMs) if the alignment does not matter.
    for (int fewer = 0; fewer <= 2; ++fewer) {
      const int k = blocks - fewer;
      const double share = double(tiling.tiles * g.nz) / k;
      const double row = double(tiling.tiles_x * g.nz) / share;  // shares a row of tiles (whole tiles)
      box.reset();
      const float best = best_of_three([&] {
        sk<<<k, dim3(32, plane_stream_warps), bytes>>>(s, box.u.origin(), box.got.origin(), box.b.origin(), g,
                                                      tiling, tiling.tiles * g.nz, false, table, times.data());
        RELAX_CUDA_CHECK_LAUNCH();
      });
      printf("  stream-K equal shares on %d blocks (%.2f planes each, a row of tiles = %.3f shares): %.1f us, "
             "%.1f G/s; differing %lld\n",
             k, share, row, best * 1e3, double(nx) * ny * nz * D / best / 1e6, differing());
    }
    // Heads and tails (`heads_and_tails_shares`): vertical neighbours aligned on purpose, folded
    // or not; the library's form (weighted, in rounds, a piece's overhead 2D planes) and others.
    if (blocks <= tiling.tiles) {
      printf("  heads and tails: %lld tiles on %d blocks, no tails\n", (long long)tiling.tiles, blocks);
      continue;
    }
    struct Variant {
      bool weighted;
      double overhead;
      bool rounds;
      bool calibrated;  // weighted by the per-plane times of the last run's head blocks
    };
    // The library's form first (weighted, tails in rounds, a piece's overhead 2D planes), then
    // twice calibrated: each tile weighing what its head block took a plane (its head's planes
    // and the overhead) in the run before, over the median; how far a better model could go.
    std::vector<double> measured;
    for (const Variant v : {Variant{true, 2.0 * D, true, false}, Variant{true, 2.0 * D, true, true},
                            Variant{true, 2.0 * D, true, true}, Variant{true, 1.5 * D, true, false},
                            Variant{true, 2.5 * D, true, false}, Variant{true, 2.0 * D, false, false},
                            Variant{false, 0.0, false, false}}) {
      const PlaneHeadsTable heads =
          v.calibrated
              ? heads_and_tails_shares(measured, g.nz, blocks, v.overhead, v.rounds)
              : heads_and_tails_shares(tiling, g.nx, g.ny, g.nz, Lane<T>::width, blocks, v.overhead, v.weighted, v.rounds);
      constexpr auto hk = heads_timed<D, Stencil7<T>, T>;
      plane_stream_resident<hk, bytes>(D);
      box.reset();
      const float best = best_of_three([&] {
        hk<<<blocks, dim3(32, plane_stream_warps), bytes>>>(s, box.u.origin(), box.got.origin(), box.b.origin(), g,
                                                           tiling, heads, times.data());
        RELAX_CUDA_CHECK_LAUNCH();
      });
      h = fetch(times, static_cast<std::size_t>(blocks));
      double head_sum = 0, tail_sum = 0, lo = 1e30, hi = 0;
      int pieces = 0;
      for (int k = 0; k < blocks; ++k) {
        const double us = (h[k].end - h[k].start) / 1e3;
        (k < tiling.tiles ? head_sum : tail_sum) += us;
        lo = std::min(lo, us), hi = std::max(hi, us), pieces += h[k].pieces;
      }
      printf("  heads and tails (%s%s, piece overhead %.0f planes, %d rounds): %d pieces, %.1f us, %.1f G/s; head "
             "blocks mean %.1f us, tail blocks %.1f, min %.1f, max %.1f; differing %lld\n",
             v.calibrated ? "calibrated" : v.weighted ? "weighted" : "equal", v.rounds ? ", tails in rounds" : "",
             v.overhead, heads.rounds, pieces,
             best * 1e3, double(nx) * ny * nz * D / best / 1e6, head_sum / double(tiling.tiles),
             tail_sum / double(blocks - tiling.tiles), lo, hi, differing());
      if (v.weighted && v.overhead == 2.0 * D && v.rounds) {  // the library's form or calibrated: weights for the next
        std::vector<double> per_plane(static_cast<std::size_t>(tiling.tiles));
        for (std::int64_t k = 0; k < tiling.tiles; ++k)
          per_plane[k] = (h[k].end - h[k].start) / (double(heads.value[k] - 1) + v.overhead);
        std::vector<double> sorted = per_plane;
        std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
        measured.assign(per_plane.size(), 1.0);
        for (std::size_t k = 0; k < per_plane.size(); ++k) measured[k] = per_plane[k] / sorted[sorted.size() / 2];
        print_blocks_by_time(h, by_time(h), tiling);
      }
    }
  }
  return differing_points == 0;
}

// The library's launch with stream-K's shares equal in planes and weighted (`weighted_plane_shares`),
// interleaved, twice: time and bits.
template <int D>
bool compare_shares(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  const Stencil7<float> s(10.0);
  study::Box box(Extents(nx, ny, nz));
  const double points = double(nx) * ny * nz * D;
  const int reps = nx * ny * nz > 50'000'000 ? 20 : 5;
  bool same = true;
  for (int round = 0; round < 2; ++round) {
    const float equal =
        study::time_ms(reps, [&] { launch_plane_stream<D>(s, box.u, box.ref, box.b, nullptr, PlaneSchedule::stream_k); });
    box.reset();
    const float weighted =
        study::time_ms(reps, [&] { launch_plane_stream<D>(s, box.u, box.got, box.b, nullptr, PlaneSchedule::weighted); });
    const long long differing = box.differing();
    box.reset();
    const float heads =
        study::time_ms(reps, [&] { launch_plane_stream<D>(s, box.u, box.got, box.b, nullptr, PlaneSchedule::heads); });
    const long long differing_heads = box.differing();
    box.reset();
    const float stolen = study::time_ms(
        reps, [&] { launch_plane_stream<D>(s, box.u, box.got, box.b, nullptr, PlaneSchedule::heads_and_steals); });
    const long long differing_stolen = box.differing();
    box.reset();
    const float tiles_stolen = study::time_ms(
        reps, [&] { launch_plane_stream<D>(s, box.u, box.got, box.b, nullptr, PlaneSchedule::tiles_and_steals); });
    const long long differing_tiles_stolen = box.differing();
    same = same && differing == 0 && differing_heads == 0 && differing_stolen == 0 && differing_tiles_stolen == 0;
    printf("%lldx%lldx%lld D=%d round %d: stream-K equal shares %.3f ms %.1f G/s, weighted %.3f ms %.1f G/s, "
           "heads and tails %.3f ms %.1f G/s, heads and tails then steals %.3f ms %.1f G/s, whole tiles then "
           "steals %.3f ms %.1f G/s; speed-up over equal: weighted %.3f, heads %.3f, heads then steals %.3f, "
           "tiles then steals %.3f; differing %lld, %lld, %lld, %lld\n",
           (long long)nx, (long long)ny, (long long)nz, D, round, equal, points / equal / 1e6, weighted,
           points / weighted / 1e6, heads, points / heads / 1e6, stolen, points / stolen / 1e6, tiles_stolen,
           points / tiles_stolen / 1e6, equal / weighted, equal / heads, equal / stolen, equal / tiles_stolen,
           differing, differing_heads, differing_stolen, differing_tiles_stolen);
  }
  // The host's part of a launch (the schedule's queries, its table, the launch call), by schedule:
  // the first kernel of a timed batch waits for it. And the weighted table's arithmetic alone.
  const int launches = 8;
  auto host_us = [&](auto&& f) {
    RELAX_CUDA_CHECK(cudaDeviceSynchronize());
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i) f();
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    RELAX_CUDA_CHECK(cudaDeviceSynchronize());
    return us / launches;
  };
  printf("  host time a launch (us, mean of %d):", launches);
  using Named = std::pair<const char*, PlaneSchedule>;
  for (const Named& named : {Named{"chosen", PlaneSchedule::chosen}, Named{"segments", PlaneSchedule::segments},
                             Named{"stream-K", PlaneSchedule::stream_k}, Named{"weighted", PlaneSchedule::weighted},
                             Named{"heads", PlaneSchedule::heads},
                             Named{"heads then steals", PlaneSchedule::heads_and_steals}})
    printf(" %s %.1f", named.first,
           host_us([&] { launch_plane_stream<D>(s, box.u, box.got, box.b, nullptr, named.second); }));
  const PlaneTiling tiling = plane_stream_tiling<D, float>(shape_of(box.u.layout()));
  std::int64_t sink = 0;
  const double table_us = host_us([&] {
    sink += weighted_plane_shares(tiling, nx, ny, nz, Lane<float>::width,
                                  std::min(current_sm_count(), PlaneShareTable::capacity))
                .first[1];
  });
  printf("; the weighted table alone %.2f (%lld)\n", table_us, (long long)(sink % 2));
  return same;
}

int main(int argc, char** argv) {
  cudaDeviceProp prop{};
  RELAX_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  bool same = true;
  if (argc > 1 && std::strcmp(argv[1], "--aligned") == 0) {  // the 512^3 boxes only
    same = study_box<4>(512, 512, 512) && same;
    same = study_box<3>(512, 512, 512) && same;
    return same ? 0 : 1;
  }
  for (auto e : {Extents(512, 512, 512), Extents(768, 768, 768), Extents(256, 256, 256), Extents(333, 200, 100)})
    same = compare_shares<4>(e.nx, e.ny, e.nz) && same;
  same = compare_shares<3>(512, 512, 512) && same;
  same = compare_shares<3>(768, 768, 768) && same;
  if (argc > 1 && std::strcmp(argv[1], "--shares") == 0) return same ? 0 : 1;
  same = study_box<4>(512, 512, 512) && same;
  same = study_box<4>(768, 768, 768) && same;
  same = study_box<3>(512, 512, 512) && same;
  return same ? 0 : 1;
}
