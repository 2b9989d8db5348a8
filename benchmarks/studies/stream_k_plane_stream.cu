// Study (not a strategy): the 3D plane stream of `TemporalBlock<D, ColumnStream>`
// (`agent/plane_stream.cuh`) with its work balanced over the resident blocks instead of cut into
// equal plane segments.
//
// The plane stream cuts each (x, y) tile's nz planes into the number of segments that minimises
// waves x (L + 2D + 1) (`plane_segments`): at 512^3, D = 4, 110 tiles on 132 SMs give 6 segments
// of 86 planes in 5 waves, 475 steps a block against 427 of ideal balance; every segment pays
// 2D steps of warm-up and drain. Two other schedules, as many blocks as are resident:
// - stream-K (`plane_stream_k_kernel`, which the library now runs from D = 3: `use_plane_stream_k`):
//   block k takes the planes [k T / B, (k + 1) T / B) of all T = tiles x nz planes in tile order
//   (x tiles fastest), as one or more pieces (one per tile it crosses), each streamed by
//   `stream_planes`: 427 + about 1.8 x 8 steps at 512^3. Neighbouring tiles are no longer at the
//   same planes at the same time, so the ghost zone's second reads may miss L2.
// - heads and tails (where tiles < blocks): one block per tile streams planes [1, P]; the other
//   blocks each take the rest [P + 1, nz] of m tiles in turn, P chosen so that
//   P + 2D = m (nz - P + 2D): 440 steps at 512^3. The head blocks stay in step with each other.
// It compares bits and time against the segments on the same grids, in one process. Measured on
// the H200 (docs/results/h200/logs/stream_k_plane_stream_study.txt; the first run had the
// stream-K kernel in this file): bit-identical everywhere; at D = 4, 512^3, stream-K 1.10x and
// heads and tails 1.11x the segments' speed; stream-K 1.05-1.07x at 256^3 to 768^3; at D = 2 both
// slower (0.90x, 0.95x), and stream-K slower on boxes of a few planes a block (0.83x at
// 500 x 77 x 33, D = 3). Heads and tails lose where tiles are few (0.56x at 256^3) and need
// fewer tiles than blocks. Built with the benchmarks (relax_study_stream_k); run it with no
// arguments.
#include <relax/domain/device_grid.hpp>
#include <relax/stencil/stencil7.hpp>
#include <relax/strategy/column_stream.cuh>

#include "study_support.cuh"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace relax;
using namespace relax::detail;
using study::time_ms;

// The tile `tile` (x tiles fastest) of a box `g` at depth D: its first loaded column and row.
template <int D, class T>
__device__ __forceinline__ void tile_origin(const Shape& g, std::int64_t tile, std::int64_t& x0, std::int64_t& y0) {
  const std::int64_t tiles_x = tile_count(g.nx, plane_columns_kept<D, T>);
  x0 = (tile % tiles_x) * plane_columns_kept<D, T> + 1 - plane_ghost_columns<D, T>;
  y0 = (tile / tiles_x) * plane_rows_kept<D> + 1 - D;
}

template <int D, class S, class T>
__global__ void __launch_bounds__(32 * plane_stream_warps, 1)
    heads_tails_kernel(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b, Shape g,
                       std::int64_t tiles, std::int64_t head_planes, std::int64_t tails_each) {
  extern __shared__ __align__(16) unsigned char queue_bytes[];
  auto* shared = reinterpret_cast<Lane<T>*>(queue_bytes);
  std::int64_t x0, y0;
  if (blockIdx.x < tiles) {
    tile_origin<D, T>(g, blockIdx.x, x0, y0);
    stream_planes<D>(s, u, out, b, g, PlaneTile{x0, y0, 32, 1}, 1, head_planes + 1, threadIdx.x, threadIdx.y,
                     shared);
    return;
  }
  const std::int64_t first = (blockIdx.x - tiles) * tails_each;
  for (std::int64_t tile = first; tile < min(first + tails_each, tiles); ++tile) {
    tile_origin<D, T>(g, tile, x0, y0);
    stream_planes<D>(s, u, out, b, g, PlaneTile{x0, y0, 32, 1}, head_planes + 1, g.nz + 1, threadIdx.x,
                     threadIdx.y, shared);
  }
}

enum class Schedule { stream_k, heads_tails };

template <int D, class S, class T>
int resident_blocks(const void* kernel, std::size_t bytes) {
  if (bytes > 48 * 1024)
    RELAX_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
  int per_sm = 0;
  RELAX_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 32 * plane_stream_warps, bytes));
  return per_sm * current_sm_count();
}

// One sweep of D levels of `schedule` from u into out; false where the schedule does not apply.
template <int D, class S, class T>
bool launch(Schedule schedule, const S& s, const DeviceGrid<T>& u, DeviceGrid<T>& out, const DeviceGrid<T>& b,
            bool verbose) {
  const Shape g = shape_of(u.layout());
  const std::int64_t tiles = tile_count(g.nx, plane_columns_kept<D, T>) * tile_count(g.ny, plane_rows_kept<D>);
  const std::size_t bytes = plane_stream_shared_bytes<T>(D);
  if (schedule == Schedule::stream_k) {
    if (verbose)
      printf("  stream-K: %.1f planes a block\n",
             double(tiles * g.nz) / double(std::min<std::int64_t>(current_sm_count(), tiles * g.nz)));
    launch_plane_stream<D>(s, u, out, b, nullptr, PlaneSchedule::stream_k);
    return true;
  } else {
    auto kernel = heads_tails_kernel<D, S, T>;
    const int blocks = resident_blocks<D, S, T>(reinterpret_cast<const void*>(kernel), bytes);
    if (tiles >= blocks) return false;
    const std::int64_t each = tile_count(tiles, blocks - tiles);
    // P + 2D = m (nz - P + 2D): the heads' steps equal the tails'.
    const std::int64_t head = std::clamp<std::int64_t>((each * (g.nz + 2 * D) - 2 * D) / (each + 1), 1, g.nz - 1);
    const std::int64_t used = tiles + tile_count(tiles, each);
    if (verbose)
      printf("  heads and tails: %lld heads of %lld planes, %lld tail blocks of %lld tiles (%lld planes each)\n",
             (long long)tiles, (long long)head, (long long)(used - tiles), (long long)each, (long long)(g.nz - head));
    kernel<<<used, dim3(32, plane_stream_warps), bytes>>>(s, u.origin(), out.origin(), b.origin(), g, tiles, head, each);
  }
  RELAX_CUDA_CHECK_LAUNCH();
  return true;
}

template <int D>
void compare(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  const Stencil7<float> s(10.0);
  study::Box box(Extents(nx, ny, nz));
  const int reps = nx * ny * nz > 50'000'000 ? 20 : 5;
  const double points = double(nx) * ny * nz * D;
  // Interleaved, twice: the plane stream, then each schedule.
  for (int round = 0; round < 2; ++round) {
    const float ms_ref =
        time_ms(reps, [&] { launch_plane_stream<D>(s, box.u, box.ref, box.b, nullptr, PlaneSchedule::segments); });
    printf("%lldx%lldx%lld D=%d round %d: segments %.3f ms %.1f G/s\n", (long long)nx, (long long)ny,
           (long long)nz, D, round, ms_ref, points / ms_ref / 1e6);
    for (Schedule schedule : {Schedule::stream_k, Schedule::heads_tails}) {
      const char* name = schedule == Schedule::stream_k ? "stream-K" : "heads and tails";
      box.reset();
      if (!launch<D>(schedule, s, box.u, box.got, box.b, round == 0)) {
        printf("  %s: not applicable (tiles >= blocks)\n", name);
        continue;
      }
      const float ms = time_ms(reps, [&] { launch<D>(schedule, s, box.u, box.got, box.b, false); });
      printf("  %-16s %.3f ms %.1f G/s  speed-up %.3f over the segments  differing %lld\n", name, ms,
             points / ms / 1e6, ms_ref / ms, (long long)box.differing());
    }
  }
}

int main() {
  int device = 0;
  cudaDeviceProp prop{};
  RELAX_CUDA_CHECK(cudaGetDevice(&device));
  RELAX_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  compare<4>(512, 512, 512);
  compare<3>(512, 512, 512);
  compare<2>(512, 512, 512);
  compare<4>(256, 256, 256);
  compare<4>(384, 384, 384);
  compare<4>(768, 768, 768);  // more tiles than blocks: stream-K only
  // Awkward boxes (bits against the plane stream).
  compare<4>(333, 200, 100);
  compare<3>(500, 77, 33);
  compare<4>(5, 17, 33);
  compare<1>(130, 40, 7);
  return 0;
}
