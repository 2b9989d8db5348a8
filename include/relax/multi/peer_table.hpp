#pragma once
//! \file
//! The table of the CPU-free multi-sub-domain kernel (`multi/peer_store.cuh`): what a kernel
//! knows of its slabs and words, and the arithmetic that numbers its work items, host code too
//! (tested on the host: `tests/host/test_peer_table.cpp`).

#include <relax/config.hpp>
#include <relax/core/arith.hpp>
#include <relax/domain/shape.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#if defined(__CUDACC__)
#define RELAX_FORCE_INLINE __forceinline__
#else
#define RELAX_FORCE_INLINE inline
#endif

namespace relax::detail {

//! The most kernels one solve runs (the width of the norm board).
inline constexpr int peer_max_launches = 32;

//! A kernel's words (zeroed before each solve): `posted[h]`, the checks whose norm kernel h has
//! stored into `norms` (three slots, by check); `stalled`, the earliest halo wait of this kernel
//! that failed, as ~(sweeps << 20 | the sub-domain waited for) (0: none; the earliest names the
//! sub-domain that stopped signalling, later waits fail because of it); `stalled_launch`, 1 + the
//! kernel a board wait failed on.
template <class T>
struct PeerLaunchWords {
  unsigned long long posted[peer_max_launches];
  arith::bits_t<T> norms[3][peer_max_launches];
  unsigned long long stalled;
  int stalled_launch;
};

//! Sub-domains a `stalled` word can name.
inline constexpr int peer_stall_bits = 20;

//! One slab as its kernel sees it (copied into shared memory at the kernel's start).
template <class T>
struct alignas(16) PeerSlab {
  T* array[2];             //!< origins of the iterate after an even / odd number of sweeps
  const T* b;              //!< origin of b
  Shape g;                 //!< the local box
  //! Per side (0: towards row 0, 1: the other): the neighbour's arrays (null without a
  //! neighbour) and the offset that takes an edge vector at `at` here to the neighbour's ring
  //! (`array + at + shift`).
  T* out[2][2];
  std::int64_t shift[2];
  //! Per side, with a neighbour in another kernel (else null: the kernel's grid barrier orders
  //! the stores): this slab's flag words, one per tile of its edge band (word r: the sweeps whose
  //! edge rows the neighbour's tile r has stored into this slab's ring), and the neighbour's
  //! words for this slab.
  unsigned long long* inbound[2];
  unsigned long long* outbound[2];
  std::int64_t tiles_x;      //!< tiles of the walk across a band
  std::int64_t band_items;   //!< tiles of one band (a band: the tiles at one position along y in 2D, z in 3D)
  std::int64_t bands;
  std::int64_t edge_first;   //!< its first item in the kernel's edge phase
  std::int64_t inner_first;  //!< its first item in the kernel's interior phase
  int index;                 //!< the sub-domain
  int neighbour[2];          //!< the neighbours' sub-domains (−1: none)
  int silent;                //!< test hook: never raises its neighbours' flags
  //! The streamed loop (`DeviceLoop<TemporalBlock<D, ColumnStream>>`, a halo of H rows or
  //! planes): the owned rows are storage rows [first, first + owned) along the slowest axis, cut
  //! into `segments` segments of `segment` rows; `band_segments[side]`, the segments that touch
  //! the H owned rows next to the neighbour on `side` (0 without one); `inbound_segments[side]`,
  //! the neighbour's segments that touch its band facing this slab (each raises this slab's word
  //! for that side once a pass and strip group).
  std::int64_t first, owned, halo, segment, segments;
  std::int64_t band_segments[2];
  std::int64_t inbound_segments[2];
  //! Edge bands: the first and, when there are two or more, the last.
  RELAX_HOST_DEVICE std::int64_t edge_items() const { return (bands > 1 ? 2 : 1) * band_items; }
  RELAX_HOST_DEVICE std::int64_t items() const { return bands * band_items; }
};

//! What a kernel of the solve is given.
template <class T>
struct PeerLaunch {
  const PeerSlab<T>* slabs;          //!< its slabs (device memory; shared memory inside the kernel)
  int count;                         //!< how many
  std::int64_t edge_items, items;    //!< the edge tiles of all its slabs; all its tiles
  PeerLaunchWords<T>* words;         //!< its words
  PeerLaunchWords<T>* const* peers;  //!< every kernel's words (its own included), by kernel
  int launches;                      //!< kernels in the solve
  int me;                            //!< this kernel's number
  //! Its boundary blocks (`BlockRoles::specialised`, the Sync kernels: `peer_boundary_blocks` of
  //! its items, from the host, so a pass does no division), or 0 (`BlockRoles::edges_first`); see
  //! `peer_share`.
  std::int64_t boundary = 0;
};

//! The boundary blocks of a specialised schedule (`peer_share`) of `items` work items, the first
//! `edge` of them at a sub-domain edge, over `grid` blocks: of the counts next to the edge items'
//! share of the grid (grid · edge / items, rounded down and up), the one whose busiest block has
//! the fewest items (the load falls on one side and rises on the other, so no other count does
//! better; on a tie the larger, whose edges are done sooner), at least one, at most one per edge
//! item, and leaving one interior block at least.
//! 0 (no roles) when there are no edge items, only edge items, or one block.
RELAX_HOST_DEVICE RELAX_FORCE_INLINE std::int64_t peer_boundary_blocks(std::int64_t edge, std::int64_t items,
                                                                        std::int64_t grid) {
  if (edge <= 0 || edge >= items || grid < 2) return 0;
  const std::int64_t most = edge < grid - 1 ? edge : grid - 1;
  const auto clamp = [most](std::int64_t b) { return b < 1 ? std::int64_t{1} : b > most ? most : b; };
  const auto busiest = [&](std::int64_t b) {  // the items of the busiest block with b boundary blocks
    const std::int64_t at_edge = (edge + b - 1) / b, inside = (items - edge + grid - b - 1) / (grid - b);
    return at_edge > inside ? at_edge : inside;
  };
  const std::int64_t low = clamp(grid * edge / items), high = clamp(grid * edge / items + 1);
  return busiest(high) <= busiest(low) ? high : low;
}

//! The work items a block takes in a pass: v = first, first + stride, ... while v < end.
struct PeerShare {
  std::int64_t first, stride, end;
};

//! The share of block `block` of `grid` in a pass over `items` work items whose first `edge` are at
//! a sub-domain edge. `boundary` 0 (`BlockRoles::edges_first`): every block takes items in turn
//! (block, block + grid, ...), so the edge items go to the first blocks, which go on to interior
//! items. `boundary` from 1 to grid − 1 (thread-block specialisation, `BlockRoles::specialised`;
//! `peer_boundary_blocks`): blocks [0, boundary) take the edge items in turn and nothing else, the
//! others the interior items, so a wait for a neighbour holds up only the boundary blocks. Either
//! way every item is taken once.
RELAX_HOST_DEVICE RELAX_FORCE_INLINE PeerShare peer_share(std::int64_t edge, std::int64_t items, std::int64_t block,
                                                          std::int64_t grid, std::int64_t boundary) {
  if (boundary <= 0) return {block, grid, items};
  if (block < boundary) return {block, boundary, edge};
  return {edge + block - boundary, grid - boundary, items};
}

//! Work item `v` of a kernel's pass (its edge items first: every slab's first edge band, then its
//! last, in the order of the slabs; then the slabs' interior bands in order): its slab, the walk tile (x-block `bx`, tile `t`; `r` within
//! its band), the edge sides it owns (bit 0: the first row, facing the neighbour towards row 0;
//! bit 1: the last) and, of those, the sides with flags (a neighbour in another kernel).
struct PeerItem {
  int slab;
  std::int64_t bx, t, r;
  int sides, flagged;
};

//! The slab of a kernel whose items (of the edge phase, or of the interior phase) hold item `v`.
template <class T>
RELAX_HOST_DEVICE RELAX_FORCE_INLINE int peer_slab_of(const PeerLaunch<T>& launch, std::int64_t v, bool edge) {
  int slab = 0;
  while (slab + 1 < launch.count && v >= (edge ? launch.slabs[slab + 1].edge_first : launch.slabs[slab + 1].inner_first))
    ++slab;
  return slab;
}

template <class T>
RELAX_HOST_DEVICE RELAX_FORCE_INLINE PeerItem peer_item(const PeerLaunch<T>& launch, std::int64_t v, int rank) {
  PeerItem it{0, 0, 0, 0, 0, 0};
  const bool edge = v < launch.edge_items;
  it.slab = peer_slab_of(launch, v, edge);
  const PeerSlab<T>& sl = launch.slabs[it.slab];
  const std::int64_t local = v - (edge ? sl.edge_first : sl.inner_first);
  const std::int64_t position = local / sl.band_items;
  it.r = local % sl.band_items;
  const std::int64_t band = edge ? (position == 0 ? 0 : sl.bands - 1) : position + 1;
  it.bx = it.r % sl.tiles_x;
  it.t = rank == 2 ? band : band * (sl.band_items / sl.tiles_x) + it.r / sl.tiles_x;
  for (int side = 0; side < 2; ++side)
    if (band == (side == 0 ? 0 : sl.bands - 1) && sl.out[side][0] != nullptr) {
      it.sides |= 1 << side;
      if (sl.inbound[side] != nullptr) it.flagged |= 1 << side;
    }
  return it;
}

#if defined(__CUDACC__)
//! Block-level, at a kernel's start: copies the kernel's table of slabs into its dynamic shared
//! memory `shared` (read at every work item: in global memory it would be a round trip to L2
//! after each grid barrier, whose acquire empties L1) and returns the copy.
template <int BlockX, int BlockY, class T>
__device__ __forceinline__ const PeerSlab<T>* load_peer_table(const PeerLaunch<T>& launch, unsigned char* shared) {
  const auto* from = reinterpret_cast<const unsigned long long*>(launch.slabs);
  auto* to = reinterpret_cast<unsigned long long*>(shared);
  const int words = launch.count * static_cast<int>(sizeof(PeerSlab<T>) / sizeof(unsigned long long));
  for (int i = static_cast<int>(threadIdx.y * BlockX + threadIdx.x); i < words; i += BlockX * BlockY) to[i] = from[i];
  __syncthreads();
  return reinterpret_cast<const PeerSlab<T>*>(shared);
}
#endif

//! Host: the walk's tiling of slab `t` of shape `g` (tiles of `tile_columns` points across a row
//! and `block_y` rows; a thread takes `rows` rows in 2D, planes in 3D).
template <class T>
void peer_tile(PeerSlab<T>& t, const Shape& g, int rank, std::int64_t tile_columns, int block_y, int rows) {
  const auto count = [](std::int64_t n, std::int64_t size) { return (n + size - 1) / size; };
  t.tiles_x = count(g.nx, tile_columns);
  const std::int64_t tiles_y = count(g.ny, rank == 2 ? std::int64_t{block_y} * rows : block_y);
  t.band_items = rank == 2 ? t.tiles_x : t.tiles_x * tiles_y;
  t.bands = rank == 2 ? tiles_y : count(g.nz, rows);
}

//! Host: the tiles of an edge band of a slab of shape `g` (the same in every slab of one
//! decomposition: they do not depend on the rows a thread takes, nor on the slab's thickness).
inline std::int64_t peer_band_items(const Shape& g, int rank, std::int64_t tile_columns, int block_y) {
  PeerSlab<float> probe{};
  peer_tile(probe, g, rank, tile_columns, block_y, 1);
  return probe.band_items;
}

//! Host: the offset that takes an edge row (plane) of a slab of shape `mine` on `side` (storage
//! row 1 on side 0, row `along` on side 1) to the neighbour's ring row on our side: its last ring
//! row (its `along` + 1) for the neighbour towards row 0, its row 0 for the other.
inline std::int64_t peer_ring_shift(int side, const Shape& mine, const Shape& theirs, int rank) {
  const std::int64_t step = rank == 2 ? mine.pitch : mine.plane;
  return side == 0 ? (rank == 2 ? theirs.ny : theirs.nz) * step : -(rank == 2 ? mine.ny : mine.nz) * step;
}

//! Host: of the segments of `segment` rows that `owned` rows are cut into, those that touch the
//! band of `halo` rows on `side` (0: the first rows, 1: the last).
inline std::int64_t peer_band_segments(std::int64_t owned, std::int64_t halo, std::int64_t segment, int side) {
  const std::int64_t segments = (owned + segment - 1) / segment;
  return side == 0 ? std::min(segments, (halo + segment - 1) / segment)
                   : segments - std::max<std::int64_t>(0, owned - halo) / segment;
}

//! Bytes of a kernel's table of `count` slabs in its dynamic shared memory (what follows it
//! starts 16-byte aligned).
template <class T>
RELAX_HOST_DEVICE constexpr std::size_t peer_table_bytes(int count) {
  return (static_cast<std::size_t>(count) * sizeof(PeerSlab<T>) + 15) / 16 * 16;
}

//! Host: the streamed loop's segments of a slab whose owned rows are storage rows
//! [first, first + owned), a halo of `halo` rows, cut into segments of `segment` rows (see
//! `PeerSlab`); its `out` pointers must be set (they mark the sides with a neighbour).
template <class T>
void peer_stream_tile(PeerSlab<T>& t, std::int64_t first, std::int64_t owned, std::int64_t halo, std::int64_t segment) {
  t.first = first;
  t.owned = owned;
  t.halo = halo;
  t.segment = segment;
  t.segments = (owned + segment - 1) / segment;
  for (int side = 0; side < 2; ++side)
    t.band_segments[side] = t.out[side][0] == nullptr ? 0 : peer_band_segments(owned, halo, segment, side);
}

//! The segments of a slab's edge phase: those of its bands (all of them when its bands cover it).
template <class T>
RELAX_HOST_DEVICE RELAX_FORCE_INLINE std::int64_t peer_edge_segments(const PeerSlab<T>& t) {
  return std::min(t.segments, t.band_segments[0] + t.band_segments[1]);
}

//! Host: numbers the segments of a kernel's `count` slabs for the streamed loop (`edge_first`
//! and `inner_first`, counted in segments: a pass has this many items per strip group) and
//! returns {its edge segments, its segments}.
template <class T>
std::pair<std::int64_t, std::int64_t> peer_stream_number(PeerSlab<T>* slabs, std::size_t count) {
  std::int64_t segments = 0;
  for (std::size_t k = 0; k < count; ++k) {
    slabs[k].edge_first = segments;
    segments += peer_edge_segments(slabs[k]);
  }
  const std::int64_t edges = segments;
  for (std::size_t k = 0; k < count; ++k) {
    slabs[k].inner_first = segments;
    segments += slabs[k].segments - peer_edge_segments(slabs[k]);
  }
  return {edges, segments};
}

//! Segment `v` of a streamed pass (the edge segments of every slab first, then the others): its
//! slab, its storage rows [y0, y1) along the slowest axis, the sides whose band it touches (its
//! rows go to that neighbour, and it may read that halo) and, of those, the sides with flags.
struct PeerSegment {
  int slab;
  std::int64_t y0, y1;
  int sides, flagged;
};

template <class T>
RELAX_HOST_DEVICE RELAX_FORCE_INLINE PeerSegment peer_segment(const PeerLaunch<T>& launch, std::int64_t v) {
  PeerSegment it{0, 0, 0, 0, 0};
  const bool edge = v < launch.edge_items;
  it.slab = peer_slab_of(launch, v, edge);
  const PeerSlab<T>& sl = launch.slabs[it.slab];
  const std::int64_t local = v - (edge ? sl.edge_first : sl.inner_first);
  const bool all_edge = peer_edge_segments(sl) == sl.segments;
  std::int64_t q = 0;  // the segment's place along the slab
  if (edge) q = all_edge || local < sl.band_segments[0] ? local : sl.segments - sl.band_segments[1] + (local - sl.band_segments[0]);
  else q = sl.band_segments[0] + local;
  it.y0 = sl.first + q * sl.segment;
  it.y1 = std::min(it.y0 + sl.segment, sl.first + sl.owned);
  if (sl.out[0][0] != nullptr && it.y0 < sl.first + sl.halo) it.sides |= 1;
  if (sl.out[1][0] != nullptr && it.y1 > sl.first + sl.owned - sl.halo) it.sides |= 2;
  for (int side = 0; side < 2; ++side)
    if ((it.sides & (1 << side)) && sl.inbound[side] != nullptr) it.flagged |= 1 << side;
  return it;
}

//! Host: the offset that takes a row (plane) of a slab whose first storage row is global row
//! `mine_origin` (its `Slab::origin_row`) to the same global row in the neighbour whose first is
//! `theirs_origin` (rows `step` apart in storage).
inline std::int64_t peer_halo_shift(std::int64_t mine_origin, std::int64_t theirs_origin, std::int64_t step) {
  return (mine_origin - theirs_origin) * step;
}

//! Host: what a kernel's `stalled` word (see `PeerLaunchWords`) says, for a Comm policy whose
//! neighbours `verb` their edge rows ("stored", "put").
inline std::string peer_stall_text(unsigned long long stalled, const char* verb) {
  const unsigned long long key = ~stalled;
  return "sub-domain " + std::to_string(key & ((1ull << peer_stall_bits) - 1)) + " never " + verb +
         " its edge rows of sweep " + std::to_string(key >> peer_stall_bits);
}

//! Host: numbers the work items of a kernel's `count` slabs (their `edge_first` and
//! `inner_first`) and returns {its edge items, its items}.
template <class T>
std::pair<std::int64_t, std::int64_t> peer_number(PeerSlab<T>* slabs, std::size_t count) {
  std::int64_t items = 0;
  for (std::size_t k = 0; k < count; ++k) {
    slabs[k].edge_first = items;
    items += slabs[k].edge_items();
  }
  const std::int64_t edges = items;
  for (std::size_t k = 0; k < count; ++k) {
    slabs[k].inner_first = items;
    items += slabs[k].items() - slabs[k].edge_items();
  }
  return {edges, items};
}

//! Host: the kernels of a solve, each (its device, its sub-domains): sub-domain s on
//! `devices[s]`; one kernel per sub-domain with `per_subdomain`, else each device's sub-domains
//! (in order) split into `per_device` consecutive runs as even as can be (fewer when it holds
//! fewer sub-domains), the kernels ordered by their first sub-domain.
inline std::vector<std::pair<int, std::vector<int>>> peer_kernels(const std::vector<int>& devices, bool per_subdomain,
                                                                  int per_device) {
  std::vector<std::pair<int, std::vector<int>>> kernels;
  std::vector<int> distinct;
  for (int d : devices)
    if (std::find(distinct.begin(), distinct.end(), d) == distinct.end()) distinct.push_back(d);
  std::vector<std::pair<int, std::vector<int>>> runs;  // per device: its sub-domains split
  for (int d : distinct) {
    std::vector<int> mine;
    for (std::size_t s = 0; s < devices.size(); ++s)
      if (devices[s] == d) mine.push_back(static_cast<int>(s));
    const std::size_t parts = per_subdomain ? mine.size() : std::min<std::size_t>(mine.size(), static_cast<std::size_t>(per_device));
    std::size_t first = 0;
    for (std::size_t k = 0; k < parts; ++k) {
      const std::size_t count = mine.size() / parts + (k < mine.size() % parts ? 1 : 0);
      runs.push_back({d, std::vector<int>(mine.begin() + static_cast<std::ptrdiff_t>(first),
                                          mine.begin() + static_cast<std::ptrdiff_t>(first + count))});
      first += count;
    }
  }
  std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.second.front() < b.second.front(); });
  return runs;
}

//! Host: where the slabs and kernels of a CPU-free solve with one process (rank) per GPU live:
//! `ranks` ranks holding `per_rank` consecutive slabs each, in kernels of `per_kernel` slabs (1:
//! one per slab; `per_rank`: one per rank). Seen from rank `rank`, the memory of slab n (kernel
//! m) on its rank is laid out as that of its twin here, the held slab (kernel) at the same place
//! among its rank's (every rank allocates alike).
struct RankLayout {
  int ranks = 1, rank = 0, per_rank = 1, per_kernel = 1;

  int parts() const { return ranks * per_rank; }
  int kernels_per_rank() const { return per_rank / per_kernel; }
  int owner_of_slab(int n) const { return n / per_rank; }
  int owner_of_kernel(int m) const { return m / kernels_per_rank(); }
  int twin_slab(int n) const { return rank * per_rank + n % per_rank; }
  int twin_kernel(int m) const { return rank * kernels_per_rank() + m % kernels_per_rank(); }
  //! This rank's kernels: [first, first + count).
  std::pair<int, int> local_kernels() const { return {rank * kernels_per_rank(), kernels_per_rank()}; }
  //! Every kernel of the solve, in order: its device (`device` for this rank's, −1 for the
  //! others') and its slabs.
  std::vector<std::pair<int, std::vector<int>>> kernels(int device) const {
    std::vector<std::pair<int, std::vector<int>>> k;
    for (int s = 0; s < parts(); s += per_kernel) {
      std::vector<int> slabs;
      for (int j = 0; j < per_kernel; ++j) slabs.push_back(s + j);
      k.push_back({owner_of_slab(s) == rank ? device : -1, std::move(slabs)});
    }
    return k;
  }
};

}  // namespace relax::detail
