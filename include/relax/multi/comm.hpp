#pragma once
//! \file
//! The Comm policies of the solvers on several sub-domains that need no library beyond CUDA:
//! `HostCopy` (the host queues the halo copies) and `PeerStore` (kernels store halos straight
//! into the neighbours' memory). NCCL's and NVSHMEM's are in `multi/nccl.cuh` and
//! `multi/nvshmem.cuh`. Jacobi (`MultiSolver`, `multi/distributed.cuh`) and CG (`MultiCG`,
//! `multi/cg.cuh`) take them.

#include <relax/core/error.hpp>

#include <cstdint>

namespace relax {

//! The Comm policy of the host-controlled multi-sub-domain solver: the host queues the halo copies
//! after every round of sweeps (`multi/host_copy.cuh`).
struct HostCopy {
  //! Overlap the exchange with interior compute (Sync only): each slab sweeps its edge rows
  //! first, the copies start as soon as those are done, and the rest of the slab is swept
  //! meanwhile on a second stream. Off: a round is one launch per slab, then the copies.
  bool overlap = false;
};

//! How the blocks of a CPU-free multi-sub-domain Jacobi kernel share a sweep's tiles, of which
//! those at a sub-domain edge are swept, stored into the neighbour and signalled first. Roles
//! are the `DeviceLoop<Sync>` kernels' (`PeerStore`, `Nccl`, `Nvshmem`); the streamed kernel
//! refuses them, and CG takes only the default.
enum class BlockRoles {
  //! Every block takes tiles in turn, the edge tiles first: the first blocks of the grid take
  //! them (and wait for the neighbours' flags), then go on to interior tiles like the others.
  edges_first,
  //! Thread-block specialisation: the first blocks of the grid (boundary blocks, as many as the
  //! edge tiles' share of the work, at least one) take only the edge tiles, the others only the
  //! interior tiles, so a neighbour that is late holds up the boundary blocks alone while the
  //! interior is swept. Same iterates, sweeps and checks.
  specialised,
};

//! The Comm policy of the CPU-free multi-sub-domain solver (`multi/peer_store.cuh`): the kernel
//! stores its edge rows straight into the neighbours' halos (through peer pointers across
//! devices) and releases a system-scope flag carrying the sweep count, which the neighbour
//! acquires.
struct PeerStore {
  //! One cooperative launch per sub-domain, even where several share a device (their blocks then
  //! split it). Off: one launch per device, covering all of its sub-domains. On, with several
  //! sub-domains on one GPU, the flags and the global reduction cross kernels as they cross GPUs;
  //! CUDA does not promise that separate launches are resident together, so a wait that outlives
  //! the timeout ends the solve with an error instead of a hang.
  bool launch_per_subdomain = false;
  //! Without `launch_per_subdomain`: the kernels each device's sub-domains are split into
  //! (consecutive runs of them, as even as can be; at most one per sub-domain). 1: one kernel per
  //! device. More than 1 puts flags between some neighbours of one device and none between others.
  int kernels_per_device = 1;
  //! Test hook: the sub-domain that never raises its flags (−1: none), so its neighbours' waits
  //! time out and the solve ends with an error naming it.
  int silent_subdomain = -1;
  std::uint64_t timeout_ns = 20'000'000'000ull;  //!< the longest any wait of the kernels lasts
  BlockRoles blocks = BlockRoles::edges_first;    //!< how a kernel's blocks share the tiles (Jacobi, Sync)
};

namespace detail {

//! A Comm's `timeout_ns`: a time limit for every wait, more than 0 and at most an hour.
inline std::uint64_t checked_timeout(std::uint64_t timeout_ns) {
  require(timeout_ns > 0 && timeout_ns <= 3'600'000'000'000ull, "comm.timeout_ns", timeout_ns,
          "a time limit for every wait, more than 0 and at most an hour");
  return timeout_ns;
}

//! What `MultiCG` reads of Comm's settings (`read`, one specialisation per Comm): the CPU-free
//! variants the time limit of their waits (returned; 0 for the host-controlled Comms); the
//! settings only the Jacobi solvers honour (`HostCopy::overlap`, `PeerStore`'s
//! `launch_per_subdomain`, `kernels_per_device` and `silent_subdomain`, ...) are refused unless
//! left at their defaults, rather than ignored. `read` throws relax::invalid_argument naming the
//! setting.
template <class Comm>
struct SplitCgSettings;

//! The CPU-free Jacobi solvers' check of a Comm's `blocks`: boundary blocks apart are the Sync
//! kernel's; the streamed kernel (`streamed`) takes only `BlockRoles::edges_first`.
inline void require_block_roles(BlockRoles blocks, bool streamed) {
  require(!streamed || blocks == BlockRoles::edges_first, "comm.blocks", "BlockRoles::specialised",
          "BlockRoles::edges_first with DeviceLoop<TemporalBlock<D, ColumnStream>> (its blocks take the band segments "
          "first; boundary blocks apart are DeviceLoop<Sync>'s)");
}

//! CG refuses a Comm's `blocks` other than the default (the Jacobi kernels' schedule).
inline void require_edges_first(BlockRoles blocks) {
  require(blocks == BlockRoles::edges_first, "comm.blocks", "BlockRoles::specialised",
          "BlockRoles::edges_first for CG (the roles of the CPU-free Jacobi kernels' blocks)");
}

template <>
struct SplitCgSettings<HostCopy> {
  static std::uint64_t read(const HostCopy& c) {
    require(!c.overlap, "comm.overlap", "true",
            "false for CG (MultiCG's exchange does not overlap; HostCopy::overlap is the Jacobi solver's)");
    return 0;
  }
};
template <>
struct SplitCgSettings<PeerStore> {
  static std::uint64_t read(const PeerStore& c) {
    require(!c.launch_per_subdomain, "comm.launch_per_subdomain", "true",
            "false for CG (MultiCG's CPU-free variants run one kernel per device)");
    require(c.kernels_per_device == 1, "comm.kernels_per_device", c.kernels_per_device,
            "1 for CG (MultiCG's CPU-free variants run one kernel per device)");
    require(c.silent_subdomain == -1, "comm.silent_subdomain", c.silent_subdomain,
            "-1 for CG (the Jacobi solver's test hook; MultiCG's is set_absent_blocks_for_testing)");
    require_edges_first(c.blocks);
    return checked_timeout(c.timeout_ns);
  }
};

}  // namespace detail
}  // namespace relax
