#pragma once
//! \file
//! Jacobi on several GPUs with one process (an NVSHMEM PE) per GPU and no host in the loop:
//! `MultiSolver<S, DeviceLoop<Sync>, Nvshmem>`. Each process holds a run of the slabs (the same
//! number on every PE) and runs one persistent kernel over them, launched collectively; the
//! kernels move the halos through NVSHMEM (stores through its mapping where it maps the
//! neighbour's memory, put-with-signal elsewhere) and take the stop decision among themselves.
//! This is the path to several nodes: NVSHMEM carries the puts over the network between nodes.
//!
//! The kernel is `PeerStore`'s (`multi/peer_store.cuh`) with NVSHMEM as the transport:
//! - one sweep takes the Sync walk's tiles of the PE's slabs, the edge bands first; after an edge
//!   tile is swept, the block sends its part of each edge row (in 3D, each of its rows of the edge
//!   plane) into the neighbour's ring of the same parity and adds the count of its rows to the
//!   neighbour's signal word for that tile: where NVSHMEM maps the neighbour's memory here
//!   (`nvshmem_ptr`: this GPU, or a peer within the node) and `Nvshmem::store_when_mapped` is on,
//!   by stores and a release add, as `PeerStore`; otherwise (another node) one
//!   `nvshmemx_putmem_signal_nbi_block` per row, each adding 1. Every link between two slabs goes
//!   through NVSHMEM's memory and signal words, within a PE too, so one GPU runs the whole
//!   exchange of either kind;
//! - the words are per parity (the array a halo lands in): nothing orders one sweep's
//!   non-blocking puts before the next sweep's on a network transport, so a count over both
//!   could be reached with rows in flight;
//! - before sweeping an edge tile (and before folding its residual) after k sweeps, the block
//!   waits until its word of parity k % 2 has counted the rows of (k + 1) / 2 sweeps, the
//!   neighbour's sweep k the last of them (`nvshmem_uint64_test` in a bounded loop): the ring is
//!   current, and the neighbour is done reading the ring the tile's sends will overwrite (the
//!   same argument as `PeerStore`'s flags);
//! - every M sweeps each PE folds its slabs' residuals at its grid barrier, puts its norm into
//!   every PE's board (`nvshmem_<bits>_p`, `nvshmem_fence`, then a signal carrying the check
//!   number) and reads every PE's norm once all have signalled: every PE takes the max of the
//!   same words, so all stop at the same check. ‖b‖ is the max over the PEs (a host-side NVSHMEM
//!   reduction on the bits of the slabs' norms).
//! Sweeps, checks, ρ and the owned rows are those of the single-domain solve, bit for bit.
//!
//! The memory the kernels put into is NVSHMEM's symmetric heap: `make_grid` allocates each slab
//! there (collectively, the same size on every PE: the largest slab's), so every process makes
//! its solvers and grids in the same order, and destroys them before its `NvshmemRuntime`. Every
//! wait of the kernel is bounded (`Nvshmem::timeout_ns`); a neighbour that never signals ends the
//! solve with a `relax::device_loop_error` naming the sub-domain. Before each collective phase
//! (construction, a solve's start and its end) the PEs agree on whether one of them failed, and
//! then all throw: no PE is left in a collective call another never makes. NVSHMEM's own
//! collectives (barriers, reductions, allocations) are not bounded: a PE that dies hangs the rest.
//!
//! An optional component: link `relax::nvshmem` (CMake finds NVSHMEM's headers and libraries,
//! e.g. the PyPI wheel `nvidia-nvshmem-cu13`) and compile with relocatable device code
//! (`CUDA_SEPARABLE_COMPILATION`); `relax::relax` needs neither.
//!
//! The host-controlled solver over NVSHMEM (launch-based strategies, the halos put by the host
//! between rounds) is `HaloExchange<Nvshmem>`, at the end of this file. Not yet built: temporal
//! blocking across slabs in the CPU-free form over NVSHMEM (`PeerStore` has it:
//! `peer_stream_kernel`).

#include <relax/core/buffer.hpp>
#include <relax/core/device.hpp>
#include <relax/multi/distributed.cuh>
#include <relax/multi/host_copy.cuh>
#include <relax/multi/peer_store.cuh>
#include <relax/multi/peer_table.hpp>
#include <relax/strategy/device_loop.cuh>
#include <relax/strategy/sync.cuh>
#include <relax/strategy/tuning.hpp>

#include <cuda/atomic>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace relax {

//! The Comm policy of the CPU-free solver with one process per GPU (see the file comment).
struct Nvshmem {
  //! Where NVSHMEM maps a neighbour's memory into this GPU's address space (`nvshmem_ptr`: the
  //! same GPU, or a peer over NVLink or PCIe within a node), store the edge rows through that
  //! pointer and raise the neighbour's word with a release atomic, as `PeerStore` does, instead
  //! of `nvshmemx_putmem_signal_nbi_block`. Off, or where a neighbour is not mapped (another
  //! node), every halo is a put-with-signal.
  bool store_when_mapped = true;
  //! Test hook: the sub-domain that never puts its edge rows (−1: none), so its neighbours'
  //! waits time out and the solve ends with an error naming it.
  int silent_subdomain = -1;
  std::uint64_t timeout_ns = 20'000'000'000ull;  //!< the longest any wait of the kernels lasts
  BlockRoles blocks = BlockRoles::edges_first;    //!< the CPU-free Jacobi solver only: how a kernel's blocks share the tiles
};

//! An NVSHMEM call failed.
class nvshmem_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

//! NVSHMEM for this process, from start to finalize: one at a time in a process, created before
//! and destroyed after every solver and grid of `Nvshmem`. The process's PE runs on `device`.
class NvshmemRuntime {
 public:
  //! Selects the constructor that bootstraps from the launcher.
  struct FromLauncher {};

  //! One process alone (one PE): the unique-id bootstrap, with no one to share the id with.
  explicit NvshmemRuntime(int device = 0) {
    select(device);
    start(0, 1, unique_id());
  }
  //! Process `rank` of `ranks`, all given the `id` that one of them made (`unique_id()`) and
  //! shared (through MPI, a file, ...).
  NvshmemRuntime(int device, int rank, int ranks, const nvshmemx_uniqueid_t& id) {
    detail::require(ranks >= 1 && rank >= 0 && rank < ranks, "rank", rank, "a rank from 0 to ranks - 1");
    select(device);
    start(rank, ranks, id);
  }
  //! A process started by a launcher (`mpirun`, `srun`, ...): NVSHMEM's bootstrap from the
  //! environment (`NVSHMEM_BOOTSTRAP`; when it is not set and OpenMPI's `mpirun` started the
  //! process, `MPI`; otherwise NVSHMEM's default, PMI). NVSHMEM ends the process when its
  //! bootstrap fails.
  NvshmemRuntime(int device, FromLauncher) {
    select(device);
    start_from_launcher();
  }
  //! Selects the constructor that chooses the bootstrap from how the process was started.
  struct FromEnvironment {};
  //! From the launcher when one started this process (`launcher_local_rank()` ≥ 0), on the GPU of
  //! that local rank modulo the GPUs present; otherwise alone, on GPU 0.
  explicit NvshmemRuntime(FromEnvironment) {
    const int gpus = device_count();
    detail::require(gpus > 0, "devices", 0, "a CUDA device for this process's PE, but none is present");
    if (const int local = launcher_local_rank(); local >= 0) {
      select(local % gpus);
      start_from_launcher();
    } else {
      select(0);
      start(0, 1, unique_id());
    }
  }
  NvshmemRuntime(const NvshmemRuntime&) = delete;
  NvshmemRuntime& operator=(const NvshmemRuntime&) = delete;
  ~NvshmemRuntime() {
    if (const long live = live_buffers(); live > 0)
      std::fprintf(stderr,
                   "relax::NvshmemRuntime: NVSHMEM finalizes with %ld symmetric buffers still held (solvers or grids "
                   "that outlive the runtime); they are not freed\n",
                   live);
    nvshmem_finalize();
    slot() = nullptr;
  }

  //! Symmetric buffers of relax's allocated and not yet freed (their frees are collective and must
  //! come before NVSHMEM finalizes; later ones are skipped).
  static long& live_buffers() {
    static long live = 0;
    return live;
  }

  //! A fresh id for the unique-id bootstrap (made by one process, given to all).
  static nvshmemx_uniqueid_t unique_id() {
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    check(nvshmemx_get_uniqueid(&id), "nvshmemx_get_uniqueid");
    return id;
  }
  //! The local rank a launcher gave this process (`OMPI_COMM_WORLD_LOCAL_RANK`, `SLURM_LOCALID`,
  //! `MPI_LOCALRANKID`, `PMI_LOCAL_RANK`), or −1 when none did: the usual choice of its device.
  static int launcher_local_rank() {
    for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID", "PMI_LOCAL_RANK"})
      if (const char* v = std::getenv(name)) return std::atoi(v);
    return -1;
  }
  //! The runtime of this process, or null.
  static const NvshmemRuntime* active() { return slot(); }

  int pe() const { return pe_; }
  int pes() const { return pes_; }
  int device() const { return device_; }

 private:
  static const NvshmemRuntime*& slot() {
    static const NvshmemRuntime* live = nullptr;
    return live;
  }
  static void check(int status, const char* call) {
    if (status != 0) throw nvshmem_error("relax: " + std::string(call) + " failed with status " + std::to_string(status));
  }
  void select(int device) {
    if (slot() != nullptr) throw std::logic_error("relax::NvshmemRuntime: NVSHMEM is already running in this process");
    detail::require_devices({device});
    RELAX_CUDA_CHECK(cudaSetDevice(device));  // a PE's GPU is the one current when NVSHMEM starts
    device_ = device;
  }
  void start_from_launcher() {
    if (std::getenv("NVSHMEM_BOOTSTRAP") == nullptr && std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr)
      setenv("NVSHMEM_BOOTSTRAP", "MPI", 0);
    nvshmem_init();
    started();
  }
  void start(int rank, int ranks, const nvshmemx_uniqueid_t& id) {
    nvshmemx_init_attr_t attributes = NVSHMEMX_INIT_ATTR_INITIALIZER;
    check(nvshmemx_set_attr_uniqueid_args(rank, ranks, &id, &attributes), "nvshmemx_set_attr_uniqueid_args");
    check(nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attributes), "nvshmemx_init_attr");
    started();
  }
  void started() {
    pe_ = nvshmem_my_pe();
    pes_ = nvshmem_n_pes();
    slot() = this;
  }

  int device_ = 0, pe_ = 0, pes_ = 1;
};

namespace detail {

//! Gives symmetric memory back (collective: every PE frees its buffers in the same order); after
//! NVSHMEM has finalized there is nothing to give it back to (the runtime said so).
inline void nvshmem_release(void* p) noexcept {
  if (NvshmemRuntime::active() == nullptr) return;
  --NvshmemRuntime::live_buffers();
  nvshmem_free(p);
}

//! `count` elements of symmetric memory (collective: every PE asks for the same count).
template <class T>
DeviceBuffer<T> symmetric_buffer(std::size_t count) {
  void* p = nvshmem_malloc(std::max<std::size_t>(1, count) * sizeof(T));
  if (p == nullptr)
    throw nvshmem_error("relax: nvshmem_malloc of " + std::to_string(count * sizeof(T)) +
                        " bytes failed (the symmetric heap is too small? NVSHMEM_SYMMETRIC_SIZE sets it)");
  ++NvshmemRuntime::live_buffers();
  return DeviceBuffer<T>::adopt(static_cast<T*>(p), count, &nvshmem_release);
}

//! The max over the PEs of each of `values` (collective); `scratch` holds 2 × values.size()
//! symmetric words.
inline std::vector<unsigned long long> nvshmem_max(std::vector<unsigned long long> values,
                                                   DeviceBuffer<unsigned long long>& scratch, cudaStream_t stream) {
  const std::size_t n = values.size();
  require(scratch.size() >= 2 * n, "values", static_cast<std::int64_t>(n), "at most half the scratch words");
  RELAX_CUDA_CHECK(cudaMemcpyAsync(scratch.data(), values.data(), n * sizeof(unsigned long long), cudaMemcpyHostToDevice, stream));
  if (const int status = nvshmemx_ulonglong_max_reduce_on_stream(NVSHMEM_TEAM_WORLD, scratch.data() + n, scratch.data(), n, stream);
      status != 0)
    throw nvshmem_error("relax: nvshmemx_ulonglong_max_reduce_on_stream failed with status " + std::to_string(status));
  RELAX_CUDA_CHECK(cudaMemcpyAsync(values.data(), scratch.data() + n, n * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
  RELAX_CUDA_CHECK(cudaStreamSynchronize(stream));
  return values;
}

//! Collective: every PE learns whether any PE failed its part of a step (`local`, this PE's
//! error, or null) and, if one did, all throw (this PE its own error, the others one naming the
//! step), so no PE goes on into a collective call the failed one never makes. `extra` are further
//! values to take the max of in the same reduction (returned). `scratch`: 2 × (1 + extra) words.
inline std::vector<unsigned long long> nvshmem_agree(std::exception_ptr local, const char* step,
                                                     std::vector<unsigned long long> extra,
                                                     DeviceBuffer<unsigned long long>& scratch, cudaStream_t stream) {
  return agree_across(local, "relax::MultiSolver<Nvshmem>", "another PE", step, std::move(extra),
                      [&](std::vector<unsigned long long> v) {
                        return nvshmem_n_pes() > 1 ? nvshmem_max(std::move(v), scratch, stream) : v;
                      });
}

//! The solvers of `Nvshmem` run on their PE's GPU, which must be current (their streams and
//! buffers are there).
inline void nvshmem_require_current_device(const NvshmemRuntime& runtime) {
int current = -1;
RELAX_CUDA_CHECK(cudaGetDevice(&current));
require(current == runtime.device(), "current device", current,
        ("this PE's device, " + std::to_string(runtime.device()) +
         " (NvshmemRuntime::device()): make it current before constructing or solving")
            .c_str());
}

//! Collective: this PE's slabs of the decomposition of `global` with halo `halo` (`devices`: one
//! entry, this PE's GPU, per slab it holds), in symmetric memory of the largest slab's size.
//! Checks first, with every PE (so a PE that refuses its arguments does not leave the others in
//! a collective call), that NVSHMEM runs, that `devices` names this PE's GPU, which is current,
//! and that every PE holds as many slabs.
template <class T>
SlabPlacement<T> nvshmem_placement(const Extents& global, const std::vector<int>& devices, int halo) {
  const NvshmemRuntime* runtime = NvshmemRuntime::active();
  if (runtime == nullptr)
    throw std::logic_error("relax::MultiSolver<Nvshmem>: NVSHMEM is not running (create a relax::NvshmemRuntime first)");
  const auto per_pe = static_cast<unsigned long long>(devices.size());
  const int pes = runtime->pes();
  std::exception_ptr local;
  int parts = 0;
  try {
    detail::require(!devices.empty(), "devices", "none", "at least one sub-domain on this PE");
    for (int d : devices)
      detail::require(d == runtime->device(), "devices", d,
                      ("this PE's device, " + std::to_string(runtime->device()) + ", for each of its sub-domains").c_str());
    nvshmem_require_current_device(*runtime);
    detail::require(pes <= detail::peer_max_launches, "PEs", pes,
                    ("at most " + std::to_string(detail::peer_max_launches) + " PEs (the width of the norm board)").c_str());
    global.validate();
    parts = static_cast<int>(per_pe) * pes;
    const Decomposition probe(global, parts, halo);  // refuses a split thinner than its halo
  } catch (...) {
    local = std::current_exception();
  }
  {
    DeviceBuffer<unsigned long long> scratch = detail::symmetric_buffer<unsigned long long>(6);
    const Stream stream;
    const auto most = detail::nvshmem_agree(local, "to construct its solver", {per_pe, ~per_pe}, scratch, stream.get());
    detail::require(most[0] == per_pe && ~most[1] == per_pe, "devices", static_cast<std::int64_t>(per_pe),
                    "as many sub-domains on every PE");
  }
  const Decomposition whole(global, parts, halo);
  std::size_t largest = 0;
  for (int s = 0; s < parts; ++s)
    largest = std::max(largest, static_cast<std::size_t>(whole[s].template layout<T>().size()));
  SlabPlacement<T> p;
  p.parts = parts;
  p.first = runtime->pe() * static_cast<int>(per_pe);
  p.allocate = [largest](const GridLayout& l) {
    return DeviceGrid<T>(l, detail::symmetric_buffer<T>(largest));
  };
  return p;
}


__device__ __forceinline__ std::uint64_t* signal_word(unsigned long long* w) { return reinterpret_cast<std::uint64_t*>(w); }

//! The signal word of tile `r` for the halos of parity `parity` (the array they land in), given a
//! side's words `side_words` (`inbound` or `outbound`): a slab's words are [parity][side][tile].
//! One word per parity, because nothing orders one sweep's non-blocking puts before the next
//! sweep's on a network transport: a sum over both parities could reach a count with one sweep's
//! rows still in flight.
template <class T>
__device__ __forceinline__ unsigned long long* parity_word(unsigned long long* side_words, const PeerSlab<T>& sl,
                                                           int parity, std::int64_t r) {
  return side_words + parity * 2 * sl.band_items + r;
}

//! The puts of tile `it`'s part of an edge row (plane), each of one row: 1 in 2D, the tile's rows
//! in 3D. The neighbour's word of a parity counts them: after k sweeps, the word of parity p holds
//! this × the sweeps j ≤ k with j % 2 = p (sweep j writes the array of parity j % 2).
template <int BlockY, int Rank, class T>
__device__ __forceinline__ std::int64_t nvshmem_puts(const PeerSlab<T>& sl, const PeerItem& it) {
  if constexpr (Rank == 2) return 1;
  else return min(static_cast<std::int64_t>(BlockY), sl.g.ny - it.r / sl.tiles_x * BlockY);
}

//! Block-level: waits until the neighbours on tile `it`'s sides have put the edge rows of their
//! sweep number `sweeps` into this slab's ring of parity `sweeps % 2` (the word of that parity
//! counts (sweeps + 1) / 2 sweeps; see `peer_wait`: the same failure rules). The acquire is at
//! device scope when every neighbour waited for is on this PE.
template <int BlockY, int Rank, class T>
__device__ bool nvshmem_wait(const PeerSlab<T>& sl, const PeerItem& it, unsigned long long sweeps,
                             const PeerLaunch<T>& launch, int per_pe, int* failed, std::uint64_t timeout_ns) {
  bool ok = true;
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    const std::uint64_t want = (sweeps + 1) / 2 * static_cast<std::uint64_t>(nvshmem_puts<BlockY, Rank>(sl, it));
    const int parity = static_cast<int>(sweeps % 2);
    bool remote = false;
    for (int side = 0; side < 2 && ok; ++side) {
      if ((it.flagged & (1 << side)) == 0) continue;
      remote = remote || sl.neighbour[side] / per_pe != launch.me;
      std::uint64_t* const word = signal_word(parity_word(sl.inbound[side], sl, parity, it.r));
      const std::uint64_t began = global_ns();
      ok = bounded_wait([&] { return nvshmem_uint64_test(word, NVSHMEM_CMP_GE, want) != 0; }, failed, timeout_ns);
      if (!ok && global_ns() - began > timeout_ns)
        atomicMax(&launch.words->stalled, ~(sweeps << peer_stall_bits | static_cast<unsigned long long>(sl.neighbour[side])));
    }
    if (remote) cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_system);
    else cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
  }
  return __syncthreads_or(!ok) == 0;
}

//! Block-level, after the block swept edge item `it` into array `dst`: sends the tile's part of
//! the edge row (plane) on each of its sides into the neighbour's ring of that parity and adds
//! the tile's puts (`nvshmem_puts`) to the neighbour's word of that parity for the tile. `direct`: the
//! neighbours' arrays and words are mapped here (`Nvshmem::store_when_mapped`): stores, then a
//! release add (device scope on this PE, system scope to another); otherwise a put-with-signal
//! per row, each adding 1. The neighbour of sub-domain n is PE n / `per_pe`.
template <int BlockX, int BlockY, int Rank, class T>
__device__ void nvshmem_push(const PeerSlab<T>& sl, const PeerItem& it, int dst, int per_pe, int me, bool direct) {
  constexpr int W = Vec16<T>::width;
  if (sl.silent) return;
  const Shape& g = sl.g;
  if (direct) {
    peer_push<BlockX, BlockY, Rank>(sl, it, dst, g);
    __syncthreads();
    if (threadIdx.x != 0 || threadIdx.y != 0) return;
    const auto rows = static_cast<unsigned long long>(nvshmem_puts<BlockY, Rank>(sl, it));
    for (int side = 0; side < 2; ++side) {
      if ((it.sides & (1 << side)) == 0) continue;
      unsigned long long& word = *parity_word(sl.outbound[side], sl, dst, it.r);
      if (sl.neighbour[side] / per_pe == me)
        cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(word).fetch_add(rows, cuda::memory_order_release);
      else
        cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>(word).fetch_add(rows, cuda::memory_order_release);
    }
    return;
  }
  __syncthreads();  // the tile's edge rows are in `dst`
  const std::int64_t j0 = it.bx * BlockX * W + 1;
  const auto bytes = static_cast<std::size_t>(min(static_cast<std::int64_t>(BlockX * W), g.nx - j0 + 1)) * sizeof(T);
  const std::int64_t i0 = Rank == 2 ? 0 : it.r / sl.tiles_x * BlockY + 1;
  const std::int64_t rows = nvshmem_puts<BlockY, Rank>(sl, it);
  const T* const own = sl.array[dst];
  for (int side = 0; side < 2; ++side) {
    if ((it.sides & (1 << side)) == 0) continue;
    const std::int64_t edge = side == 0 ? 1 : (Rank == 2 ? g.ny : g.nz);
    const int pe = sl.neighbour[side] / per_pe;
    std::uint64_t* const word = signal_word(parity_word(sl.outbound[side], sl, dst, it.r));
    for (std::int64_t row = 0; row < rows; ++row) {
      const std::int64_t at = Rank == 2 ? g.at(0, edge, j0) : g.at(edge, i0 + row, j0);
      nvshmemx_putmem_signal_nbi_block(sl.out[side][dst] + sl.shift[side] + at, own + at, bytes, word, 1,
                                       NVSHMEM_SIGNAL_ADD, pe);
    }
  }
}

//! The device loop's counters with the check taken over every PE (see the file comment): with
//! one PE, `DeviceLoopCounters`'s check.
template <class T>
struct NvshmemLoopCounters : BoardLoopCounters<T, NvshmemLoopCounters<T>> {
  using Bits = arith::bits_t<T>;
  using BoardLoopCounters<T, NvshmemLoopCounters<T>>::BoardLoopCounters;
  using BoardLoopCounters<T, NvshmemLoopCounters<T>>::launch;

  //! Block-level: `norm` becomes the max over the PEs' norms of this check (the board is
  //! symmetric: the same address on every PE; three slots by turns, as `PeerStore`'s).
  __device__ bool combine(Bits& norm) {
    __shared__ Bits combined;
    __shared__ int arrived;
    PeerLaunchWords<T>* const board = launch.words;
    const auto check = static_cast<unsigned long long>(this->checks);
    const int slot = static_cast<int>(check % 3);
    if (this->leader) {
      for (int pe = 0; pe < launch.launches; ++pe) {
        if constexpr (sizeof(Bits) == 4)
          nvshmem_uint32_p(reinterpret_cast<std::uint32_t*>(&board->norms[slot][launch.me]), norm, pe);
        else
          nvshmem_uint64_p(reinterpret_cast<std::uint64_t*>(&board->norms[slot][launch.me]), norm, pe);
      }
      nvshmem_fence();  // each PE's norm before its signal
      for (int pe = 0; pe < launch.launches; ++pe)
        nvshmemx_signal_op(signal_word(&board->posted[launch.me]), check + 1, NVSHMEM_SIGNAL_SET, pe);
    }
    if (threadIdx.x == 0 && threadIdx.y == 0) {
      bool ok = true;
      Bits best = 0;
      for (int h = 0; h < launch.launches && ok; ++h) {
        std::uint64_t* const posted = signal_word(&board->posted[h]);
        const std::uint64_t began = global_ns();
        ok = bounded_wait([&] { return nvshmem_uint64_test(posted, NVSHMEM_CMP_GT, check) != 0; },
                          &this->state->barrier.failed, this->plan.barrier_timeout_ns);
        if (!ok && global_ns() - began > this->plan.barrier_timeout_ns) atomicCAS(&board->stalled_launch, 0, 1 + h);
      }
      cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_system);
      for (int h = 0; h < launch.launches && ok; ++h) {
        const Bits theirs =
            cuda::atomic_ref<Bits, cuda::thread_scope_system>(board->norms[slot][h]).load(cuda::memory_order_relaxed);
        best = best > theirs ? best : theirs;
      }
      combined = best;
      arrived = ok ? 1 : 0;
    }
    __syncthreads();
    norm = combined;
    return arrived != 0;
  }
};

//! The CPU-free Sync loop of one PE over its slabs, halos through NVSHMEM (see the file comment).
//! Its dynamic shared memory holds the table of its slabs, as `peer_sync_kernel`'s.
template <int BlockX, int BlockY, int Rows, class S, class T>
__global__ void __launch_bounds__(BlockX* BlockY, tuning::nvshmem_blocks_per_sm<S::rank>)
    nvshmem_sync_kernel(S s, PeerLaunch<T> launch, int per_pe, int direct, DeviceLoopPlan plan,
                        DeviceLoopState<T>* state, DeviceLoopStepReport<T>* reports, arith::bits_t<T>* history) {
  constexpr int Rank = S::rank;
  extern __shared__ __align__(16) unsigned char peer_table[];
  launch.slabs = load_peer_table<BlockX, BlockY>(launch, peer_table);
  NvshmemLoopCounters<T> loop(plan, state, reports, history, launch);
  int* const failed = &state->barrier.failed;
  run_pass_loop<BlockX, BlockY, 1>(
      loop, plan, 0, 1,
      [&](int src, int dst, int) {
        const auto sweeps = static_cast<unsigned long long>(loop.sweeps);
        const PeerShare share = peer_share(launch.edge_items, launch.items, blockIdx.x, gridDim.x, launch.boundary);
        for (std::int64_t v = share.first; v < share.end; v += share.stride) {
          const PeerItem it = peer_item(launch, v, Rank);
          const PeerSlab<T>& sl = launch.slabs[it.slab];
          if (it.flagged != 0 &&
              !nvshmem_wait<BlockY, Rank>(sl, it, sweeps, launch, per_pe, failed, plan.barrier_timeout_ns))
            break;
          const Shape g = sl.g;
          T* const out = sl.array[dst];
          walk_tile<BlockX, BlockY, Rows, Rank>(
              it.bx, it.t, sl.array[src], sl.b, g,
              [&](std::int64_t at, const Vec16<T>& rhs, const VectorStar<T, Rank>& star) {
                sync_update_vector(s, out, at, rhs, star);
              });
          if (it.sides != 0) nvshmem_push<BlockX, BlockY, Rank>(sl, it, dst, per_pe, launch.me, direct != 0);
        }
      },
      [&](int src) {
        const auto sweeps = static_cast<unsigned long long>(loop.sweeps);
        arith::bits_t<T> best = 0;
        const PeerShare share = peer_share(launch.edge_items, launch.items, blockIdx.x, gridDim.x, launch.boundary);
        for (std::int64_t v = share.first; v < share.end; v += share.stride) {
          const PeerItem it = peer_item(launch, v, Rank);
          const PeerSlab<T>& sl = launch.slabs[it.slab];
          if (it.flagged != 0 &&
              !nvshmem_wait<BlockY, Rank>(sl, it, sweeps, launch, per_pe, failed, plan.barrier_timeout_ns))
            break;
          const Shape g = sl.g;
          fold_tile_residual<BlockX, BlockY, Rows>(best, it.bx, it.t, s, sl.array[src], sl.b, g);
        }
        return best;
      });
}

}  // namespace detail

//! Jacobi on the slabs of a box, one process (PE) per GPU, no host in the loop (see the file
//! comment). `devices` names the GPU of each slab this process holds: its PE's device, once per
//! slab (the same count on every PE); the box is split into that many slabs per PE, PE p holding
//! the p-th run. The controller is `Fixed` (a check every M sweeps).
template <class Stencil_, int X, int Y, int Rows>
class MultiSolver<Stencil_, DeviceLoop<SyncTile<X, Y, Rows>>, Nvshmem> : public detail::SlabSolverBase<Stencil_> {
  static_assert(is_stencil_v<Stencil_>, "relax::MultiSolver<Stencil, Strategy, Comm>: Stencil is not a stencil");
  static_assert(Stencil_::radius == 1, "relax::MultiSolver<Stencil, DeviceLoop<Sync>, Nvshmem>: radius-1 stencils only");
  using Base = detail::SlabSolverBase<Stencil_>;

 public:
  using Stencil = Stencil_;
  using Strategy = DeviceLoop<SyncTile<X, Y, Rows>>;
  using Comm = Nvshmem;
  using value_type = typename Stencil::value_type;
  static constexpr int halo = 1;  //!< one row (plane) from each neighbour, every sweep

  //! Collective: every PE constructs its solver with the same box, stencil, controller, options,
  //! `comm` and count of `devices`.
  //! \throws std::logic_error when no `NvshmemRuntime` is running; relax::invalid_argument for
  //!         bad extents, devices (not this PE's device, or a count that differs between PEs),
  //!         controller, options or `comm`; relax::unavailable_error without cooperative launch.
  MultiSolver(const Extents& global, std::vector<int> devices, Stencil stencil, Fixed controller = {},
              SolveOptions options = {}, Nvshmem comm = {})
      : Base(global, devices, stencil, controller, options, halo, placement(global, devices)), comm_(comm),
        pes_(nvshmem_n_pes()), me_(nvshmem_my_pe()) {
    detail::require_wait_settings(comm_.timeout_ns, comm_.silent_subdomain, this->size());
    detail::require(comm_.silent_subdomain < 0 || this->size() > 1, "comm.silent_subdomain", comm_.silent_subdomain,
                    "-1 with one sub-domain (it has no neighbour to keep waiting)");
    detail::require(this->size() < (1 << detail::peer_stall_bits), "devices", this->size(), "fewer sub-domains than 2^20");
    detail::require_cooperative_launch("relax::MultiSolver<DeviceLoop<Sync>, Nvshmem>",
                                       "relax::HostCopy with a launch-based strategy");
    deep_ = detail::peer_deep_rows<X, Y, Rows, Stencil::rank, value_type>(this->decomposition_.global());
    kernel_ = deep_ ? detail::nvshmem_sync_kernel<X, Y, deep_rows, Stencil, value_type>
                    : detail::nvshmem_sync_kernel<X, Y, 1, Stencil, value_type>;
    cudaFuncAttributes attributes{};  // loaded now: a collective launch must not wait on a module load
    RELAX_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel_));
    shared_bytes_ = static_cast<std::size_t>(this->held()) * sizeof(Slabs);
    detail::require(shared_bytes_ <= 48 * 1024, "devices", this->held(),
                    ("at most " + std::to_string(48 * 1024 / sizeof(Slabs)) +
                     " sub-domains on one PE (its table of them is in shared memory)").c_str());
    resident_ = detail::resident_blocks(kernel_, X * Y, shared_bytes_, "MultiSolver<DeviceLoop<SyncTile>, Nvshmem>");
    band_items_ = detail::peer_band_items(detail::shape_of(this->part(this->first()).scratch.layout()), Stencil::rank,
                                          X * detail::Vec16<value_type>::width, Y);
    // Symmetric, so collective in this order on every PE: each held slab's signal words (one per
    // parity, side and tile of an edge band), the board, the reduction's scratch.
    for (int k = 0; k < this->held(); ++k)
      flags_.push_back(detail::symmetric_buffer<unsigned long long>(static_cast<std::size_t>(4 * band_items_)));
    board_ = detail::symmetric_buffer<Words>(1);
    reduce_ = detail::symmetric_buffer<unsigned long long>(4);
  }

  //! The PEs of the solve, and this one.
  int pes() const { return pes_; }
  int pe() const { return me_; }
  //! Whether the last solve stored its halos through NVSHMEM's mappings (`Nvshmem::store_when_mapped`
  //! and every neighbour of this PE's slabs mapped: one unmapped neighbour makes every halo of
  //! this PE a put) rather than putting them with a signal.
  bool stored_directly() const { return direct_; }
  //! Diagnostic: held slab s's signal words after the last solve, [parity][side][tile of an edge
  //! band] (word [p][side][r]: the rows the neighbour on `side` sent for tile r into the array of
  //! parity p). Blocks.
  std::vector<unsigned long long> signal_words(int s) const {
    detail::require(s >= this->first() && s < this->first() + this->held(), "s", s, "a sub-domain this PE holds");
    const auto& f = flags_[static_cast<std::size_t>(s - this->first())];
    std::vector<unsigned long long> words(f.size());
    RELAX_CUDA_CHECK(cudaMemcpy(words.data(), f.data(), f.bytes(), cudaMemcpyDeviceToHost));
    return words;
  }
  //! Tiles of an edge band (the words of one parity and side).
  std::int64_t band_tiles() const { return band_items_; }

  //! Solves A u = b from the initial guess in `u` (its global ring the boundary values) in one
  //! collective launch; on return every held slab's owned rows hold the last iterate. Collective:
  //! every PE calls it with its grids made by its solver. Blocks until the solve is done.
  //! \throws relax::device_loop_error when a wait did not complete (naming the sub-domain or the
  //!         PE that did not signal).
  SolveReport solve(DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    const auto started = std::chrono::steady_clock::now();
    SolveReport report;
    report.rhs_norm = begin_everywhere(u, b);  // blocks: begin()'s copies are done
    detail::DeviceLoopPlan plan;
    plan.stop = criterion(this->options_);
    plan.rhs_norm = report.rhs_norm;
    plan.check_every = this->controller_.sweeps_before_check();
    plan.history_capacity =
        this->options_.record_history ? detail::tile_count(this->options_.max_sweeps, plan.check_every) : 0;
    plan.barrier_timeout_ns = comm_.timeout_ns;
    const cudaStream_t stream = stream_.get();
    // The words may be reset now: every solve ends with a barrier after its kernels (every PE's
    // puts delivered), so no PE's earlier kernel still signals into them. All PEs have reset
    // them before any kernel signals into them (the barrier below).
    workspace_.reserve(1, plan.history_capacity);
    workspace_.reset(stream);
    RELAX_CUDA_CHECK(cudaMemsetAsync(board_.data(), 0, sizeof(Words), stream));
    for (auto& f : flags_) RELAX_CUDA_CHECK(cudaMemsetAsync(f.data(), 0, f.bytes(), stream));
    direct_ = comm_.store_when_mapped && neighbours_mapped();
    for (int k = 0; k < this->held(); ++k) host_table_.data()[k] = describe(this->first() + k, u, b);
    const auto [edge_items, items] = detail::peer_number(host_table_.data(), static_cast<std::size_t>(this->held()));
    RELAX_CUDA_CHECK(cudaMemcpyAsync(table_.data(), host_table_.data(), shared_bytes_, cudaMemcpyHostToDevice, stream));
    nvshmemx_barrier_all_on_stream(stream);
    const unsigned blocks = static_cast<unsigned>(std::max<std::int64_t>(1, std::min(items, resident_)));
    const std::int64_t boundary =
        comm_.blocks == BlockRoles::specialised ? detail::peer_boundary_blocks(edge_items, items, blocks) : 0;
    detail::PeerLaunch<value_type> args{table_.data(), this->held(), edge_items, items, board_.data(), nullptr, pes_, me_,
                                        boundary};
    int per_pe = this->held();
    auto* state = workspace_.state();
    auto* reports = workspace_.reports();
    auto* history = workspace_.history();
    auto stencil = this->stencil_;
    int direct = direct_ ? 1 : 0;
    void* pointers[] = {&stencil, &args, &per_pe, &direct, &plan, &state, &reports, &history};
    const int launched = nvshmemx_collective_launch(reinterpret_cast<const void*>(kernel_), dim3(blocks), dim3(X, Y),
                                                    pointers, shared_bytes_, stream);
    // A PE whose launch failed still meets the others below (their kernels end at the latest when
    // their waits time out), and every PE throws if any failed.
    if (launched != 0) detail::clear_cuda_status(cudaGetLastError());
    nvshmemx_barrier_all_on_stream(stream);  // every PE's puts of the last sweep are delivered
    RELAX_CUDA_CHECK(cudaMemcpyAsync(host_words_.data(), board_.data(), sizeof(Words), cudaMemcpyDeviceToHost, stream));
    const detail::DeviceLoopResult r = workspace_.read(stream, this->options_.record_history);
    std::exception_ptr failure;
    if (launched != 0)
      failure = std::make_exception_ptr(
          nvshmem_error("relax: nvshmemx_collective_launch failed with status " + std::to_string(launched)));
    else if (workspace_.failed())
      failure = std::make_exception_ptr(device_loop_error("relax::MultiSolver<DeviceLoop<Sync>, Nvshmem>: " + stalled() +
                                                          " did not complete within " +
                                                          std::to_string(comm_.timeout_ns / 1'000'000) + " ms"));
    detail::nvshmem_agree(failure, "its solve (a wait that did not complete, or its launch)", {}, reduce_, stream);
    if (r.in_scratch)
      for (int s = this->first(); s < this->first() + this->held(); ++s) u.part(s).swap(this->part(s).scratch);
    report = detail::device_loop_report(r, report.rhs_norm, plan.check_every, this->options_.max_sweeps,
                                        this->options_.record_history, workspace_);
    report.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    return report;
  }

 private:
  using Slabs = detail::PeerSlab<value_type>;
  using Words = detail::PeerLaunchWords<value_type>;
  static constexpr int deep_rows = Rows == dynamic ? tuning::sync_deep_rows : Rows;
  using Kernel = void (*)(Stencil, detail::PeerLaunch<value_type>, int, int, detail::DeviceLoopPlan,
                          detail::DeviceLoopState<value_type>*, detail::DeviceLoopStepReport<value_type>*,
                          arith::bits_t<value_type>*);

  // This PE's slabs of the decomposition (`nvshmem_placement`).
  static typename Base::Placement placement(const Extents& global, const std::vector<int>& devices) {
    return detail::nvshmem_placement<value_type>(global, devices, halo);
  }

  static void require_current_device(const NvshmemRuntime& runtime) { detail::nvshmem_require_current_device(runtime); }

  // The PE of sub-domain s.
  int pe_of(int s) const { return s / this->held(); }

  // Whether NVSHMEM maps the memory of every PE a held slab has a neighbour on into this GPU's
  // address space (the symmetric heap is mapped whole, or not at all).
  bool neighbours_mapped() {
    for (int s = this->first(); s < this->first() + this->held(); ++s)
      for (int n : {s - 1, s + 1})
        if (n >= 0 && n < this->size() && nvshmem_ptr(board_.data(), pe_of(n)) == nullptr) return false;
    return true;
  }

  // How this PE's kernel reaches `symmetric` on PE `pe`: through NVSHMEM's mapping when the
  // halos are stored directly, else the symmetric address itself (the target of a put).
  template <class U>
  U* reach(U* symmetric, int pe) const {
    return direct_ ? static_cast<U*>(nvshmem_ptr(symmetric, pe)) : symmetric;
  }

  // ‖b‖ over every PE's slabs: the max of the bits of |‖b‖| (NaN above every number, as in
  // `collect_max`).
  // Collective: checks the grids (made by this solver, `u` in the symmetric heap) and the current
  // device, gives the workspaces `u`'s rings, and returns ‖b‖ over every PE's slabs (the max of
  // the bits of |‖b‖|: NaN above every number, as in `collect_max`), in one reduction with the
  // agreement that no PE refused its grids.
  double begin_everywhere(DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    std::exception_ptr local;
    value_type mine = value_type(0);
    try {
      require_current_device(*NvshmemRuntime::active());
      for (int s = this->first(); s < this->first() + this->held(); ++s)
        detail::require(u.holds(s) && nvshmem_ptr(u.part(s).data(), me_) != nullptr, "u", s,
                        "a grid in NVSHMEM's symmetric heap, made by this solver's make_grid");
      this->begin(u, b);
      mine = static_cast<value_type>(this->rhs_norm(u, b));
    } catch (...) {
      local = std::current_exception();
    }
    const auto most = detail::nvshmem_agree(local, "to begin its solve (its grids)",
                                            {static_cast<unsigned long long>(arith::abs_bits(mine))}, reduce_, stream_.get());
    if (pes_ == 1) return static_cast<double>(mine);
    return static_cast<double>(arith::from_bits<value_type>(static_cast<arith::bits_t<value_type>>(most[0])));
  }

  // Slab s as the kernel sees it: its neighbours' arrays are the symmetric addresses of the slab
  // held here at the neighbour's place among its PE's slabs (all PEs allocate alike), at the
  // neighbour's own lead (or NVSHMEM's mapping of them, `reach`).
  Slabs describe(int s, DistributedGrid<value_type>& u, const DistributedGrid<value_type>& b) {
    const Slab& me = this->decomposition_[s];
    const int per_pe = this->held();
    Slabs t{};
    t.array[0] = u.part(s).origin();
    t.array[1] = this->part(s).scratch.origin();
    t.b = b.part(s).origin();
    t.g = detail::shape_of(u.part(s).layout());
    for (int side = 0; side < 2; ++side) {
      const bool has = side == 0 ? me.has_prev : me.has_next;
      const int n = side == 0 ? s - 1 : s + 1;
      t.neighbour[side] = has ? n : -1;
      if (!has) continue;
      const int twin = this->first() + n % per_pe;
      const GridLayout theirs_layout = this->decomposition_[n].template layout<value_type>();
      t.out[side][0] = reach(u.part(twin).data(), pe_of(n)) + theirs_layout.lead;
      t.out[side][1] = reach(this->part(twin).scratch.data(), pe_of(n)) + theirs_layout.lead;
      t.shift[side] = detail::peer_ring_shift(side, t.g, detail::shape_of(theirs_layout), Stencil::rank);
      t.inbound[side] = flags_[static_cast<std::size_t>(s - this->first())].data() + side * band_items_;
      t.outbound[side] = reach(flags_[static_cast<std::size_t>(twin - this->first())].data(), pe_of(n)) + (1 - side) * band_items_;
    }
    detail::peer_tile(t, t.g, Stencil::rank, X * detail::Vec16<value_type>::width, Y, deep_ ? deep_rows : 1);
    t.index = s;
    t.silent = comm_.silent_subdomain == s ? 1 : 0;
    return t;
  }

  // What the words say of a failed solve.
  std::string stalled() const {
    const Words& w = host_words_.data()[0];
    if (w.stalled != 0) return detail::peer_stall_text(w.stalled, "put");
    if (w.stalled_launch != 0) return "PE " + std::to_string(w.stalled_launch - 1) + " never posted its norm";
    return "a grid barrier";
  }

  Nvshmem comm_;
  int pes_ = 1, me_ = 0;
  bool deep_ = false;
  bool direct_ = false;  // this solve stores its halos through NVSHMEM's mappings
  Kernel kernel_ = nullptr;
  std::size_t shared_bytes_ = 0;
  std::int64_t resident_ = 0;
  std::int64_t band_items_ = 0;  // tiles of an edge band, the same in every slab
  Stream stream_;
  DeviceLoopWorkspace<value_type> workspace_;
  DeviceBuffer<Slabs> table_{static_cast<std::size_t>(this->held())};
  PinnedBuffer<Slabs> host_table_{static_cast<std::size_t>(this->held())};
  PinnedBuffer<Words> host_words_{1};
  std::vector<DeviceBuffer<unsigned long long>> flags_;  // each held slab's signal words (symmetric)
  DeviceBuffer<Words> board_;                            // the norms of every PE's checks (symmetric)
  DeviceBuffer<unsigned long long> reduce_;              // the reductions of solve (symmetric)
};

namespace detail {

template <>
struct is_host_exchange<Nvshmem> : std::true_type {};

//! The host-controlled solver over NVSHMEM, `MultiSolver<S, Strategy, Nvshmem>` with a
//! launch-based strategy (`multi/host_copy.cuh`'s solver), one process (PE) per GPU, each holding
//! a run of the slabs (the same number on every PE) in the symmetric heap. After every round the
//! PE's exchange stream waits for its slabs' rounds and then, in stream order: a barrier of all
//! PEs (every round done, so no neighbour still reads the halo rows about to be overwritten),
//! every held slab's puts of its edge rows into each neighbour's halo
//! (`nvshmemx_putmem_on_stream`, to itself where the neighbour is on this PE), and a second
//! barrier (every put delivered); the next rounds wait for that. ‖b‖ and each check's norm are
//! the max over the PEs of the norms' bits. Collective: every PE runs the same solves. Unlike
//! the CPU-free solver, a PE whose grids are refused at a solve's start throws alone (the others
//! wait in the reduction of ‖b‖): make every grid with the solver's `make_grid`.
template <>
class HaloExchange<Nvshmem> {
 public:
  //! Collective (`nvshmem_placement`): this PE's run of the slabs, in symmetric memory.
  template <class T>
  static SlabPlacement<T> held(const Extents& global, const std::vector<int>& devices, const Nvshmem&, int halo) {
    return nvshmem_placement<T>(global, devices, halo);
  }

  //! Collective: every PE makes its exchange in the same order (its reduction words are symmetric).
  HaloExchange(const Decomposition& d, const std::vector<int>& devices, const Nvshmem&)
      : decomposition_(d), per_pe_(static_cast<int>(devices.size())), pes_(nvshmem_n_pes()),
        first_(nvshmem_my_pe() * per_pe_), swept_(devices.size()),
        reduce_(symmetric_buffer<unsigned long long>(2)) {}

  void before_round(int, cudaStream_t stream) { RELAX_CUDA_CHECK(cudaStreamWaitEvent(stream, exchanged_.get(), 0)); }
  void after_round(int s, cudaStream_t stream) { swept_[static_cast<std::size_t>(s - first_)].record(stream); }

  //! Collective: every held slab's edge rows into its neighbours' halos (see the class comment).
  template <class T, class Streams>
  void exchange(DistributedGrid<T>& u, Streams&& stream_of) {
    const cudaStream_t xs = stream_.get();
    for (const Event& e : swept_) RELAX_CUDA_CHECK(cudaStreamWaitEvent(xs, e.get(), 0));
    nvshmemx_barrier_all_on_stream(xs);
    const GridLayout& l = u.part(first_).layout();
    const std::int64_t line = l.rank() == 3 ? l.plane : l.pitch;  // elements of one storage row (plane)
    for (int s = first_; s < first_ + per_pe_; ++s) {
      const Slab& me = decomposition_[s];
      // The neighbour's storage is the symmetric address of the grid held here at its place among
      // its PE's slabs (every PE allocates alike, and swaps a slab's storage with its workspace
      // after the same rounds).
      auto send = [&](const RowRange& rows, int n) {
        const Slab& them = decomposition_[n];
        T* const to = u.part(first_ + n % per_pe_).data() + them.storage_row(rows.first) * line;
        const T* const from = u.part(s).data() + me.storage_row(rows.first) * line;
        nvshmemx_putmem_on_stream(to, from, static_cast<std::size_t>(rows.count * line) * sizeof(T), n / per_pe_, xs);
      };
      if (me.has_prev) send(me.send_to_prev(), s - 1);
      if (me.has_next) send(me.send_to_next(), s + 1);
    }
    nvshmemx_barrier_all_on_stream(xs);  // includes a quiet: every put delivered
    exchanged_.record(xs);
    for (int s = first_; s < first_ + per_pe_; ++s)  // the check after it reads the halos
      RELAX_CUDA_CHECK(cudaStreamWaitEvent(stream_of(s), exchanged_.get(), 0));
  }

  //! Collective: the max over the PEs of `v` (each PE's max over its slabs), as the bits of a
  //! norm (≥ 0 or NaN: its bits order as `collect_max` orders the values). Blocks.
  template <class T>
  double global_max(double v, cudaStream_t stream) {
    if (pes_ == 1) return v;
    const auto most =
        nvshmem_max({static_cast<unsigned long long>(arith::abs_bits(static_cast<T>(v)))}, reduce_, stream);
    return static_cast<double>(arith::from_bits<T>(static_cast<arith::bits_t<T>>(most[0])));
  }

 private:
  Decomposition decomposition_;
  int per_pe_ = 1, pes_ = 1, first_ = 0;
  Stream stream_;                     // the exchange's: barriers and puts
  std::vector<Event> swept_;          // each held slab's last round
  Event exchanged_;                   // the last exchange's puts delivered everywhere
  DeviceBuffer<unsigned long long> reduce_;  // the norms' reduction (symmetric)
};

}  // namespace detail

}  // namespace relax
