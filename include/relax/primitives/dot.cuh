#pragma once
//! \file
//! Dot products of the CG variants (the reduction steps are in `reduce.cuh`).
//!
//! `dot` reduces in one kernel and deterministically: every block sums a fixed set of elements
//! (a grid-stride loop over a grid of fixed size), writes its partial sum, and the last block to
//! finish adds the partials in block order (the threadfence-reduction pattern, with
//! `cub::BlockReduce` inside blocks). The same inputs give the same bits on every run, so CG's
//! iteration counts are reproducible. Sums are accumulated in double for float and double data.

#include <relax/core/buffer.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/primitives/reduce.cuh>

#include <algorithm>
#include <cstdint>

namespace relax {

namespace detail {

template <class T>
__global__ void __launch_bounds__(dot_block)
    dot_kernel(std::int64_t n, const T* __restrict__ x, const T* __restrict__ y, double* partials,
               unsigned* arrivals, double* out) {
  double sum = 0.0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride)
    sum += static_cast<double>(x[k]) * static_cast<double>(y[k]);
  finish_dot(block_sum(sum), partials, arrivals, out);
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
