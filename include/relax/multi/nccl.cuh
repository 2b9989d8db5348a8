#pragma once
//! \file
//! The NCCL Comm policy of the host-controlled multi-sub-domain solver, the library baseline of
//! the multi-GPU study: `MultiSolver<S, Strategy, Nccl>` runs as with `HostCopy` (rounds of up to
//! H sweeps, a launch per slab and round, a check every M sweeps with ρ the max over the slabs),
//! but after every round the halos travel in one NCCL group: each slab sends the H rows next to
//! each neighbour and receives that neighbour's, on its own stream (so its next round follows its
//! receives, and a neighbour's next round its sends, in stream order; no events). One process
//! drives the k GPUs through one communicator of k ranks (`ncclCommInitAll`), rank s holding slab s.
//!
//! One process per GPU: give the solver a communicator of one rank per process (`Nccl::comm`,
//! made by the program from its own bootstrap: an MPI broadcast of `ncclGetUniqueId`'s id and
//! `ncclCommInitRank`, as NCCL's documentation shows). Rank r then holds slab r of as many slabs
//! as the communicator has ranks, on the communicator's device (the one entry of `devices`); the
//! halos go between ranks as above, and ‖b‖ and every check's norm are the max over the ranks (an
//! all-reduce of the norms' bits, so every rank takes the same decision from the same double; max
//! is order-free). The solver does not own that communicator.
//!
//! NCCL runs one rank per GPU: the devices must be distinct (several sub-domains on one GPU:
//! `HostCopy` or `PeerStore`). On one GPU this is one rank, one slab and no exchange. The
//! component is optional: link `relax::nccl` (CMake finds `nccl.h` and `libnccl`); `relax::relax`
//! needs neither. The host API used here (group, send, receive, all-reduce) is the same across
//! NCCL 2.x; the version loaded is checked at the first communicator (major version 2).
//!
//! The CPU-free solver over NCCL's device API (symmetric windows, LSA pointers, an LSA barrier):
//! `multi/nccl_device.cuh`.

#include <relax/multi/host_copy.cuh>

#include <nccl.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace relax {

//! The Comm policy whose halos NCCL sends and receives (see the file comment).
struct Nccl {
  //! A communicator of one rank per process, each process holding the slab of its rank (null:
  //! this process drives every GPU of the solve through a communicator of its own). Not owned.
  ncclComm_t comm = nullptr;
  //! The CPU-free solver (`DeviceLoop` strategies, `multi/nccl_device.cuh`) only: one cooperative
  //! launch per sub-domain instead of one per rank (with several sub-domains on a rank, the flags
  //! and the norm board then cross kernels of one GPU as they cross GPUs).
  bool launch_per_subdomain = false;
  //! The CPU-free solver only. Test hook: the sub-domain that never raises its flags (−1: none).
  int silent_subdomain = -1;
  std::uint64_t timeout_ns = 20'000'000'000ull;  //!< the CPU-free solver only: the longest any wait lasts
  BlockRoles blocks = BlockRoles::edges_first;    //!< the CPU-free solver only: how a kernel's blocks share the tiles
};

//! An NCCL call failed. `code()` is NCCL's status.
class nccl_error : public std::runtime_error {
 public:
  nccl_error(ncclResult_t code, const std::string& expression)
      : std::runtime_error("relax: NCCL error " + std::to_string(static_cast<int>(code)) + " (" +
                           ncclGetErrorString(code) + ") in " + expression),
        code_(code) {}
  ncclResult_t code() const noexcept { return code_; }

 private:
  ncclResult_t code_;
};

namespace detail {

inline void nccl_check(ncclResult_t code, const char* expression) {
  if (code != ncclSuccess && code != ncclInProgress) throw nccl_error(code, expression);
}
#define RELAX_NCCL_CHECK(call) ::relax::detail::nccl_check((call), #call)

template <>
struct is_host_exchange<Nccl> : std::true_type {};

template <class T>
inline ncclDataType_t nccl_type() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "relax::Nccl: float or double grids");
  return std::is_same_v<T, float> ? ncclFloat32 : ncclFloat64;
}

//! The loaded NCCL's version code (as `NCCL_VERSION_CODE`). \throws relax::unavailable_error when
//! its major version is not 2.
inline int checked_nccl_version() {
  int version = 0;
  RELAX_NCCL_CHECK(ncclGetVersion(&version));
  if (version / 10000 != 2)
    throw unavailable_error("relax::Nccl: the NCCL library loaded is version " + std::to_string(version) +
                            "; relax uses NCCL 2's host API (built against " + std::to_string(NCCL_VERSION_CODE) + ")");
  return version;
}

//! The unsigned integers of NCCL with the width of T (the norms' bits are reduced as those).
template <class T>
inline ncclDataType_t nccl_bits_type() {
  return sizeof(T) == 4 ? ncclUint32 : ncclUint64;
}

//! A program's communicator as this process sees it: its ranks, this process's rank, its device.
struct NcclRank {
  int ranks = 0, rank = 0, device = -1;
};

//! The communicator the windows of a solve are registered with: the program's (not owned) or one
//! made by the solver (one rank on one GPU), destroyed after the last window registered with it.
class NcclCommHandle {
 public:
  NcclCommHandle(ncclComm_t comm, bool owned) : comm_(comm), owned_(owned) {}
  NcclCommHandle(const NcclCommHandle&) = delete;
  NcclCommHandle& operator=(const NcclCommHandle&) = delete;
  ~NcclCommHandle() {
    if (owned_) (void)ncclCommDestroy(comm_);
  }
  ncclComm_t get() const { return comm_; }

 private:
  ncclComm_t comm_;
  bool owned_;
};

//! `comm`'s ranks, rank and device, checked against `devices`: this process's one device, the
//! communicator's (one rank, one GPU per process; `what` names what the process holds).
//! \throws relax::invalid_argument for any other device list.
inline NcclRank nccl_rank_on(ncclComm_t comm, const std::vector<int>& devices, const char* what) {
  NcclRank r;
  RELAX_NCCL_CHECK(ncclCommCount(comm, &r.ranks));
  RELAX_NCCL_CHECK(ncclCommUserRank(comm, &r.rank));
  RELAX_NCCL_CHECK(ncclCommCuDevice(comm, &r.device));
  require(devices.size() == 1 && devices[0] == r.device, "devices", devices.empty() ? -1 : devices[0],
          ("this process's one device, the communicator's (device " + std::to_string(r.device) +
           ") with relax::Nccl::comm: one rank, " + what + ", one GPU per process")
              .c_str());
  return r;
}

template <>
class HaloExchange<Nccl> {
 public:
  //! The slabs this process holds: all (one per device) without `comm.comm`; else the slab of its
  //! rank of as many as the communicator has ranks.
  //! \throws relax::invalid_argument when `devices` is not the communicator's one device.
  template <class T>
  static SlabPlacement<T> held(const Extents&, const std::vector<int>& devices, const Nccl& comm, int) {
    if (comm.comm == nullptr) return {};
    (void)checked_nccl_version();
    const NcclRank r = nccl_rank_on(comm.comm, devices, "one slab");
    SlabPlacement<T> p;
    p.parts = r.ranks;
    p.first = r.rank;
    return p;
  }

  //! Without `comm.comm`, one communicator of `devices.size()` ranks, rank s on `devices[s]`;
  //! with it, that communicator (this process holding the slab of its rank).
  //! \throws relax::invalid_argument when a device repeats.
  HaloExchange(const Decomposition& d, const std::vector<int>& devices, const Nccl& comm)
      : decomposition_(d), comms_(devices.size()), owned_(comm.comm == nullptr) {
    if (!owned_) {
      comms_[0] = comm.comm;
      RELAX_NCCL_CHECK(ncclCommUserRank(comm.comm, &first_));
      return;
    }
    for (std::size_t a = 0; a < devices.size(); ++a)
      for (std::size_t b = a + 1; b < devices.size(); ++b)
        require(devices[a] != devices[b], "devices", devices[b],
                "distinct devices with relax::Nccl (one rank per GPU; several sub-domains on one GPU: relax::HostCopy "
                "or relax::PeerStore)");
    (void)checked_nccl_version();
    RELAX_NCCL_CHECK(ncclCommInitAll(comms_.data(), static_cast<int>(devices.size()), devices.data()));
  }
  HaloExchange(const HaloExchange&) = delete;
  HaloExchange& operator=(const HaloExchange&) = delete;
  ~HaloExchange() {
    if (owned_)
      for (ncclComm_t c : comms_)
        if (c != nullptr) (void)ncclCommDestroy(c);
  }

  void before_round(int, cudaStream_t) {}
  void after_round(int, cudaStream_t) {}

  //! With a communicator of one rank per process, the max over the ranks of `v` (each rank's max
  //! over its slabs): its bits all-reduced with max on `stream` (a norm is ≥ 0 or NaN, so its bits
  //! order as its value, NaN above all, as `collect_max` orders them). Blocks.
  template <class T>
  double global_max(double v, cudaStream_t stream) {
    if (owned_) return v;
    using Bits = arith::bits_t<T>;
    if (bits_.size() == 0) {
      bits_ = DeviceBuffer<unsigned long long>(1);
      host_bits_ = PinnedBuffer<unsigned long long>(1);
    }
    Bits* const device = reinterpret_cast<Bits*>(bits_.data());
    Bits* const host = reinterpret_cast<Bits*>(host_bits_.data());
    *host = arith::abs_bits(static_cast<T>(v));
    RELAX_CUDA_CHECK(cudaMemcpyAsync(device, host, sizeof(Bits), cudaMemcpyHostToDevice, stream));
    RELAX_NCCL_CHECK(ncclAllReduce(device, device, 1, nccl_bits_type<T>(), ncclMax, comms_[0], stream));
    RELAX_CUDA_CHECK(cudaMemcpyAsync(host, device, sizeof(Bits), cudaMemcpyDeviceToHost, stream));
    RELAX_CUDA_CHECK(cudaStreamSynchronize(stream));
    return static_cast<double>(arith::from_bits<T>(*host));
  }

  //! One group: every slab sends its edge rows to each neighbour and receives theirs.
  template <class T, class Streams>
  void exchange(DistributedGrid<T>& u, Streams&& stream_of) {
    const GridLayout& l = u.part(0).layout();
    const std::int64_t line = l.rank() == 3 ? l.plane : l.pitch;  // elements of one storage row (plane)
    RELAX_NCCL_CHECK(ncclGroupStart());
    for (int s = first_; s < first_ + static_cast<int>(comms_.size()); ++s) {  // the held slabs (rank s each)
      const DeviceScope scope(u.device(s));
      const Slab& me = decomposition_[s];
      const ncclComm_t comm = comms_[static_cast<std::size_t>(s - first_)];
      const cudaStream_t stream = stream_of(s);
      auto pair = [&](const RowRange& send, const RowRange& receive, int peer) {
        const auto count = static_cast<std::size_t>(send.count * line);
        RELAX_NCCL_CHECK(ncclSend(u.part(s).data() + me.storage_row(send.first) * line, count, nccl_type<T>(), peer,
                                  comm, stream));
        RELAX_NCCL_CHECK(ncclRecv(u.part(s).data() + me.storage_row(receive.first) * line, count, nccl_type<T>(), peer,
                                  comm, stream));
      };
      if (me.has_prev) pair(me.send_to_prev(), me.receive_from_prev(), s - 1);
      if (me.has_next) pair(me.send_to_next(), me.receive_from_next(), s + 1);
    }
    RELAX_NCCL_CHECK(ncclGroupEnd());
  }

 private:
  Decomposition decomposition_;
  std::vector<ncclComm_t> comms_;  // of the held slabs
  bool owned_ = true;              // made here (one process, every GPU), or the program's
  int first_ = 0;                  // the first held slab (this process's rank)
  DeviceBuffer<unsigned long long> bits_;  // the all-reduced norm's bits (a float's in the low word's place)
  PinnedBuffer<unsigned long long> host_bits_;
};

}  // namespace detail

}  // namespace relax
