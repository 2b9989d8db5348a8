#pragma once
//! \file
//! Jacobi on several GPUs with no host in the loop through NCCL's device API, one process per
//! GPU: `MultiSolver<S, DeviceLoop<Sync>, Nccl>` and `MultiSolver<S, DeviceLoop<TemporalBlock<D,
//! ColumnStream>>, Nccl>`. The kernels are `PeerStore`'s (`multi/peer_store.cuh`: boundary tiles
//! first, edge rows stored into the neighbour's halo, a flag word per edge tile raised with a
//! release add, the stop decision taken from a board of every kernel's norms); what NCCL gives
//! them is the way to the other processes' memory:
//! - every grid the solver makes (`make_grid`, and its own workspaces), the flag words and the
//!   norm boards are NCCL symmetric windows (`ncclMemAlloc`, `ncclCommWindowRegister` with
//!   `NCCL_WIN_COLL_SYMMETRIC`; collective, the same size on every rank: the largest slab's);
//! - the kernels reach a neighbour's halo, flags and board through LSA pointers: before each
//!   solve, a small kernel writes `ncclGetLsaPointer(window, offset, peer)` into the fields of the
//!   kernels' tables (the neighbour's memory is that of this process's slab at the neighbour's
//!   place among its rank's slabs, every rank allocating alike). Every link goes through a window,
//!   the links between slabs of one rank too, so one rank on one GPU runs the device-API path;
//! - before the kernels start, every rank has zeroed its words: an LSA barrier of the device
//!   communicator (`ncclLsaBarrierSession`, arrival by NCCL; NCCL's wait has no bound, so the
//!   wait reads the session's inbox words with a time limit, as NCCL's own wait does without one);
//! - ‖b‖ is the max over the ranks (an all-reduce of its bits), and before a solve's start and
//!   after its end the ranks agree on whether one failed, so all throw together.
//! Rank r holds the r-th run of the slabs, as many on every rank (`devices`: the rank's GPU once
//! per slab it holds). Without `Nccl::comm` the solver makes a communicator of one rank on the
//! one GPU of `devices` (kept alive by its windows, grids included, until the last is freed); a
//! program's communicator must outlive the solver and every grid it made, and every rank frees
//! its grids and solvers in the same order (a window's deregistration is collective). The LSA team must span the communicator (one node, with peer access
//! between its GPUs); across nodes use `Nvshmem`.
//!
//! NCCL's device structures change between releases (2.28.3's `ncclDevCommRequirements` is not
//! 2.28.9's): this header must be compiled against the headers of the NCCL the program loads,
//! and the solver refuses to start when `ncclGetVersion` says otherwise. Every wait of the
//! kernels is bounded (`Nccl::timeout_ns`); NCCL's own collectives (window registration, the
//! all-reduces) are not: a rank that dies hangs the rest.

#include <relax/multi/nccl.cuh>
#include <relax/multi/peer_store.cuh>

#include <nccl_device.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace relax {

namespace detail {

//! A registered window: its communicator, handle and bytes.
struct NcclWindow {
  std::shared_ptr<NcclCommHandle> comm;
  ncclWindow_t window = nullptr;
  std::size_t bytes = 0;
};

//! The windows relax registered, by base address (one table per process).
class NcclWindows {
 public:
  static NcclWindows& process() {
    static NcclWindows windows;
    return windows;
  }
  void add(void* base, NcclWindow w) {
    const std::lock_guard<std::mutex> lock(mutex_);
    windows_[reinterpret_cast<std::uintptr_t>(base)] = std::move(w);
  }
  //! Takes the window at `base` out of the table (empty when there is none).
  NcclWindow remove(void* base) {
    const std::lock_guard<std::mutex> lock(mutex_);
    NcclWindow w;
    const auto it = windows_.find(reinterpret_cast<std::uintptr_t>(base));
    if (it == windows_.end()) return w;
    w = std::move(it->second);
    windows_.erase(it);
    return w;
  }
  //! The window that holds `p` and p's offset in it (a null window: none does).
  std::pair<ncclWindow_t, std::size_t> find(const void* p) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    auto it = windows_.upper_bound(at);
    if (it == windows_.begin()) return {nullptr, 0};
    --it;
    const std::size_t offset = at - it->first;
    if (offset >= it->second.bytes) return {nullptr, 0};
    return {it->second.window, offset};
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::uintptr_t, NcclWindow> windows_;
};

//! Gives a window back: deregisters it (every rank in the same order) and frees its memory.
inline void nccl_window_release(void* p) noexcept {
  const NcclWindow w = NcclWindows::process().remove(p);
  if (w.window != nullptr) (void)ncclCommWindowDeregister(w.comm->get(), w.window);
  (void)ncclMemFree(p);
}

//! `count` elements in a symmetric window of `comm` on the current device (collective: every
//! rank asks for the same count).
template <class T>
DeviceBuffer<T> nccl_window_buffer(const std::shared_ptr<NcclCommHandle>& comm, std::size_t count) {
  constexpr std::size_t align = NCCL_WIN_REQUIRED_ALIGNMENT;
  const std::size_t bytes = (std::max<std::size_t>(1, count) * sizeof(T) + align - 1) / align * align;
  void* p = nullptr;
  RELAX_NCCL_CHECK(ncclMemAlloc(&p, bytes));
  ncclWindow_t window = nullptr;
  const ncclResult_t registered = ncclCommWindowRegister(comm->get(), p, bytes, &window, NCCL_WIN_COLL_SYMMETRIC);
  if (registered != ncclSuccess) {
    (void)ncclMemFree(p);
    nccl_check(registered, "ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC)");
  }
  if (window == nullptr) {  // a window the device API could not resolve (its LSA pointers)
    (void)ncclMemFree(p);
    throw unavailable_error(
        "relax: NCCL " + std::to_string(NCCL_VERSION_CODE) +
        " registered no symmetric window for this communicator (it gave the communicator no symmetric memory), so "
        "its device API cannot reach the memory; NCCL 2.28.9 or later has it for one local rank");
  }
  NcclWindows::process().add(p, NcclWindow{comm, window, bytes});
  return DeviceBuffer<T>::adopt(static_cast<T*>(p), count, &nccl_window_release);
}

//! A field of a kernel's table (device memory) that the device API fills: the LSA pointer of
//! `window` at `offset` on LSA rank `peer`.
struct NcclLsaRef {
  void** field;
  ncclWindow_t window;
  std::size_t offset;
  int peer;
};

//! Fields one launch of `nccl_resolve_kernel` fills (its parameter: about 2 KB).
inline constexpr int nccl_refs_per_launch = 64;
struct NcclLsaRefs {
  NcclLsaRef ref[nccl_refs_per_launch];
  int count;
};

__global__ inline void nccl_resolve_kernel(NcclLsaRefs refs) {
  for (int i = static_cast<int>(threadIdx.x); i < refs.count; i += static_cast<int>(blockDim.x))
    *refs.ref[i].field = ncclGetLsaPointer(refs.ref[i].window, refs.ref[i].offset, refs.ref[i].peer);
}

//! The ranks' meeting before a solve's kernels: one block arrives at LSA barrier 0 of `comm`
//! (release: this rank's words are zeroed) and waits for every other rank's arrival (acquire) on
//! the session's inbox words, as `ncclLsaBarrierSession::wait` does, within `timeout_ns`
//! (`*failed` raised when it ran out).
__global__ inline void nccl_start_kernel(ncclDevComm comm, std::uint64_t timeout_ns, int* failed) {
  ncclLsaBarrierSession<ncclCoopCta> barrier(ncclCoopCta(), comm, ncclTeamTagLsa(), 0);
  barrier.arrive(ncclCoopCta(), cuda::memory_order_release);
  const std::uint32_t want = barrier.epoch + 1;
  for (int i = static_cast<int>(threadIdx.x); i < barrier.team.nRanks - 1; i += static_cast<int>(blockDim.x)) {
    const int peer = i + (barrier.team.rank <= i ? 1 : 0);
    cuda::atomic_ref<std::uint32_t> inbox(*barrier.ucInbox(barrier.team.rank, peer));
    if (!bounded_wait([&] { return inbox.load(cuda::memory_order_acquire) - want <= 0x7fffffffu; }, failed, timeout_ns))
      break;
  }
  barrier.epoch += 1;
  __syncthreads();
}

//! The CPU-free solver's fabric over NCCL's device API (see the file comment).
template <class T>
class PeerFabric<Nccl, T> {
 public:
  using Words = PeerLaunchWords<T>;
  using Kernels = std::vector<std::pair<int, std::vector<int>>>;
  static constexpr const char* comm_name = "Nccl";

  //! Collective: every rank with the same box, halo and count of `devices`.
  PeerFabric(const Nccl& comm, const Extents& global, const std::vector<int>& devices, int halo) {
    const int version = checked_nccl_version();
    if (version != NCCL_VERSION_CODE)
      throw unavailable_error("relax::MultiSolver<DeviceLoop<...>, Nccl>: built against NCCL " +
                              std::to_string(NCCL_VERSION_CODE) + "'s device API, but the NCCL loaded is " +
                              std::to_string(version) +
                              "; its device structures change between releases: build against the headers of the NCCL "
                              "the program runs with");
    require(!devices.empty(), "devices", "none", "at least one sub-domain in this process");
    device_ = devices.front();
    for (int d : devices)
      require(d == device_, "devices", d,
              "one GPU per process with relax::Nccl's CPU-free solver (its GPU once per sub-domain it holds); one "
              "process over several GPUs: relax::PeerStore");
    require_devices({device_});
    const DeviceScope scope(device_);
    own_ = std::make_unique<Own>();
    if (comm.comm != nullptr) {
      int on = -1;
      RELAX_NCCL_CHECK(ncclCommCuDevice(comm.comm, &on));
      require(on == device_, "devices", device_,
              ("the communicator's device (" + std::to_string(on) + ") with relax::Nccl::comm").c_str());
      comm_ = std::make_shared<NcclCommHandle>(comm.comm, false);
    } else {
      ncclComm_t made = nullptr;
      RELAX_NCCL_CHECK(ncclCommInitAll(&made, 1, &device_));
      comm_ = std::make_shared<NcclCommHandle>(made, true);
    }
    RELAX_NCCL_CHECK(ncclCommCount(comm_->get(), &layout_.ranks));
    RELAX_NCCL_CHECK(ncclCommUserRank(comm_->get(), &layout_.rank));
    layout_.per_rank = static_cast<int>(devices.size());
    std::exception_ptr local;
    try {
      require(ncclTeamLsa(comm_->get()).nRanks == layout_.ranks, "comm", layout_.ranks,
              "a communicator whose ranks all reach each other's memory (NCCL's LSA team: one node with peer access); "
              "across nodes: relax::Nvshmem");
      require(layout_.ranks <= peer_max_launches, "comm", layout_.ranks,
              ("at most " + std::to_string(peer_max_launches) + " ranks (the width of the norm board)").c_str());
      global.validate();
      const Decomposition probe(global, parts(), halo);  // refuses a split thinner than its halo
    } catch (...) {
      local = std::current_exception();
    }
    const auto per = static_cast<unsigned long long>(layout_.per_rank);
    const auto most = agree(local, "to construct its solver", {per, ~per}, own_->stream.get());
    require(most[0] == per && ~most[1] == per, "devices", layout_.per_rank, "as many sub-domains on every rank");
    const Decomposition whole(global, parts(), halo);
    for (int s = 0; s < parts(); ++s)
      largest_ = std::max(largest_, static_cast<std::size_t>(whole[s].template layout<T>().size()));
    ncclDevCommRequirements requirements{};
    requirements.lsaBarrierCount = 1;
    RELAX_NCCL_CHECK(ncclDevCommCreate(comm_->get(), &requirements, &device_comm_));
    made_device_comm_ = true;
  }
  PeerFabric(const PeerFabric&) = delete;
  PeerFabric& operator=(const PeerFabric&) = delete;
  PeerFabric(PeerFabric&& o) noexcept
      : comm_(std::move(o.comm_)), device_comm_(o.device_comm_),
        made_device_comm_(std::exchange(o.made_device_comm_, false)), device_(o.device_), layout_(o.layout_),
        largest_(o.largest_),
        board_words_(o.board_words_), flag_stride_(o.flag_stride_), window_(std::move(o.window_)),
        refs_(std::move(o.refs_)), own_(std::move(o.own_)) {}
  PeerFabric& operator=(PeerFabric&&) = delete;
  ~PeerFabric() {
    if (made_device_comm_) (void)ncclDevCommDestroy(comm_->get(), &device_comm_);
  }

  //! Rank r holds slabs [r × per rank, (r + 1) × per rank), each in a window of the largest
  //! slab's size (collective: every rank makes its grids in the same order).
  SlabPlacement<T> placement() const {
    SlabPlacement<T> p;
    p.parts = parts();
    p.first = layout_.rank * layout_.per_rank;
    p.allocate = [comm = comm_, largest = largest_](const GridLayout& l) {
      return DeviceGrid<T>(l, nccl_window_buffer<T>(comm, largest));
    };
    return p;
  }
  //! One kernel per rank over its slabs, or one per slab (`Nccl::launch_per_subdomain`).
  Kernels kernels(const Nccl& comm, const std::vector<int>&) {
    layout_.per_kernel = comm.launch_per_subdomain ? 1 : layout_.per_rank;
    return layout_.kernels(device_);
  }
  std::pair<int, int> local_kernels(int) const { return layout_.local_kernels(); }
  bool connect(const std::vector<int>&) const { return layout_.ranks > 1; }

  //! One window (collective): every local kernel's words, then each held slab's flags, as many
  //! words for each as the most any slab of any rank needs.
  void allocate(const std::vector<std::size_t>& flag_words, const std::vector<int>&, const std::vector<int>&) {
    std::size_t most = 1;
    for (std::size_t w : flag_words) most = std::max(most, w);
    flag_stride_ = static_cast<std::size_t>(agree(nullptr, "to size its flags", {most}, own_->stream.get())[0]);
    board_words_ = (static_cast<std::size_t>(kernels_per_rank()) * sizeof(Words) + 15) / 16 * 2;
    const DeviceScope scope(device_);
    window_ = nccl_window_buffer<unsigned long long>(comm_, board_words_ + static_cast<std::size_t>(layout_.per_rank) * flag_stride_);
  }
  unsigned long long* flags(int k) { return window_.data() + board_words_ + static_cast<std::size_t>(k) * flag_stride_; }
  std::size_t flag_bytes(int) const { return flag_stride_ * sizeof(unsigned long long); }
  Words* board(int h) { return reinterpret_cast<Words*>(window_.data()) + h; }
  int twin_slab(int n) const { return layout_.twin_slab(n); }
  int twin_kernel(int m) const { return layout_.twin_kernel(m); }
  int owner_of_slab(int n) const { return layout_.owner_of_slab(n); }
  int owner_of_kernel(int m) const { return layout_.owner_of_kernel(m); }

  //! The address through which this rank's kernels reach `local` (in a window): its LSA pointer
  //! on this rank, the one the other ranks' stores come through too (NCCL maps the window there
  //! as well; the kernels touch their window memory through one address only). Blocks.
  template <class U>
  U* alias(U* local) {
    const auto [window, offset] = NcclWindows::process().find(local);
    if (window == nullptr)
      throw std::logic_error("relax::MultiSolver<DeviceLoop<...>, Nccl>: memory outside NCCL's windows");
    const DeviceScope scope(device_);
    NcclLsaRefs one{};
    one.ref[0] = NcclLsaRef{own_->slot.data(), window, offset, lsa_rank(layout_.rank)};
    one.count = 1;
    nccl_resolve_kernel<<<1, 32, 0, own_->stream.get()>>>(one);
    RELAX_CUDA_CHECK(cudaGetLastError());
    void* got = nullptr;
    RELAX_CUDA_CHECK(cudaMemcpyAsync(&got, own_->slot.data(), sizeof(void*), cudaMemcpyDeviceToHost, own_->stream.get()));
    RELAX_CUDA_CHECK(cudaStreamSynchronize(own_->stream.get()));
    return static_cast<U*>(got);
  }
  //! Leaves `local` in `field` (it marks the field as set on the host) and notes that the device
  //! is to write there the LSA pointer of the same place in rank `owner`'s window.
  template <class U>
  void point(U*& field, U* local, int owner) {
    const auto [window, offset] = NcclWindows::process().find(local);
    if (window == nullptr)
      throw std::logic_error("relax::MultiSolver<DeviceLoop<...>, Nccl>: memory outside NCCL's windows");
    field = local;
    refs_.push_back(NcclLsaRef{reinterpret_cast<void**>(&field), window, offset, lsa_rank(owner)});
  }
  //! Writes the LSA pointers `point` noted into the tables just uploaded, on `stream`.
  void resolve(cudaStream_t stream, std::initializer_list<PeerUpload> uploads) {
    NcclLsaRefs batch{};
    auto flush = [&] {
      if (batch.count == 0) return;
      nccl_resolve_kernel<<<1, nccl_refs_per_launch, 0, stream>>>(batch);
      RELAX_CUDA_CHECK(cudaGetLastError());
      batch.count = 0;
    };
    for (NcclLsaRef r : refs_) {
      const auto* at = reinterpret_cast<const unsigned char*>(r.field);
      bool found = false;
      for (const PeerUpload& u : uploads) {
        const auto* host = static_cast<const unsigned char*>(u.host);
        if (at < host || at >= host + u.bytes) continue;
        r.field = reinterpret_cast<void**>(static_cast<unsigned char*>(u.device) + (at - host));
        found = true;
      }
      if (!found) throw std::logic_error("relax::MultiSolver<DeviceLoop<...>, Nccl>: an LSA pointer outside the tables");
      batch.ref[batch.count++] = r;
      if (batch.count == nccl_refs_per_launch) flush();
    }
    flush();
    refs_.clear();
  }
  //! The LSA barrier on the first stream (after its waits), the other streams after it.
  void start(const std::vector<cudaStream_t>& streams, std::uint64_t timeout_ns) {
    const DeviceScope scope(device_);
    const cudaStream_t first = streams.front();
    RELAX_CUDA_CHECK(cudaMemsetAsync(own_->failed.data(), 0, sizeof(int), first));
    nccl_start_kernel<<<1, 32, 0, first>>>(device_comm_, timeout_ns, own_->failed.data());
    RELAX_CUDA_CHECK(cudaGetLastError());
    RELAX_CUDA_CHECK(
        cudaMemcpyAsync(own_->host_failed.data(), own_->failed.data(), sizeof(int), cudaMemcpyDeviceToHost, first));
    RELAX_CUDA_CHECK(cudaEventRecord(own_->started.get(), first));
    for (std::size_t k = 1; k < streams.size(); ++k)
      RELAX_CUDA_CHECK(cudaStreamWaitEvent(streams[k], own_->started.get(), 0));
  }
  std::string start_failure() {
    RELAX_CUDA_CHECK(cudaEventSynchronize(own_->started.get()));
    return own_->host_failed.data()[0] != 0 ? "NCCL's LSA barrier before the kernels (a rank that never arrived)"
                                       : std::string();
  }
  //! Collective: whether any rank failed `step` (see `PeerFabric<PeerStore, T>::agree`).
  std::vector<unsigned long long> agree(std::exception_ptr local, const char* step, std::vector<unsigned long long> extra,
                                        cudaStream_t stream) {
    return agree_across(local, "relax::MultiSolver<DeviceLoop<...>, Nccl>", "another rank", step, std::move(extra),
                        [&](std::vector<unsigned long long> v) {
                          return layout_.ranks > 1 ? max_over_ranks(std::move(v), stream) : v;
                        });
  }
  std::int64_t least(std::int64_t v, cudaStream_t stream) {
    const auto bits = ~static_cast<unsigned long long>(v);
    return static_cast<std::int64_t>(~agree(nullptr, "to size its work", {bits}, stream)[0]);
  }
  bool alone() const { return layout_.ranks == 1; }
  void require_reachable(const void* p, int s) const {
    require(NcclWindows::process().find(p).first != nullptr, "u", s,
            "a grid in NCCL's windows, made by this solver's make_grid");
  }

  int ranks() const { return layout_.ranks; }
  int rank() const { return layout_.rank; }

 private:
  int parts() const { return layout_.parts(); }
  int lsa_rank(int rank) const { return ncclTeamRankToLsa(comm_->get(), ncclTeamWorld(comm_->get()), rank); }
  int kernels_per_rank() const { return layout_.kernels_per_rank(); }

  //! The max over the ranks of each of `values` (an all-reduce on `stream`; blocks).
  std::vector<unsigned long long> max_over_ranks(std::vector<unsigned long long> values, cudaStream_t stream) {
    Own& o = *own_;
    require(values.size() <= o.host_words.size(), "values", static_cast<std::int64_t>(values.size()), "at most 8 words");
    std::copy(values.begin(), values.end(), o.host_words.data());
    const std::size_t bytes = values.size() * sizeof(unsigned long long);
    RELAX_CUDA_CHECK(cudaMemcpyAsync(o.words.data(), o.host_words.data(), bytes, cudaMemcpyHostToDevice, stream));
    RELAX_NCCL_CHECK(ncclAllReduce(o.words.data(), o.words.data(), values.size(), ncclUint64, ncclMax, comm_->get(), stream));
    RELAX_CUDA_CHECK(cudaMemcpyAsync(o.host_words.data(), o.words.data(), bytes, cudaMemcpyDeviceToHost, stream));
    RELAX_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::copy(o.host_words.data(), o.host_words.data() + values.size(), values.begin());
    return values;
  }

  std::shared_ptr<NcclCommHandle> comm_;
  ncclDevComm device_comm_{};
  bool made_device_comm_ = false;
  int device_ = 0;
  RankLayout layout_;  // the ranks, this one, and the slabs of a rank and of a kernel
  std::size_t largest_ = 0;                   // elements of the largest slab (every grid window's size)
  std::size_t board_words_ = 0, flag_stride_ = 1;
  DeviceBuffer<unsigned long long> window_;   // the boards, then the flags
  std::vector<NcclLsaRef> refs_;              // fields for `resolve` (host addresses)
  // What the fabric keeps on its device (made with it current).
  struct Own {
    Stream stream;  // the collectives outside a solve, the aliases
    DeviceBuffer<unsigned long long> words{8};
    PinnedBuffer<unsigned long long> host_words{8};
    DeviceBuffer<int> failed{1};  // the start barrier ran out of time
    PinnedBuffer<int> host_failed{1};
    DeviceBuffer<void*> slot{1};  // an alias, from the device
    Event started;
  };
  std::unique_ptr<Own> own_;
};

}  // namespace detail

//! Jacobi on the slabs of a box, one process per GPU, no host in the loop, through NCCL's device
//! API (see the file comment): one row (plane) of halo every sweep.
template <class Stencil_, int X, int Y, int Rows>
class MultiSolver<Stencil_, DeviceLoop<SyncTile<X, Y, Rows>>, Nccl>
    : public detail::PeerStoreSolver<Stencil_, SyncTile<X, Y, Rows>, Nccl> {
 public:
  using detail::PeerStoreSolver<Stencil_, SyncTile<X, Y, Rows>, Nccl>::PeerStoreSolver;
};

//! The same with exact temporal blocking: passes of up to D sweeps, a D-row (plane) halo after
//! every pass. Float32 and float64 in 2D and 3D, as the single-domain streamed loop.
template <class Stencil_, int D>
class MultiSolver<Stencil_, DeviceLoop<TemporalBlock<D, ColumnStream>>, Nccl>
    : public detail::PeerStoreSolver<Stencil_, TemporalBlock<D, ColumnStream>, Nccl> {
 public:
  using detail::PeerStoreSolver<Stencil_, TemporalBlock<D, ColumnStream>, Nccl>::PeerStoreSolver;
};

}  // namespace relax
