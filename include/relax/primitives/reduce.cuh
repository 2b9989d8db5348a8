#pragma once
//! \file
//! Block- and grid-level sums shared by the dot products and the fused CG kernels, written to be
//! deterministic: a fixed grid of `dot_blocks` blocks (or a persistent kernel's own fixed grid),
//! `cub::BlockReduce` inside a block, and the blocks' partials added in block order.
//!
//! - `block_sum`: a block's sum, in thread 0;
//! - `finish_sum` / `finish_dot`: the last block to arrive adds every block's partial and hands
//!   the total on (one kernel per reduction, no second launch);
//! - `finish_sums2`: two sums through one arrival (a fused multi-dot's last step);
//! - `ordered_sum`: every block adds the partials itself, after a grid-wide barrier (persistent
//!   kernels, where all blocks must take the same decision).

#include <cub/block/block_reduce.cuh>
#include <cuda/atomic>

namespace relax::detail {

//! Threads per block of the reductions.
inline constexpr int dot_block = 256;
//! Blocks of a dot product. Fixed, not taken from the device: the blocks' partials are summed in
//! block order, so the count decides the bits of every dot product, and a fixed count gives the
//! same bits on every GPU. 528 (4 per SM of the H200's 132) was enough to reach memory bandwidth
//! there. The persistent kernels size their grids from the occupancy API and the device's SM
//! count instead.
inline constexpr int dot_blocks = 528;

//! Sums the blocks' partials in block order once all blocks have written theirs, and hands the
//! total to `write` in thread 0 of the last block. Called by every thread of every block with the
//! block's partial in thread 0. `write` runs after every block has arrived, so it may update
//! values that all blocks read when they started.
template <class Write>
__device__ void finish_sum(double partial, double* partials, unsigned* arrivals, Write write) {
  using Reduce = cub::BlockReduce<double, dot_block>;
  __shared__ typename Reduce::TempStorage storage;
  __shared__ bool last;
  // Every thread of the block is done reading what `write` may change before the block arrives.
  __syncthreads();
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = partial;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> count(*arrivals);
    // acq_rel: this block's partial is visible to the last block, and the last block sees all.
    last = count.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  double sum = 0.0;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) sum += __ldcg(partials + b);  // not via L1
  const double total = Reduce(storage).Sum(sum);
  if (threadIdx.x == 0) {
    write(total);
    *arrivals = 0;  // ready for the next reduction on the same workspace
  }
}

//! `finish_sum` that stores the total in `*out`.
__device__ inline void finish_dot(double partial, double* partials, unsigned* arrivals, double* out) {
  finish_sum(partial, partials, arrivals, [out](double total) { *out = total; });
}

//! Block sum of one double per thread (block of `dot_block` threads).
__device__ inline double block_sum(double v) {
  using Reduce = cub::BlockReduce<double, dot_block>;
  __shared__ typename Reduce::TempStorage storage;
  return Reduce(storage).Sum(v);
}

//! `finish_sum` for two sums at once: each block passes its two partials; `partials` holds
//! 2 × gridDim.x values (the second sums after the first). `write(first, second)` gets both
//! totals, summed in block order, once every block has arrived.
template <class Write>
__device__ void finish_sums2(double first, double second, double* partials, unsigned* arrivals, Write write) {
  if (threadIdx.x == 0) partials[gridDim.x + blockIdx.x] = second;  // published by finish_sum's release
  finish_sum(first, partials, arrivals, [partials, write](double total_first) {
    double total_second = 0.0;
    for (unsigned b = 0; b < gridDim.x; ++b) total_second += __ldcg(partials + gridDim.x + b);
    write(total_first, total_second);
  });
}

//! Thread 0's `v`, in every thread of the block (block-level).
template <class V>
__device__ V from_thread0(const V& v) {
  __shared__ V slot;
  if (threadIdx.x == 0) slot = v;
  __syncthreads();
  const V out = slot;
  __syncthreads();  // `slot` is reused by the next call
  return out;
}

//! Sum of `count` partials in index order, the same in every block that calls it (after a grid
//! barrier). Reads through L2: the partials were written by other SMs.
__device__ inline double ordered_sum(const double* partials, unsigned count) {
  double v = 0.0;
  for (unsigned b = threadIdx.x; b < count; b += blockDim.x) v += __ldcg(partials + b);
  return from_thread0(block_sum(v));
}

//! Two sums carried together (a fused two-term reduction).
struct SumPair {
  double first = 0.0, second = 0.0;
};

//! A block's two sums at once (one reduction, not two), in thread 0. Blocks of `dot_block`.
__device__ inline SumPair block_sum2(SumPair v) {
  using Reduce = cub::BlockReduce<SumPair, dot_block>;
  __shared__ typename Reduce::TempStorage storage;
  return Reduce(storage).Reduce(v, [](const SumPair& a, const SumPair& b) {
    return SumPair{a.first + b.first, a.second + b.second};
  });
}

//! `ordered_sum` of two arrays of `count` partials each (`first`, `second`) in one block
//! reduction: every block gets the same two totals. Call after a grid-wide barrier.
__device__ inline SumPair ordered_sum2(const double* first, const double* second, unsigned count) {
  SumPair v;
  for (unsigned b = threadIdx.x; b < count; b += blockDim.x) {
    v.first += __ldcg(first + b);
    v.second += __ldcg(second + b);
  }
  return from_thread0(block_sum2(v));
}

}  // namespace relax::detail
