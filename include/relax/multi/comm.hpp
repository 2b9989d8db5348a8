#pragma once
//! \file
//! The Comm policies of the solvers on several sub-domains that need no library beyond CUDA:
//! `HostCopy` (the host queues the halo copies) and `PeerStore` (kernels store halos straight
//! into the neighbours' memory). NCCL's and NVSHMEM's are in `multi/nccl.cuh` and
//! `multi/nvshmem.cuh`. Jacobi (`MultiSolver`, `multi/distributed.cuh`) and CG (`MultiCG`,
//! `multi/cg.cuh`) take them.

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
};

}  // namespace relax
