#pragma once
//! \file
//! `TemporalBlock<D, ColumnStream>`: exact temporal blocking that streams along y through
//! registers (see `ColumnStream` in `tiled.hpp`): in 2D a warp streams a strip of columns down
//! the rows (`relax/agent/column_stream.cuh`), in 3D a block streams an (x, y) tile down the
//! planes (`relax/agent/plane_stream.cuh`), each tile's planes cut into segments or, from D = 3,
//! all tiles' planes shared out over the resident blocks (stream-K, `use_plane_stream_k`), in
//! shares of equal modelled cost (`weighted_plane_shares`), laid out where the tiles are fewer
//! than the blocks so that vertical neighbours stream the same planes together (heads and tails,
//! `PlaneHeadsTable`).

#include <relax/agent/column_stream.cuh>
#include <relax/agent/plane_stream.cuh>
#include <relax/core/batches.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/core/device.hpp>
#include <relax/core/launch.hpp>
#include <relax/core/stream.hpp>
#include <relax/domain/device_grid.hpp>
#include <relax/stencil/traits.hpp>
#include <relax/strategy/plane_schedule.hpp>
#include <relax/strategy/tiled.hpp>
#include <relax/strategy/traits.hpp>
#include <relax/strategy/tuning.hpp>

#include <cuda.h>
#include <cuda/atomic>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <type_traits>
#include <utility>

namespace relax {

namespace detail {

using tuning::stream_target_warps;
using tuning::stream_warps_per_block;

template <int D, class S, class T>
__global__ void __launch_bounds__(32 * stream_warps_per_block)
    column_stream_kernel(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b,
                         Shape g, std::int64_t segment_rows) {
  // The warps of a block take adjacent strips of the same segment, so a block's row loads cover
  // one long contiguous run of each row.
  const std::int64_t strip_index = static_cast<std::int64_t>(blockIdx.x) * stream_warps_per_block + threadIdx.y;
  const std::int64_t x0 = strip_index * strip_kept<D, T> + 1 - D;  // first loaded column
  const std::int64_t y0 = static_cast<std::int64_t>(blockIdx.y) * segment_rows + 1;  // first stored row
  if (x0 + D > g.nx) return;
  const std::int64_t y1 = min(y0 + segment_rows, g.ny + 1);  // one past the last stored row
  stream_strip<D>(s, u, out, b, g, x0, y0, y1, threadIdx.x);
}

template <int D, class S, class T>
void launch_column_stream(const S& s, const DeviceGrid<T>& u, DeviceGrid<T>& out,
                          const DeviceGrid<T>& b, cudaStream_t stream) {
  const Shape g = shape_of(u.layout());
  const std::int64_t strips = tile_count(g.nx, strip_kept<D, T>);
  const std::int64_t rows = std::max<std::int64_t>(4 * D, g.ny * strips / stream_target_warps);
  const std::int64_t segments = tile_count(g.ny, rows);
  const dim3 grid(static_cast<unsigned>(tile_count(strips, stream_warps_per_block)),
                  static_cast<unsigned>(segments));
  require(grid.y <= 65535u, "ny", g.ny, "a grid whose row segments fit in one launch");
  column_stream_kernel<D><<<grid, dim3(32, stream_warps_per_block), 0, stream>>>(
      s, u.origin(), out.origin(), b.origin(), g, rows);
  RELAX_CUDA_CHECK_LAUNCH();
}

template <int D, class S, class T>
__global__ void __launch_bounds__(32 * plane_stream_warps, 1)
    plane_stream_kernel(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b, Shape g,
                        PlaneTiling tiling, std::int64_t segment_planes) {
  extern __shared__ __align__(16) unsigned char queue_bytes[];
  const std::int64_t z0 = static_cast<std::int64_t>(blockIdx.y) * segment_planes + 1;
  const std::int64_t z1 = min(z0 + segment_planes, g.nz + 1);
  stream_planes<D>(s, u, out, b, g, plane_tile(tiling, blockIdx.x), z0, z1, threadIdx.x, threadIdx.y,
                   reinterpret_cast<Lane<T>*>(queue_bytes));
}

//! Streams planes [first, last) of all tiles (numbered tile by tile), a piece per tile they meet
//! (`plane_piece`).
template <int D, class S, class T>
__device__ __forceinline__ void stream_share(const S& s, const T* __restrict__ u, T* __restrict__ out,
                                             const T* __restrict__ b, const Shape& g, const PlaneTiling& tiling,
                                             std::int64_t first, std::int64_t last, Lane<T>* queue) {
  for (std::int64_t at = first; at < last;) {
    const PlanePiece piece = plane_piece(at, last, g.nz);
    stream_planes<D>(s, u, out, b, g, plane_tile(tiling, piece.tile), piece.z0, piece.z1, threadIdx.x,
                     threadIdx.y, queue);
    at += piece.z1 - piece.z0;
  }
}

//! Stream-K: block k streams its share of the planes of all tiles (`plane_share`), a piece per
//! tile it meets.
template <int D, class S, class T>
__global__ void __launch_bounds__(32 * plane_stream_warps, 1)
    plane_stream_k_kernel(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b, Shape g,
                          PlaneTiling tiling, std::int64_t planes) {
  extern __shared__ __align__(16) unsigned char queue_bytes[];
  const PlaneShare share = plane_share(planes, blockIdx.x, gridDim.x);
  stream_share<D>(s, u, out, b, g, tiling, share.first, share.last, reinterpret_cast<Lane<T>*>(queue_bytes));
}

//! Stream-K with shares weighted by what their tiles' planes cost: block k streams planes
//! [shares.first[k], shares.first[k + 1]) of all tiles (`weighted_plane_shares`).
template <int D, class S, class T>
__global__ void __launch_bounds__(32 * plane_stream_warps, 1)
    plane_stream_w_kernel(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b, Shape g,
                          PlaneTiling tiling, const PlaneShareTable shares) {
  extern __shared__ __align__(16) unsigned char queue_bytes[];
  const std::int64_t last = shares.first[blockIdx.x + 1];
  stream_share<D>(s, u, out, b, g, tiling, shares.first[blockIdx.x], last, reinterpret_cast<Lane<T>*>(queue_bytes));
}

//! Heads and tails (`PlaneHeadsTable`): block k < tiles streams the head of tile k, the other
//! blocks the tails, every piece through one call of the agent.
template <int D, class S, class T>
__global__ void __launch_bounds__(32 * plane_stream_warps, 1)
    plane_stream_h_kernel(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b, Shape g,
                          PlaneTiling tiling, const PlaneHeadsTable heads) {
  extern __shared__ __align__(16) unsigned char queue_bytes[];
  PlaneHeadsCursor cursor;
  PlanePiece piece;
  while (next_heads_piece(heads, blockIdx.x, gridDim.x, tiling.tiles, g.nz, cursor, piece))
    stream_planes<D>(s, u, out, b, g, plane_tile(tiling, piece.tile), piece.z0, piece.z1, threadIdx.x, threadIdx.y,
                     reinterpret_cast<Lane<T>*>(queue_bytes));
}

//! Warp 0 of a block out of pieces: the upper part of another block's piece, cut from its claim
//! word (`agent/plane_claims.hpp`), as a word of its own (tile, first plane, end); 0 where no
//! piece has planes worth a warm-up. Of the pieces with at least half the most planes to take it
//! cuts the one at the block's turn, so that blocks out of work together do not all swap on one
//! word; a swap fails only where its victim claimed or was stolen from meanwhile, and the tries
//! are bounded. Not inlined: its registers stay out of the stream's.
template <int D>
__device__ __noinline__ unsigned long long steal_planes(unsigned long long* words) {
  constexpr int overhead = static_cast<int>(tuning::plane_stream_piece_overhead * D + 0.5);
  constexpr int per_lane = PlaneHeadsTable::capacity / 32;
  auto planes_of = [](std::uint64_t w) {  // below 2^24
    return static_cast<int>(
        plane_steal_planes(w, overhead, tuning::plane_stream_steal_lag, tuning::plane_stream_steal_least));
  };
  unsigned long long got = 0;
  for (int attempt = 0; attempt < 64 && got == 0; ++attempt) {
    int planes[per_lane];
    int most = 0;
#pragma unroll
    for (int i = 0; i < per_lane; ++i) {
      const int v = threadIdx.x + 32 * i;
      planes[i] = v < static_cast<int>(gridDim.x)
                      ? planes_of(cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(words[v]).load(
                            cuda::std::memory_order_relaxed))
                      : 0;
      most = planes[i] > most ? planes[i] : most;
    }
    for (int offset = 16; offset > 0; offset /= 2) {
      const int other = __shfl_xor_sync(0xffffffffu, most, offset);
      most = other > most ? other : most;
    }
    if (most == 0) break;
    unsigned candidates[per_lane];
    int count = 0;
#pragma unroll
    for (int i = 0; i < per_lane; ++i) {
      candidates[i] = __ballot_sync(0xffffffffu, planes[i] > 0 && 2 * planes[i] >= most);
      count += __popc(candidates[i]);
    }
    int pick = static_cast<int>((blockIdx.x + attempt) % count), victim = 0;
#pragma unroll
    for (int i = 0; i < per_lane; ++i) {
      const int here = __popc(candidates[i]);
      if (pick >= 0 && pick < here) {
        unsigned m = candidates[i];
        for (int j = 0; j < pick; ++j) m &= m - 1;
        victim = 32 * i + __ffs(m) - 1;
      }
      pick -= here;
    }
    if (threadIdx.x == 0) {
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> word(words[victim]);
      unsigned long long w = word.load(cuda::std::memory_order_relaxed);
      const int taken = planes_of(w);
      if (taken > 0 && word.compare_exchange_strong(w, plane_claim_cut(w, taken), cuda::std::memory_order_relaxed)) {
        const PlaneClaim c = unpack_plane_claim(w);
        got = pack_plane_claim({c.tile, c.end - taken, c.end});
      }
    }
    got = __shfl_sync(0xffffffffu, got, 0);
  }
  return got;
}

//! A block's pieces with steals (`agent/plane_claims.hpp`): each piece is published in the
//! block's claim word and streamed as far as the block's claims on it go; after its own pieces
//! (heads and tails where `Heads`, else tiles blockIdx.x, blockIdx.x + blocks, ... whole) the
//! block steals (`steal_planes`) until no piece has planes worth a warm-up.
//! `words` holds a spent word per block (zeros, or what the last launch left).
template <int D, class S, class T, bool Heads>
__global__ void __launch_bounds__(32 * plane_stream_warps, 1)
    plane_stream_s_kernel(S s, const T* __restrict__ u, T* __restrict__ out, const T* __restrict__ b, Shape g,
                          PlaneTiling tiling, const PlaneHeadsTable heads, unsigned long long* words) {
  extern __shared__ __align__(16) unsigned char queue_bytes[];
  __shared__ int claimed_end;
  __shared__ unsigned long long stolen;  // the word a steal took (its tile and planes), 0: none
  Lane<T>* const queue = reinterpret_cast<Lane<T>*>(queue_bytes);
  unsigned long long* const mine = words + blockIdx.x;
  const bool leader = threadIdx.x == 0 && threadIdx.y == 0;
  auto stream = [&](std::int64_t tile, std::int64_t z0, std::int64_t z1) {
    const std::uint64_t published = plane_claim_published(tile, z0, z1, plane_claim_chunk);
    if (leader) cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(*mine).store(
        published, cuda::std::memory_order_relaxed);
    stream_planes<D, tuning::plane_stream_split, true, ClaimedEnd>(
        s, u, out, b, g, plane_tile(tiling, tile), z0, unpack_plane_claim(published).next, threadIdx.x, threadIdx.y,
        queue, ClaimedEnd{mine, &claimed_end});
  };
  if constexpr (Heads) {
    PlaneHeadsCursor cursor;
    PlanePiece piece;
    while (next_heads_piece(heads, blockIdx.x, gridDim.x, tiling.tiles, g.nz, cursor, piece))
      stream(piece.tile, piece.z0, piece.z1);
  } else {
    for (std::int64_t tile = blockIdx.x; tile < tiling.tiles; tile += gridDim.x) stream(tile, 1, g.nz + 1);
  }
  // Out of its own pieces: steal.
  for (;;) {
    if (threadIdx.y == 0) {
      const unsigned long long got = steal_planes<D>(words);
      if (threadIdx.x == 0) stolen = got;
    }
    __syncthreads();
    const std::uint64_t got = stolen;
    if (got == 0) break;
    const PlaneClaim c = unpack_plane_claim(got);
    stream(c.tile, c.next, c.end);  // its first barrier comes after every thread has read `stolen`
  }
}

//! The 3D stream's loads are aligned vectors: the interior of every row starts 16 bytes aligned,
//! and a row's lead padding holds the ghost columns left of point 0 (what `GridLayout::of` makes);
//! it counts planes in int.
template <int D, class T>
void require_plane_stream_layout(const DeviceGrid<T>& u, const DeviceGrid<T>& out, const DeviceGrid<T>& b) {
  const Shape g = shape_of(u.layout());
  for (const DeviceGrid<T>* grid : {&u, &b, &out})
    require(reinterpret_cast<std::uintptr_t>(grid->origin() + 1) % 16 == 0 &&
                g.pitch % Lane<T>::width == 0 && g.plane % Lane<T>::width == 0 &&
                grid->layout().lead >= plane_ghost_columns<D, T> - 1,
            "layout", g.pitch, "rows whose interior starts 16-byte aligned (GridLayout::of)");
  require(g.nz <= 2147483647 - 2 * 8, "nz", g.nz, "fewer than 2^31 - 16 planes (the 3D stream counts planes in int)");
}

// The resident blocks of 3D stream kernel `Kernel` with `Bytes` of shared memory (its depth's,
// `depth`) on the current device, its shared memory set first where it needs more than 48 KiB:
// asked once per device and remembered, since a launch asks on every batch, and a batch of one
// or two launches (512³ at D = 4) starts its first kernel only after the host's work before it
// (relax_study_plane_balance prints a launch's host time by schedule: on an H100 machine 4 to 8 µs
// at 512³, docs/results/h100/logs/stacked_tiles_and_warmup.txt).
// A program that resets a device after a launch loses the attribute, and its next launch fails
// with CUDA's error.
template <auto Kernel, std::size_t Bytes>
std::int64_t plane_stream_resident(int depth) {
  static std::atomic<int> per_sm[max_cached_devices];
  const int blocks = cached_per_device(per_sm, [](int) {
    if constexpr (Bytes > 48 * 1024)
      RELAX_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(Bytes)));
    int n = 0;
    RELAX_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, Kernel, 32 * plane_stream_warps, Bytes));
    return n;
  });
  require(blocks >= 1, "D", depth, "a depth whose 3D stream block fits on an SM");
  return static_cast<std::int64_t>(blocks) * current_sm_count();
}

// The id of the current CUDA context, unique for the life of the process (`cuCtxGetId`, through
// the runtime's driver entry points: no link to the driver library).
inline unsigned long long current_context_id() {
  using GetCurrent = CUresult (*)(CUcontext*);
  using GetId = CUresult (*)(CUcontext, unsigned long long*);
  static const std::pair<GetCurrent, GetId> entry = [] {
    void* current = nullptr;
    void* id = nullptr;
    cudaDriverEntryPointQueryResult found_current{}, found_id{};
    RELAX_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &current, 12000, cudaEnableDefault,
                                                      &found_current));
    RELAX_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuCtxGetId", &id, 12000, cudaEnableDefault, &found_id));
    require(found_current == cudaDriverEntryPointSuccess && found_id == cudaDriverEntryPointSuccess, "driver", 0,
            "a CUDA driver with cuCtxGetCurrent and cuCtxGetId (CUDA 12.0 or later)");
    return std::pair<GetCurrent, GetId>{reinterpret_cast<GetCurrent>(current), reinterpret_cast<GetId>(id)};
  }();
  CUcontext context = nullptr;
  unsigned long long value = 0;
  require(entry.first(&context) == CUDA_SUCCESS && context != nullptr && entry.second(context, &value) == CUDA_SUCCESS,
          "context", 0, "a current CUDA context (the runtime makes the device's primary context current)");
  return value;
}

// The claim words of the 3D stream's steals on `stream` (`PlaneHeadsTable::capacity` of them, all
// spent), made at the stream's first launch with steals and kept for the process: 2 KiB a stream,
// by the ids of the current context and of the stream, which no later context or stream takes
// over. So a launch of a destroyed stream still running cannot share them with a new stream's,
// and after a device reset (a new primary context, the old words freed with the old one) a
// stream gets new words. nullptr while `stream` is being captured into a graph, whose replays
// could run side by side: such a launch runs without steals. Made while another stream is being
// captured, they leave that capture whole.
inline unsigned long long* plane_claim_words(cudaStream_t stream) {
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  RELAX_CUDA_CHECK(cudaStreamIsCapturing(stream, &capturing));
  if (capturing != cudaStreamCaptureStatusNone) return nullptr;
  unsigned long long id = 0;
  RELAX_CUDA_CHECK(cudaStreamGetId(stream, &id));
  const unsigned long long context = current_context_id();
  static std::mutex lock;
  static std::map<std::pair<unsigned long long, unsigned long long>, unsigned long long*> made;
  const std::lock_guard<std::mutex> hold(lock);
  unsigned long long*& words = made[{context, id}];
  if (words == nullptr) {
    constexpr std::size_t bytes = sizeof(unsigned long long) * PlaneHeadsTable::capacity;
    {
      // Another stream, of this thread or another, may be being captured in global mode: the
      // words are no part of that capture, so their allocation must not break it.
      const RelaxedCaptureMode relaxed;
      RELAX_CUDA_CHECK(cudaMalloc(&words, bytes));
    }
    RELAX_CUDA_CHECK(cudaMemsetAsync(words, 0, bytes, stream));
  }
  return words;
}

template <int D, class S, class T>
void launch_plane_stream(const S& s, const DeviceGrid<T>& u, DeviceGrid<T>& out, const DeviceGrid<T>& b,
                         cudaStream_t stream, PlaneSchedule schedule = PlaneSchedule::chosen) {
  const Shape g = shape_of(u.layout());
  const PlaneTiling tiling = plane_stream_tiling<D, T>(g);
  const std::int64_t tiles = tiling.tiles;
  require(tiles <= 2147483647, "nx, ny", g.nx * g.ny, "a plane whose streamed tiles fit in one launch");
  require_plane_stream_layout<D>(u, out, b);
  constexpr std::size_t bytes = plane_stream_shared_bytes<T>(D);
  require(bytes <= shared_bytes_limit(), "D", D, "a depth whose plane queue fits in shared memory");
  const dim3 block(32, plane_stream_warps);
  const std::int64_t resident = plane_stream_resident<plane_stream_k_kernel<D, S, T>, bytes>(D);
  const bool stream_k = schedule == PlaneSchedule::chosen && use_plane_stream_k(tiles, g.nz, D, resident);
  // Steals where named or chosen (`use_plane_steals`), on the stream's claim words (none while it
  // is being captured: the launch then runs as without steals).
  const bool named_steals =
      schedule == PlaneSchedule::heads_and_steals || schedule == PlaneSchedule::tiles_and_steals;
  require(!named_steals || plane_steals_fit(tiles, g.nz, plane_claim_chunk), "nz", g.nz,
          "a box whose tiles and planes fit the claim words (plane_steals_fit)");
  unsigned long long* const words =
      named_steals || (stream_k && use_plane_steals(tiles, g.nz, D, resident)) ? plane_claim_words(stream) : nullptr;
  require(!named_steals || words != nullptr, "stream", 0, "a stream not being captured, for steals named");
  // Whole tiles then steals where named or chosen with no fewer tiles than blocks.
  if (words != nullptr && (schedule == PlaneSchedule::tiles_and_steals || (stream_k && tiles >= resident))) {
    constexpr auto kernel = plane_stream_s_kernel<D, S, T, false>;
    const int blocks = static_cast<int>(
        std::min<std::int64_t>(plane_stream_resident<kernel, bytes>(D), PlaneHeadsTable::capacity));
    kernel<<<blocks, block, bytes, stream>>>(s, u.origin(), out.origin(), b.origin(), g, tiling, PlaneHeadsTable{},
                                             words);
    RELAX_CUDA_CHECK_LAUNCH();
    return;
  }
  // Heads and tails where named or chosen and there are more blocks than tiles, then steals with
  // claim words; named with no more blocks than tiles, weighted shares.
  constexpr auto heads_kernel = plane_stream_h_kernel<D, S, T>;
  constexpr auto steals_kernel = plane_stream_s_kernel<D, S, T, true>;
  const bool heads = schedule == PlaneSchedule::heads || schedule == PlaneSchedule::heads_and_steals ||
                     (stream_k && use_heads_and_tails(tiles, D, resident));
  const int heads_blocks =
      heads ? static_cast<int>(std::min<std::int64_t>(
                  {words != nullptr ? plane_stream_resident<steals_kernel, bytes>(D)
                                    : plane_stream_resident<heads_kernel, bytes>(D),
                   tiles * g.nz, std::int64_t{PlaneHeadsTable::capacity}}))
            : 0;
  if (heads_blocks > tiles && words != nullptr) {
    steals_kernel<<<heads_blocks, block, bytes, stream>>>(
        s, u.origin(), out.origin(), b.origin(), g, tiling,
        cached_heads_and_tails(tiling, g.nx, g.ny, g.nz, Lane<T>::width, heads_blocks), words);
  } else if (heads_blocks > tiles) {
    heads_kernel<<<heads_blocks, block, bytes, stream>>>(
        s, u.origin(), out.origin(), b.origin(), g, tiling,
        cached_heads_and_tails(tiling, g.nx, g.ny, g.nz, Lane<T>::width, heads_blocks));
  } else if (schedule == PlaneSchedule::weighted || heads ||
             (stream_k && use_weighted_plane_shares(tiles, g.nz, D, resident))) {
    constexpr auto kernel = plane_stream_w_kernel<D, S, T>;
    const int blocks = static_cast<int>(std::min<std::int64_t>(
        {plane_stream_resident<kernel, bytes>(D), tiles * g.nz, std::int64_t{PlaneShareTable::capacity}}));
    kernel<<<blocks, block, bytes, stream>>>(
        s, u.origin(), out.origin(), b.origin(), g, tiling,
        cached_weighted_plane_shares(tiling, g.nx, g.ny, g.nz, Lane<T>::width, blocks));
  } else if (schedule == PlaneSchedule::stream_k || stream_k) {
    const auto blocks = static_cast<unsigned>(std::min(resident, tiles * g.nz));
    plane_stream_k_kernel<D><<<blocks, block, bytes, stream>>>(s, u.origin(), out.origin(), b.origin(), g, tiling,
                                                               tiles * g.nz);
  } else {
    constexpr auto kernel = plane_stream_kernel<D, S, T>;
    const std::int64_t segments = plane_segments(tiles, g.nz, D, plane_stream_resident<kernel, bytes>(D));
    const std::int64_t planes = tile_count(g.nz, segments);
    const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(tile_count(g.nz, planes)));
    kernel<<<grid, block, bytes, stream>>>(s, u.origin(), out.origin(), b.origin(), g, tiling, planes);
  }
  RELAX_CUDA_CHECK_LAUNCH();
}

// The streaming kernels of depth D for stencil S: the column stream's in 2D; in 3D the plane
// stream's schedules (segments, stream-K, weighted stream-K, heads and tails).
template <int D, class S, class T>
std::array<const void*, 6> kernels_of() {
  if constexpr (S::rank == 2)
    return {reinterpret_cast<const void*>(column_stream_kernel<D, S, T>), nullptr, nullptr, nullptr, nullptr, nullptr};
  else
    return {reinterpret_cast<const void*>(plane_stream_kernel<D, S, T>),
            reinterpret_cast<const void*>(plane_stream_k_kernel<D, S, T>),
            reinterpret_cast<const void*>(plane_stream_w_kernel<D, S, T>),
            reinterpret_cast<const void*>(plane_stream_h_kernel<D, S, T>),
            reinterpret_cast<const void*>(plane_stream_s_kernel<D, S, T, true>),
            reinterpret_cast<const void*>(plane_stream_s_kernel<D, S, T, false>)};
}

// Loads the kernels of depths 1..8 (see Sweeper::preload).
template <class S, class T, int... I>
void preload_column_stream(std::integer_sequence<int, I...>) {
  const std::array<const void*, 6> kernels[] = {kernels_of<I + 1, S, T>()...};
  cudaFuncAttributes attributes{};
  for (const auto& of_depth : kernels)
    for (const void* k : of_depth)
      if (k != nullptr) RELAX_CUDA_CHECK(cudaFuncGetAttributes(&attributes, k));
}

//! One launch of depth d (1 ≤ d ≤ 8): a remainder launch may be shallower than the tag's D.
template <class S, class T>
void launch_column_stream(int d, const S& s, const DeviceGrid<T>& u, DeviceGrid<T>& out,
                          const DeviceGrid<T>& b, cudaStream_t stream) {
  auto at = [&](auto depth) {
    constexpr int D = decltype(depth)::value;
    if constexpr (S::rank == 2) launch_column_stream<D>(s, u, out, b, stream);
    else launch_plane_stream<D>(s, u, out, b, stream);
  };
  switch (d) {
    case 1: return at(std::integral_constant<int, 1>{});
    case 2: return at(std::integral_constant<int, 2>{});
    case 3: return at(std::integral_constant<int, 3>{});
    case 4: return at(std::integral_constant<int, 4>{});
    case 5: return at(std::integral_constant<int, 5>{});
    case 6: return at(std::integral_constant<int, 6>{});
    case 7: return at(std::integral_constant<int, 7>{});
    case 8: return at(std::integral_constant<int, 8>{});
    default: require(false, "D", d, "a depth from 1 to 8");
  }
}

}  // namespace detail

template <int D>
struct Sweeper<TemporalBlock<D, ColumnStream>> {
  //! The deepest D: 8 in 2D; in 3D the deepest whose plane queue fits in shared memory on the
  //! current device (4 on an H200).
  template <class S, class T>
  static int deepest_depth() {
    if constexpr (S::rank == 2) return TemporalBlock<D, ColumnStream>::max_depth;
    int d = 0;
    while (d < TemporalBlock<D, ColumnStream>::max_depth &&
           detail::plane_stream_shared_bytes<T>(d + 1) <= detail::shared_bytes_limit())
      ++d;
    return d;
  }

  //! Loads the kernels of every depth now. CUDA loads a kernel at its first launch (lazy loading,
  //! the default), and a controller that times batches to choose D must not time a module load.
  template <class S, class T>
  static void preload() {
    detail::preload_column_stream<S, T>(std::make_integer_sequence<int, 8>{});
  }

  //! `batch.sweeps` exact sweeps in launches of the tag's D (`batch.depth` for
  //! `D = relax::dynamic`, 1 to 8) and a remainder; the iterate ends in `u`.
  template <class S, class T>
  static void run(const S& s, DeviceGrid<T>& u, DeviceGrid<T>& scratch, const DeviceGrid<T>& b,
                  const Batch& batch, cudaStream_t stream) {
    static_assert(is_stencil_v<S>, "relax: S is not a stencil (is_stencil_v)");
    static_assert(S::radius == 1, "relax: TemporalBlock supports radius-1 stencils");
    const int depth = D == dynamic ? batch.depth : D;
    detail::require(depth >= 1 && depth <= 8, "D", depth, "a depth from 1 to 8");
    detail::require_layout(scratch.layout(), u.layout(), "scratch");
    detail::require_layout(b.layout(), u.layout(), "b");
    detail::require_swept_grid(u.layout(), S::rank, "u");
    detail::for_each_launch(batch.sweeps, depth, [&](int d) {
      detail::launch_column_stream(d, s, u, scratch, b, stream);
      u.swap(scratch);
    });
  }
};

}  // namespace relax
