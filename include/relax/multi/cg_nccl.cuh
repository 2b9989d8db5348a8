#pragma once
//! \file
//! The NCCL Comm policy of CG on k sub-domains: `MultiCG<Part, Unfused | Pipelined, Nccl>`.
//! Two process models:
//! - one process drives every device of the split through one communicator of one rank per
//!   device (`ncclCommInitAll`, made here; the parts on one device share its rank);
//! - one process per GPU: `Nccl::comm` is the program's communicator (an MPI broadcast of
//!   `ncclGetUniqueId`'s id and `ncclCommInitRank`, as NCCL's documentation shows), this process
//!   its rank r of R on the communicator's device, holding rank r's parts of the split
//!   (`split_csr_of_rank`, `rank_parts`); every process constructs, solves and destroys its
//!   solver together. The solver does not own that communicator.
//! Per exchange, the halo entries between devices (or processes) travel in one NCCL group of
//! sends and receives, each on its own device's stream (entries between parts of one device of
//! one process are written by a gather kernel, as with `HostCopy`). Per reduction, every rank
//! all-gathers every part's sums (`ncclAllGather`, no arithmetic in NCCL) and adds them in part
//! order on its GPU, so every GPU holds the same scalars, bit for bit the ones `HostCopy`'s host
//! adds; the host reads its first GPU's. Link `relax::nccl`; `relax::relax` needs no NCCL.
//!
//! Where NCCL's device API is found (`nccl_device.h`), the CPU-free variants too:
//! `MultiCG<Part, Persistent | PersistentPipelined, Nccl>`, one GPU per process (the program's
//! communicator, or one made for the one GPU of the split). They run `PeerStore`'s kernels; the
//! vectors, boards and barrier are NCCL symmetric windows (`ncclMemAlloc`,
//! `ncclCommWindowRegister` with `NCCL_WIN_COLL_SYMMETRIC`, as the CPU-free Jacobi solver of
//! `multi/nccl_device.cuh` makes them), which the kernels reach through `ncclGetLsaPointer`, their
//! own rank's memory too; the ranks' streams meet in one-word all-reduces around the barrier's
//! reset. The ranks must all reach each other's memory (NCCL's LSA team: one node), and this
//! header be compiled against the headers of the NCCL the program loads (checked at the first
//! solver).

#include <relax/multi/cg.cuh>
#include <relax/multi/nccl.cuh>
#if __has_include(<nccl_device.h>)
#include <relax/multi/nccl_device.cuh>  // the CPU-free variants: windows and LSA pointers
#endif

#include <cstddef>
#include <exception>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace relax::detail {

template <>
struct is_split_collective<Nccl> : std::true_type {};
#if __has_include(<nccl_device.h>)
//! With NCCL's device API the CPU-free variants run over `Nccl` too (one GPU per process).
template <>
struct is_split_cpu_free<Nccl> : std::true_type {};
#endif

//! What `MultiCG` reads of `Nccl`'s settings (see `SplitCgSettings` in `multi/comm.hpp`): the
//! communicator and, in the CPU-free variants, `timeout_ns`; the CPU-free Jacobi solver's other
//! settings are refused unless left at their defaults.
template <>
struct SplitCgSettings<Nccl> {
  static std::uint64_t read(const Nccl& c) {
    require(!c.launch_per_subdomain, "comm.launch_per_subdomain", "true",
            "false for CG (the CPU-free Jacobi solver's setting: MultiCG runs one kernel per GPU)");
    require(c.silent_subdomain == -1, "comm.silent_subdomain", c.silent_subdomain,
            "-1 for CG (the CPU-free Jacobi solver's test hook)");
    require_edges_first(c.blocks);
    return checked_timeout(c.timeout_ns);
  }
};

//! `MultiCG`'s transport over NCCL: one communicator of one rank per device, or the program's
//! (see the file comment and `SplitTransport`'s interface in `multi/cg.cuh`).
template <>
class SplitTransport<Nccl> {
 public:
  //! `devices`: this process's devices, one rank each. With `comm.comm`, that communicator (this
  //! process one of its ranks).
  //! \throws relax::invalid_argument with the program's communicator and devices other than its
  //!         one device.
  SplitTransport(const std::vector<int>& devices, const Nccl& comm) {
    (void)checked_nccl_version();
    devices_ = devices;
    if (comm.comm != nullptr) {
      const NcclRank r = nccl_rank_on(comm.comm, devices, "its rank's parts");
      ranks_ = r.ranks;
      rank_ = r.rank;
      comms_.push_back(std::make_shared<NcclCommHandle>(comm.comm, false));
      owned_ = false;
      const DeviceScope on(devices.front());
      flags_ = std::make_unique<Flags>(devices.front());
      return;
    }
    std::vector<ncclComm_t> made(devices.size(), nullptr);
    ranks_ = static_cast<int>(devices.size());
    RELAX_NCCL_CHECK(ncclCommInitAll(made.data(), ranks_, devices.data()));
    // Each communicator lives until the last window registered with it is given back.
    for (ncclComm_t c : made) comms_.push_back(std::make_shared<NcclCommHandle>(c, true));
  }
  SplitTransport(const SplitTransport&) = delete;
  SplitTransport& operator=(const SplitTransport&) = delete;

  bool program() const { return !owned_; }  //!< the program's communicator (one rank per process)
  int ranks() const { return ranks_; }
  int rank() const { return rank_; }  //!< this process's rank with the program's communicator

  //! With the program's communicator, every rank learns whether one failed `step` (an
  //! all-reduce of the flags) and all throw; one process alone throws its own error.
  void agree(std::exception_ptr local, const char* step) {
    if (!flags_ || ranks_ == 1) {
      if (local) std::rethrow_exception(local);
      return;
    }
    agree_across(local, "relax::MultiCG<Nccl>", "another rank", step, {}, [&](std::vector<unsigned long long> v) {
      Flags& f = *flags_;
      const DeviceScope on(f.device);
      f.host.data()[0] = v[0];
      RELAX_CUDA_CHECK(cudaMemcpyAsync(f.word.data(), f.host.data(), sizeof(unsigned long long), cudaMemcpyHostToDevice,
                                       f.stream.get()));
      RELAX_NCCL_CHECK(
          ncclAllReduce(f.word.data(), f.word.data(), 1, ncclUint64, ncclMax, comms_.front()->get(), f.stream.get()));
      RELAX_CUDA_CHECK(cudaMemcpyAsync(f.host.data(), f.word.data(), sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                                       f.stream.get()));
      f.stream.synchronize();
      v[0] = f.host.data()[0];
      return v;
    });
  }
  template <class T>
  DeviceBuffer<T> buffer(std::size_t count) {
    return DeviceBuffer<T>(count);
  }
  void prepare_halos(std::size_t, std::size_t) {}  // two-sided: each receive names its buffer

  //! Runs `f` (sends, receives, all-gathers of several ranks) as one NCCL group.
  template <class F>
  void group(F&& f) {
    RELAX_NCCL_CHECK(ncclGroupStart());
    f();
    RELAX_NCCL_CHECK(ncclGroupEnd());
  }
  template <class F>
  void exchange_group(cudaStream_t, F&& f) {
    group(std::forward<F>(f));
  }

  template <class T>
  void send(const T* data, std::int64_t count, int from, int to, cudaStream_t stream, std::int64_t /*slot*/) {
    RELAX_NCCL_CHECK(ncclSend(data, static_cast<std::size_t>(count), nccl_type<T>(), to, comms_[rank(from)]->get(), stream));
  }
  template <class T>
  void receive(T* data, std::int64_t count, int at, int from, cudaStream_t stream, std::int64_t /*slot*/) {
    RELAX_NCCL_CHECK(ncclRecv(data, static_cast<std::size_t>(count), nccl_type<T>(), from, comms_[rank(at)]->get(), stream));
  }
  //! `count` doubles of rank `at` into every rank's `gathered`, in rank order.
  void all_gather(const double* local, double* gathered, std::size_t count, int at, cudaStream_t stream) {
    RELAX_NCCL_CHECK(ncclAllGather(local, gathered, count, ncclFloat64, comms_[rank(at)]->get(), stream));
  }

#if __has_include(<nccl_device.h>)
  // The CPU-free variants (one GPU per process: one communicator here, this rank's).

  //! Collective: `count` elements in a symmetric window (`ncclMemAlloc`, registered with
  //! `NCCL_WIN_COLL_SYMMETRIC`), the same count on every rank; the other ranks' kernels reach it
  //! through `peer`. \throws relax::unavailable_error when the NCCL loaded is not the one whose
  //!         device API this was built with, or its ranks do not all reach each other's memory.
  template <class T>
  DeviceBuffer<T> shared(std::size_t count) {
    if (!device_checked_) {
      const int version = checked_nccl_version();
      if (version != NCCL_VERSION_CODE)
        throw unavailable_error("relax::MultiCG's CPU-free variants over relax::Nccl: built against NCCL " +
                                std::to_string(NCCL_VERSION_CODE) + "'s device API, but the NCCL loaded is " +
                                std::to_string(version) + "; build against the headers of the NCCL the program runs with");
      require(comms_.size() == 1, "devices", comms_.size(),
              "one GPU per process for the CPU-free CG over relax::Nccl (several GPUs in one process: relax::PeerStore)");
      if (ncclTeamLsa(comms_.front()->get()).nRanks != ranks_)
        throw unavailable_error("relax::MultiCG's CPU-free variants over relax::Nccl: the communicator's ranks do not "
                                "all reach each other's memory (NCCL's LSA team: one node with peer access); across "
                                "nodes use relax::Unfused or relax::Pipelined");
      device_checked_ = true;
    }
    const DeviceScope on(devices_.front());
    return nccl_window_buffer<T>(comms_.front(), count);
  }
  //! Where rank `q`'s copy of the window memory at `p` (this rank's address) lies for this GPU's
  //! kernels: its LSA pointer. This rank's own memory too is reached through its LSA pointer, the
  //! address the other ranks' stores come through (the kernels touch a window through one
  //! address only). Resolved on the device once per (p, q), blocking.
  template <class T>
  T* peer(T* p, int q) {
    const auto key = std::make_pair(static_cast<const void*>(p), q);
    if (const auto it = aliases_.find(key); it != aliases_.end()) return static_cast<T*>(it->second);
    const auto [window, offset] = NcclWindows::process().find(p);
    if (window == nullptr) throw std::logic_error("relax::MultiCG<..., Nccl>: memory outside NCCL's windows");
    const DeviceScope on(devices_.front());
    Device& d = device();
    ncclComm_t c = comms_.front()->get();
    NcclLsaRefs one{};
    one.ref[0] = NcclLsaRef{d.slot.data(), window, offset, ncclTeamRankToLsa(c, ncclTeamWorld(c), q)};
    one.count = 1;
    nccl_resolve_kernel<<<1, 32, 0, d.stream.get()>>>(one);
    RELAX_CUDA_CHECK(cudaGetLastError());
    void* got = nullptr;
    RELAX_CUDA_CHECK(cudaMemcpyAsync(&got, d.slot.data(), sizeof(void*), cudaMemcpyDeviceToHost, d.stream.get()));
    d.stream.synchronize();
    aliases_[key] = got;
    return static_cast<T*>(got);
  }
  //! Every rank's `stream` meets the others' here (an all-reduce of one word on the stream).
  void barrier(cudaStream_t stream) {
    const DeviceScope on(devices_.front());
    Device& d = device();
    RELAX_NCCL_CHECK(ncclAllReduce(d.word.data(), d.word.data(), 1, ncclUint64, ncclMax, comms_.front()->get(), stream));
  }
  //! Collective: every rank's `word`, in rank order.
  std::vector<unsigned long long> gather_words(unsigned long long word) {
    const DeviceScope on(devices_.front());
    Device& d = device();
    std::vector<unsigned long long> out(static_cast<std::size_t>(ranks_));
    DeviceBuffer<unsigned long long> every(out.size());
    RELAX_CUDA_CHECK(cudaMemcpyAsync(d.word.data(), &word, sizeof word, cudaMemcpyHostToDevice, d.stream.get()));
    RELAX_NCCL_CHECK(ncclAllGather(d.word.data(), every.data(), 1, ncclUint64, comms_.front()->get(), d.stream.get()));
    RELAX_CUDA_CHECK(cudaMemcpyAsync(out.data(), every.data(), out.size() * sizeof(unsigned long long),
                                     cudaMemcpyDeviceToHost, d.stream.get()));
    d.stream.synchronize();
    return out;
  }
#endif

 private:
  // The communicator this process calls for rank r (its own, or its device's made here).
  std::size_t rank(int r) const {
    if (!owned_) {
      require(r == rank_, "rank", r, "this process's own rank");
      return 0;
    }
    return static_cast<std::size_t>(r);
  }
#if __has_include(<nccl_device.h>)
  // The CPU-free variants' scratch on this rank's device: a stream, a word, an alias's slot.
  struct Device {
    Stream stream;
    DeviceBuffer<unsigned long long> word{1};
    DeviceBuffer<void*> slot{1};
  };
  // Made on the first call, with this rank's device current (as every caller has it).
  Device& device() {
    if (!device_) device_ = std::make_unique<Device>();
    return *device_;
  }
  std::unique_ptr<Device> device_;
  std::map<std::pair<const void*, int>, void*> aliases_;
  bool device_checked_ = false;
#endif
  // With the program's communicator: a word for the ranks' agreement, on its device.
  struct Flags {
    explicit Flags(int d) : device(d) {}
    int device;
    Stream stream;
    DeviceBuffer<unsigned long long> word{1};
    PinnedBuffer<unsigned long long> host{1};
  };
  std::vector<std::shared_ptr<NcclCommHandle>> comms_;  // one per device made here, or the program's one
  std::vector<int> devices_;
  std::unique_ptr<Flags> flags_;
  bool owned_ = true;
  int ranks_ = 0, rank_ = 0;
};

}  // namespace relax::detail

namespace relax {

//! Rank r's parts of a CSR split into `parts` parts dealt to the ranks of `comm.comm` (the
//! program's communicator; this process its rank r, on the communicator's device), made from
//! those parts alone: `mine` holds parts `rank_parts(parts, R, r)` in order, each as
//! `read_matrix_market_part(path, parts, index)` reads it, so no process reads or holds the
//! whole matrix. The ranks all-gather their parts' shapes (rows, columns, exchange lists; no
//! matrix entries) over NCCL and each builds the split's layout from them, the layout
//! `split_csr_of_rank` makes from the whole matrix. Every rank calls it together;
//! `MultiCG<..., Nccl>` with the same `comm` solves on the result.
//! \throws relax::invalid_argument without the program's communicator; on every rank, when one
//!         holds parts other than its own or the parts do not fit together.
template <class T>
SplitOperator<CsrPartOperator<T>> split_csr_of_rank(const std::vector<CsrPart<T>>& mine, int parts, const Nccl& comm) {
  detail::require(comm.comm != nullptr, "comm.comm", "null",
                  "the program's communicator (relax::Nccl::comm): the ranks gather their parts' shapes over it");
  int ranks = 0, rank = 0, device = 0;
  RELAX_NCCL_CHECK(ncclCommCount(comm.comm, &ranks));
  RELAX_NCCL_CHECK(ncclCommUserRank(comm.comm, &rank));
  RELAX_NCCL_CHECK(ncclCommCuDevice(comm.comm, &device));
  const detail::DeviceScope on(device);
  return detail::split_csr_gathered(mine, parts, ranks, rank, device, [&](const std::vector<std::int64_t>& words) {
    return detail::gather_words(
        words, ranks, [](std::size_t count) { return DeviceBuffer<std::int64_t>(count); },
        [&](const std::int64_t* source, std::int64_t* destination, std::size_t count, cudaStream_t stream) {
          RELAX_NCCL_CHECK(ncclAllGather(source, destination, count, ncclInt64, comm.comm, stream));
        });
  });
}

}  // namespace relax
