#pragma once
//! \file
//! The NVSHMEM Comm policy of CG on k sub-domains, one process (an NVSHMEM PE) per GPU:
//! `MultiCG<Part, Unfused | Pipelined, Nvshmem>` (host-controlled) and
//! `MultiCG<Part, Persistent | PersistentPipelined, Nvshmem>` (CPU-free, within one node). PE r
//! holds rank r's parts of the split (`split_csr_of_rank(..., pes, r, its device)` or
//! `split_stencil_of_rank`; with one PE, any whole split on its device), all on its GPU, and
//! every PE constructs, solves and destroys its solver together, after its `NvshmemRuntime`
//! starts and before it ends.
//!
//! Halos: NVSHMEM is one-sided, so each transfer between PEs has a slot in its reader's inbox (a
//! symmetric buffer; the slots of every PE's transfers are numbered alike on every PE from the
//! layout). Per exchange the sender packs its entries into its symmetric outbox, puts them into
//! the reader's slot (`nvshmemx_putmem_on_stream`), every PE meets at a barrier
//! (`nvshmemx_barrier_all_on_stream`: the puts are complete and visible), and the reader copies
//! its slots into its halo. The inbox alternates between two halves by exchange: a PE can only
//! put into a half again after the barrier of the next exchange, which its reader meets after
//! it has copied that half out, so three exchanges in a row (Pipelined's replacement) are safe.
//! Sums: every PE all-gathers every part's sums (`nvshmemx_double_fcollect_on_stream`, no
//! arithmetic in NVSHMEM) and adds them in part order on its GPU, so every PE holds the same
//! scalars, bit for bit those `HostCopy`'s host adds. Parts on one PE exchange with gather
//! kernels, as with `HostCopy`.
//!
//! CPU-free: the kernels of `multi/cg_kernels.cuh`, one cooperative kernel per PE, as with
//! `PeerStore`, their memory in NVSHMEM's symmetric heap: every part's local vectors (the same
//! size on every PE, the largest part's; every PE holds as many parts), every PE's board of block
//! partials and PE 0's grid barrier. A sender stores the readers' halo entries, and every block
//! its partials into every PE's board, through the addresses NVSHMEM maps the other PEs' memory at
//! (`nvshmem_ptr`: peers within a node); every block of every PE meets at PE 0's barrier (system
//! scope, bounded waits). The host work around the kernels (r = b − A x, checkpoints) goes through
//! the host-controlled transport above. Where a PE's memory is not mapped (another node) the
//! CPU-free variants refuse to run: puts across nodes are not built for CG. With one PE the
//! kernels are `PeerStore`'s on one device, bit for bit.
//!
//! The PEs agree on whether one of them failed before the collective steps (construction, a
//! solve's start), so none is left in a collective call. NVSHMEM's own collectives (barriers,
//! all-gathers, allocations) are not bounded: a PE that dies hangs the others.
//!
//! Link `relax::nvshmem` and compile with relocatable device code (see `multi/nvshmem.cuh`).

#include <relax/multi/cg.cuh>
#include <relax/multi/nvshmem.cuh>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

namespace relax::detail {

template <>
struct is_split_collective<Nvshmem> : std::true_type {};
template <>
struct is_split_cpu_free<Nvshmem> : std::true_type {};

//! What `MultiCG` reads of `Nvshmem`'s settings (see `SplitCgSettings` in `multi/comm.hpp`): the
//! CPU-free variants' time limit; stores through NVSHMEM's mapping only (puts are not built for
//! CG), and the Jacobi solver's test hook left off.
template <>
struct SplitCgSettings<Nvshmem> {
  static std::uint64_t read(const Nvshmem& c) {
    require(c.store_when_mapped, "comm.store_when_mapped", "false",
            "true for CG (its CPU-free kernels store through NVSHMEM's mapping; puts are not built for CG)");
    require(c.silent_subdomain == -1, "comm.silent_subdomain", c.silent_subdomain,
            "-1 for CG (the Jacobi solver's test hook; MultiCG's is set_absent_blocks_for_testing)");
    require_edges_first(c.blocks);
    return checked_timeout(c.timeout_ns);
  }
};

//! `MultiCG`'s transport over NVSHMEM (see the file comment and `SplitTransport`'s interface in
//! `multi/cg.cuh`).
template <>
class SplitTransport<Nvshmem> {
 public:
  //! `devices`: the devices of this process's parts, which must be its PE's, current.
  //! \throws std::logic_error when NVSHMEM is not running; relax::invalid_argument (on every PE,
  //!         when one refuses) for parts on another device.
  SplitTransport(const std::vector<int>& devices, const Nvshmem&) {
    const NvshmemRuntime* runtime = NvshmemRuntime::active();
    if (runtime == nullptr)
      throw std::logic_error("relax::MultiCG<Nvshmem>: NVSHMEM is not running (create a relax::NvshmemRuntime first)");
    ranks_ = runtime->pes();
    rank_ = runtime->pe();
    std::exception_ptr local;
    try {
      for (int d : devices)
        require(d == runtime->device(), "devices", d,
                ("this PE's device, " + std::to_string(runtime->device()) + ", for each of its parts").c_str());
      nvshmem_require_current_device(*runtime);
    } catch (...) {
      local = std::current_exception();
    }
    scratch_ = symmetric_buffer<unsigned long long>(2);
    agree(local, "to construct its solver");
  }
  SplitTransport(const SplitTransport&) = delete;
  SplitTransport& operator=(const SplitTransport&) = delete;

  bool program() const { return true; }  //!< one process per GPU, always
  int ranks() const { return ranks_; }
  int rank() const { return rank_; }

  //! Collective: every PE learns whether one failed `step`, and all throw.
  void agree(std::exception_ptr local, const char* step) {
    agree_across(local, "relax::MultiCG<Nvshmem>", "another PE", step, {}, [&](std::vector<unsigned long long> v) {
      return ranks_ > 1 ? nvshmem_max(std::move(v), scratch_, stream_.get()) : v;
    });
  }
  //! Collective: symmetric memory (the all-gather's source and destination).
  template <class T>
  DeviceBuffer<T> buffer(std::size_t count) {
    return symmetric_buffer<T>(count);
  }
  //! Collective: symmetric memory the other PEs' kernels reach (`peer`): the CPU-free variants'
  //! vectors, boards and barrier.
  template <class T>
  DeviceBuffer<T> shared(std::size_t count) {
    return symmetric_buffer<T>(count);
  }
  //! Collective: the two inbox halves and the outbox, the same size on every PE.
  void prepare_halos(std::size_t inbox_bytes, std::size_t outbox_bytes) {
    half_ = inbox_bytes;
    inbox_ = symmetric_buffer<unsigned char>(2 * inbox_bytes);
    outbox_ = symmetric_buffer<unsigned char>(outbox_bytes);
  }

  //! Collective: every PE's `word`, in PE order.
  std::vector<unsigned long long> gather_words(unsigned long long word) {
    DeviceBuffer<unsigned long long> mine = symmetric_buffer<unsigned long long>(1);
    DeviceBuffer<unsigned long long> every = symmetric_buffer<unsigned long long>(static_cast<std::size_t>(ranks_));
    std::vector<unsigned long long> out(static_cast<std::size_t>(ranks_));
    RELAX_CUDA_CHECK(cudaMemcpyAsync(mine.data(), &word, sizeof word, cudaMemcpyHostToDevice, stream_.get()));
    if (const int status = nvshmemx_uint64_fcollect_on_stream(NVSHMEM_TEAM_WORLD, reinterpret_cast<std::uint64_t*>(every.data()),
                                                              reinterpret_cast<const std::uint64_t*>(mine.data()), 1,
                                                              stream_.get());
        status != 0)
      throw nvshmem_error("relax: nvshmemx_uint64_fcollect_on_stream failed with status " + std::to_string(status));
    RELAX_CUDA_CHECK(cudaMemcpyAsync(out.data(), every.data(), out.size() * sizeof(unsigned long long),
                                     cudaMemcpyDeviceToHost, stream_.get()));
    stream_.synchronize();
    return out;
  }
  //! Where PE `pe`'s copy of the symmetric object at `p` (this PE's address) lies in this GPU's
  //! address space, for the CPU-free kernels' stores, boards and barrier.
  //! \throws relax::unavailable_error where NVSHMEM does not map that PE's memory here (another
  //!         node): the CPU-free CG over NVSHMEM runs within one node.
  template <class T>
  T* peer(T* p, int pe) const {
    void* at = nvshmem_ptr(p, pe);
    if (at == nullptr)
      throw unavailable_error("relax::MultiCG's CPU-free variants over relax::Nvshmem: PE " + std::to_string(pe) +
                              "'s memory is not mapped on PE " + std::to_string(rank_) +
                              " (another node); they run within one node: use relax::Unfused or relax::Pipelined "
                              "with relax::Nvshmem across nodes");
    return static_cast<T*>(at);
  }
  //! Every PE's `stream` meets the others' here (NVSHMEM's barrier of all PEs, on the stream).
  void barrier(cudaStream_t stream) { nvshmemx_barrier_all_on_stream(stream); }

  template <class F>
  void group(F&& f) {
    f();
  }
  //! One exchange: the puts `f` makes, the barrier of all PEs, the reader's copies out of its
  //! inbox (all on `stream`, this PE's).
  template <class F>
  void exchange_group(cudaStream_t stream, F&& f) {
    packed_ = 0;
    arrivals_.clear();
    f();
    nvshmemx_barrier_all_on_stream(stream);
    for (const Arrival& a : arrivals_)
      RELAX_CUDA_CHECK(cudaMemcpyAsync(a.dst, inbox_.data() + a.at, a.bytes, cudaMemcpyDeviceToDevice, stream));
    parity_ ^= 1;
  }

  template <class T>
  void send(const T* data, std::int64_t count, int /*from*/, int to, cudaStream_t stream, std::int64_t slot) {
    const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(T);
    require(packed_ + bytes <= outbox_.size(), "halo entries", count, "within the outbox sized from the layout");
    unsigned char* out = outbox_.data() + packed_;
    RELAX_CUDA_CHECK(cudaMemcpyAsync(out, data, bytes, cudaMemcpyDeviceToDevice, stream));
    nvshmemx_putmem_on_stream(inbox_.data() + slot_at<T>(slot), out, bytes, to, stream);
    packed_ += bytes;
  }
  template <class T>
  void receive(T* data, std::int64_t count, int /*at*/, int /*from*/, cudaStream_t, std::int64_t slot) {
    arrivals_.push_back({data, slot_at<T>(slot), static_cast<std::size_t>(count) * sizeof(T)});
  }
  //! `count` doubles of every PE's `local` into every PE's `gathered`, in PE order.
  void all_gather(const double* local, double* gathered, std::size_t count, int /*at*/, cudaStream_t stream) {
    if (const int status = nvshmemx_double_fcollect_on_stream(NVSHMEM_TEAM_WORLD, gathered, local, count, stream);
        status != 0)
      throw nvshmem_error("relax: nvshmemx_double_fcollect_on_stream failed with status " + std::to_string(status));
  }

 private:
  // Byte offset of inbox slot `slot` (in elements of T) in this exchange's half.
  template <class T>
  std::size_t slot_at(std::int64_t slot) const {
    return static_cast<std::size_t>(parity_) * half_ + static_cast<std::size_t>(slot) * sizeof(T);
  }
  struct Arrival {
    void* dst;
    std::size_t at, bytes;
  };
  int ranks_ = 1, rank_ = 0;
  Stream stream_;  // the agreement's
  DeviceBuffer<unsigned long long> scratch_;
  DeviceBuffer<unsigned char> inbox_, outbox_;
  std::size_t half_ = 0, packed_ = 0;
  int parity_ = 0;
  std::vector<Arrival> arrivals_;
};

}  // namespace relax::detail

namespace relax {

//! This PE's parts of a CSR split into `parts` parts dealt to the PEs (`rank_parts(parts,
//! runtime.pes(), runtime.pe())`), on its device, made from those parts alone: `mine` holds them
//! in order, each as `read_matrix_market_part(path, parts, index)` reads it, so no process reads
//! or holds the whole matrix. The PEs all-gather their parts' shapes (rows, columns, exchange
//! lists; no matrix entries) in symmetric memory and each builds the split's layout from them,
//! the layout `split_csr_of_rank` makes from the whole matrix. Collective; `MultiCG<...,
//! Nvshmem>` solves on the result.
//! \throws relax::invalid_argument on every PE, when one holds parts other than its own or the
//!         parts do not fit together.
template <class T>
SplitOperator<CsrPartOperator<T>> split_csr_of_rank(const std::vector<CsrPart<T>>& mine, int parts,
                                                   const NvshmemRuntime& runtime) {
  const detail::DeviceScope on(runtime.device());
  return detail::split_csr_gathered(
      mine, parts, runtime.pes(), runtime.pe(), runtime.device(), [&](const std::vector<std::int64_t>& words) {
        return detail::gather_words(
            words, runtime.pes(), [](std::size_t count) { return detail::symmetric_buffer<std::int64_t>(count); },
            [](const std::int64_t* source, std::int64_t* destination, std::size_t count, cudaStream_t stream) {
              if (const int status = nvshmemx_uint64_fcollect_on_stream(
                      NVSHMEM_TEAM_WORLD, reinterpret_cast<std::uint64_t*>(destination),
                      reinterpret_cast<const std::uint64_t*>(source), count, stream);
                  status != 0)
                throw nvshmem_error("relax: nvshmemx_uint64_fcollect_on_stream failed with status " +
                                    std::to_string(status));
            });
      });
}

}  // namespace relax
