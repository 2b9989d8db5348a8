#pragma once
//! \file
//! The kernel of `relax::ClusterResident`: Chronopoulos–Gear CG (the recurrences of
//! `cg_persistent_single`, the same operations on every unknown) run by one thread-block cluster
//! with the whole problem on chip. Each thread keeps x, r, p, s and w of its `M` unknowns in
//! registers for the whole solve; the vector A is applied to (r) is published in each block's
//! shared memory, and a row reads its neighbours there, in whichever block of the cluster owns
//! them (distributed shared memory). No vector touches global memory between the first load and
//! the last store, and the cluster barrier is the hardware's.
//!
//! An iteration has two cluster barriers: r is published, then A r and the block's partial sums
//! (γ = (r, r), δ = (A r, r)) are formed and published, then every block adds the partials in
//! block order (so every block takes the same decision, as in the persistent kernels). A block
//! writes what it publishes only after the barrier that follows the last reads of the previous
//! value, so one copy of each suffices.
//!
//! Bounded waits: a cluster's blocks are co-scheduled by the hardware (the launch fails if they
//! cannot be), so no barrier can wait for a block that is not running.

#include <relax/core/arith.hpp>
#include <relax/primitives/reduce.cuh>
#include <relax/solver/cg_kernels.cuh>
#include <relax/strategy/tuning.hpp>

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>

#include <cstdint>

namespace relax::detail {

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
//! The 32-bit shared::cluster address of `local` (an address in this block's shared memory) in
//! block `rank` of the cluster. 32 bits where a generic pointer (`map_shared_rank`) takes 64:
//! the kernel keeps dozens of these live while its loads are in flight.
__device__ inline std::uint32_t cluster_shared_address(const void* local, unsigned rank) {
  const auto own = static_cast<std::uint32_t>(__cvta_generic_to_shared(local));
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(own), "r"(rank));
  return remote;
}

//! A float or double at a shared::cluster address.
template <class T>
__device__ inline T load_cluster_shared(std::uint32_t address) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "float or double");
  if constexpr (sizeof(T) == 8) {
    double v;
    asm volatile("ld.shared::cluster.f64 %0, [%1];" : "=d"(v) : "r"(address));
    return static_cast<T>(v);
  } else {
    float v;
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(address));
    return static_cast<T>(v);
  }
}
#endif

//! Unknowns a block of the cluster-resident kernel owns at `M` per thread.
template <int M>
inline constexpr std::int64_t cluster_cg_points = std::int64_t{tuning::cg_cluster_threads} * M;

//! A whole CG solve (`ClusterResident`): launch one cluster of `ceil(n / cluster_cg_points<M>)`
//! blocks of `tuning::cg_cluster_threads` threads. Block b owns unknowns [b P, (b + 1) P) with
//! P = `cluster_cg_points<M>`; thread t of it unknowns b P + m · threads + t, m < M. On entry
//! `r0` = b − A x and the state as the other fused variants have it; on exit x holds the
//! iterate and block 0 has written the state back.
template <class T, class Rows, int M>
__global__ void __launch_bounds__(tuning::cg_cluster_threads, 1)
    cg_cluster_resident(Rows a, std::int64_t n, T* __restrict__ x, const T* __restrict__ r0, CgDeviceState* st) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  __trap();  // clusters need sm_90; the host refuses such a device before launching
#else
  namespace cg = cooperative_groups;
  constexpr int threads = tuning::cg_cluster_threads;
  constexpr std::int64_t P = cluster_cg_points<M>;
  using Reduce = cub::BlockReduce<SumPair, threads>;
  __shared__ T published[P];    // this block's unknowns of the vector A is applied to
  __shared__ SumPair partial;   // this block's (γ, δ)
  __shared__ typename Reduce::TempStorage storage;
  const cg::cluster_group cluster = cg::this_cluster();
  const unsigned blocks = cluster.num_blocks();
  const unsigned rank = cluster.block_rank();
  const std::int64_t first = std::int64_t{rank} * P + threadIdx.x;

  // r at unknown j, from the block of the cluster that owns it (n < 2³¹ here: 32-bit offsets).
  auto load = [&](std::int64_t j) -> T {
    const auto u = static_cast<std::uint32_t>(j);
    const std::uint32_t owner = u / static_cast<std::uint32_t>(P), at = u % static_cast<std::uint32_t>(P);
    return load_cluster_shared<T>(cluster_shared_address(published, owner) + at * std::uint32_t{sizeof(T)});
  };
  // The block's partials, then (after the barrier) every block's, added in block order.
  auto all_reduce = [&](SumPair mine) {
    const SumPair block = Reduce(storage).Reduce(mine, [](const SumPair& l, const SumPair& r) {
      return SumPair{l.first + r.first, l.second + r.second};
    });
    if (threadIdx.x == 0) partial = block;
    cluster.sync();
    SumPair total;
    for (unsigned b = 0; b < blocks; ++b) {
      const SumPair v = *cluster.map_shared_rank(&partial, b);
      total.first += v.first;
      total.second += v.second;
    }
    return total;
  };

  CgDeviceState s = *st;
  T xv[M], rv[M], pv[M], sv[M], wv[M];
#pragma unroll
  for (int m = 0; m < M; ++m) {
    const std::int64_t k = first + std::int64_t{m} * threads;
    xv[m] = k < n ? x[k] : T(0);
    rv[m] = k < n ? r0[k] : T(0);
    pv[m] = sv[m] = wv[m] = T(0);
    published[m * threads + threadIdx.x] = rv[m];
  }
  // w = A r of the published r, and the cluster's (r, r) (with `gamma`) and (w, r).
  auto apply_and_reduce = [&](bool gamma) {
    SumPair mine;
#pragma unroll
    for (int m = 0; m < M; ++m) {
      const std::int64_t k = first + std::int64_t{m} * threads;
      if (k >= n) continue;
      wv[m] = a.row(k, load);
      if (gamma) mine.first += static_cast<double>(rv[m]) * static_cast<double>(rv[m]);
      mine.second += static_cast<double>(wv[m]) * static_cast<double>(rv[m]);
    }
    return all_reduce(mine);
  };
  cluster.sync();
  cg_single_start(s, apply_and_reduce(false).second);  // γ = (r, r) is the host's
  double beta = 0.0;
  while (s.status == cg_ok && !cg_done(s)) {
    const bool first_iteration = s.iterations == 0;  // p and s of iteration −1 are 0 (never read)
    const T al = static_cast<T>(s.alpha_prev), be = static_cast<T>(beta);
#pragma unroll
    for (int m = 0; m < M; ++m) {  // as cg_persistent_single, on the registers
      cg_single_update(pv[m], sv[m], rv[m], xv[m], wv[m], al, be, first_iteration);
      published[m * threads + threadIdx.x] = rv[m];  // every read of the last r ended at the last barrier
    }
    cluster.sync();
    if (!cg_single_step(s, apply_and_reduce(true), beta)) break;
  }
  // Every block takes the same decisions, so all arrive here; none leaves while another may
  // still read its partial.
  cluster.sync();
#pragma unroll
  for (int m = 0; m < M; ++m) {
    const std::int64_t k = first + std::int64_t{m} * threads;
    if (k < n) x[k] = xv[m];
  }
  if (rank == 0 && threadIdx.x == 0) *st = s;
#endif
}

}  // namespace relax::detail
