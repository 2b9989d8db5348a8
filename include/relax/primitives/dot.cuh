#pragma once
//! \file
//! Dot products and element-wise updates shared by the CG variants.
//!
//! `dot` reduces in one kernel and deterministically: every block sums a fixed set of elements
//! (a grid-stride loop over a grid of fixed size), writes its partial sum, and the last block to
//! finish adds the partials in block order (the threadfence-reduction pattern, with
//! `cub::BlockReduce` inside blocks). The same inputs give the same bits on every run, so CG's
//! iteration counts are reproducible. Sums are accumulated in double for float and double data.

#include <relax/core/buffer.hpp>
#include <relax/core/cuda_check.hpp>

#include <cub/block/block_reduce.cuh>
#include <cuda/atomic>

#include <algorithm>
#include <cstdint>

namespace relax {

namespace detail {

inline constexpr int dot_block = 256;
//! Blocks of a dot product: 4 per SM of a 132-SM H200, enough to reach memory bandwidth; the
//! count must be fixed for the result to be deterministic.
inline constexpr int dot_blocks = 528;

//! Sums the blocks' partials in block order once all blocks have written theirs, and hands the
//! total to `write` in thread 0 of the last block. Called by every thread of every block with the
//! block's partial in thread 0. `write` runs after every block has arrived, so it may update
//! values that all blocks read when they started.
template <class Write>
__device__ void finish_sum(double block_sum, double* partials, unsigned* arrivals, Write write) {
  using Reduce = cub::BlockReduce<double, dot_block>;
  __shared__ typename Reduce::TempStorage storage;
  __shared__ bool last;
  // Every thread of the block is done reading what `write` may change before the block arrives.
  __syncthreads();
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block_sum;
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
__device__ inline void finish_dot(double block_sum, double* partials, unsigned* arrivals, double* out) {
  finish_sum(block_sum, partials, arrivals, [out](double total) { *out = total; });
}

template <class T>
__global__ void __launch_bounds__(dot_block)
    dot_kernel(std::int64_t n, const T* __restrict__ x, const T* __restrict__ y, double* partials,
               unsigned* arrivals, double* out) {
  using Reduce = cub::BlockReduce<double, dot_block>;
  __shared__ typename Reduce::TempStorage storage;
  double sum = 0.0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride)
    sum += static_cast<double>(x[k]) * static_cast<double>(y[k]);
  const double block_sum = Reduce(storage).Sum(sum);
  finish_dot(block_sum, partials, arrivals, out);
}

}  // namespace detail

//! Scratch of the dot products: one partial per block and an arrival counter.
class DotWorkspace {
 public:
  DotWorkspace() : partials_(detail::dot_blocks), arrivals_(1) {
    RELAX_CUDA_CHECK(cudaMemset(arrivals_.data(), 0, sizeof(unsigned)));
    // cudaMemset is asynchronous and the dots run on non-blocking streams: finish it here.
    RELAX_CUDA_CHECK(cudaDeviceSynchronize());
  }
  double* partials() { return partials_.data(); }
  unsigned* arrivals() { return arrivals_.data(); }

 private:
  DeviceBuffer<double> partials_;
  DeviceBuffer<unsigned> arrivals_;
};

//! *out = Σ x[k] y[k] (in double), on `stream`, deterministic. Dots that share a workspace must be
//! ordered on one stream.
template <class T>
void dot(std::int64_t n, const T* x, const T* y, double* out, DotWorkspace& ws, cudaStream_t stream) {
  detail::dot_kernel<<<detail::dot_blocks, detail::dot_block, 0, stream>>>(n, x, y, ws.partials(),
                                                                         ws.arrivals(), out);
  RELAX_CUDA_CHECK_LAUNCH();
}

}  // namespace relax
