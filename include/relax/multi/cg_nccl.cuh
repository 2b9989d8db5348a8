#pragma once
//! \file
//! The NCCL Comm policy of CG on k sub-domains: `MultiCG<Part, Unfused | Pipelined, Nccl>`.
//! One process drives every device of the split through one communicator of one rank per device
//! (`ncclCommInitAll`; the parts on one device share its rank). Per exchange, the halo entries
//! between devices travel in one NCCL group of sends and receives, each on its own device's
//! stream (entries between parts of one device are written by a gather kernel, as with
//! `HostCopy`). Per reduction, every rank all-gathers every part's sums (`ncclAllGather`, no
//! arithmetic in NCCL) and adds them in part order on its GPU, so every GPU holds the same
//! scalars, bit for bit the ones `HostCopy`'s host adds; the host reads the first GPU's.
//!
//! One process per GPU (`Nccl::comm`) is not supported by `MultiCG` yet: the constructor refuses
//! a communicator of the program's. Link `relax::nccl`; `relax::relax` needs no NCCL.

#include <relax/multi/cg.cuh>
#include <relax/multi/nccl.cuh>

#include <cstddef>
#include <string>
#include <vector>

namespace relax::detail {

template <>
struct is_split_collective<Nccl> : std::true_type {};

//! `MultiCG`'s transport over NCCL: one communicator of one rank per device (see the file comment).
template <>
class SplitTransport<Nccl> {
 public:
  //! \throws relax::invalid_argument with a communicator of the program's (`Nccl::comm`).
  SplitTransport(const std::vector<int>& devices, const Nccl& comm) : comms_(devices.size(), nullptr) {
    require(comm.comm == nullptr, "Nccl::comm", "a communicator",
            "none: relax::MultiCG drives every device from one process (one rank per device, its own "
            "communicator); one process per GPU is not supported for CG");
    (void)checked_nccl_version();
    RELAX_NCCL_CHECK(ncclCommInitAll(comms_.data(), static_cast<int>(devices.size()), devices.data()));
  }
  SplitTransport(const SplitTransport&) = delete;
  SplitTransport& operator=(const SplitTransport&) = delete;
  ~SplitTransport() {
    for (ncclComm_t c : comms_)
      if (c != nullptr) (void)ncclCommDestroy(c);
  }

  //! Runs `f` (sends, receives, all-gathers of several ranks) as one NCCL group.
  template <class F>
  void group(F&& f) {
    RELAX_NCCL_CHECK(ncclGroupStart());
    f();
    RELAX_NCCL_CHECK(ncclGroupEnd());
  }

  template <class T>
  void send(const T* data, std::int64_t count, int from, int to, cudaStream_t stream) {
    RELAX_NCCL_CHECK(ncclSend(data, static_cast<std::size_t>(count), nccl_type<T>(), to, comms_[rank(from)], stream));
  }
  template <class T>
  void receive(T* data, std::int64_t count, int at, int from, cudaStream_t stream) {
    RELAX_NCCL_CHECK(ncclRecv(data, static_cast<std::size_t>(count), nccl_type<T>(), from, comms_[rank(at)], stream));
  }
  //! `count` doubles of rank `at` into every rank's `gathered`, in rank order.
  void all_gather(const double* local, double* gathered, std::size_t count, int at, cudaStream_t stream) {
    RELAX_NCCL_CHECK(ncclAllGather(local, gathered, count, ncclFloat64, comms_[rank(at)], stream));
  }

 private:
  static std::size_t rank(int r) { return static_cast<std::size_t>(r); }
  std::vector<ncclComm_t> comms_;
};

}  // namespace relax::detail
