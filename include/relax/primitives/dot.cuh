#pragma once
//! \file
//! Dot products of the CG variants (the reduction steps are in `reduce.cuh`).
//!
//! `dot` reduces in one kernel and deterministically: every block sums a fixed set of elements
//! (a grid-stride loop over a grid of fixed size), writes its partial sum, and the last block to
//! finish adds the partials in block order (the threadfence-reduction pattern, with
//! `cub::BlockReduce` inside blocks). The same inputs give the same bits on every run, so CG's
//! iteration counts are reproducible. Sums are accumulated in double for float and double data.

#include <relax/control/cg_report.hpp>
#include <relax/core/buffer.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/core/error.hpp>
#include <relax/primitives/max_norm.cuh>
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

//! Folds max |x[k]| (as `abs_bits`) into *out, which starts at 0. Launch: `dot_blocks` × `dot_block`.
template <class T>
__global__ void __launch_bounds__(dot_block)
    max_abs_kernel(std::int64_t n, const T* __restrict__ x, arith::bits_t<T>* out) {
  arith::bits_t<T> largest = 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    const arith::bits_t<T> v = arith::abs_bits(x[k]);
    largest = v > largest ? v : largest;
  }
  block_max_into<dot_block, 1>(largest, out);
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

//! Refuses the device vector `b` of `n` values where its 2-norm `rhs_norm` (from `dot`)
//! underflowed to 0 while b is not 0, as the reference backend does (`reference/cg.hpp`). Costs
//! nothing unless `rhs_norm` is 0; then one pass over b (its largest |b[k]| is what the error
//! names), and the host waits for `stream`.
template <class T>
void require_rhs_norm_representable(double rhs_norm, std::int64_t n, const T* b, cudaStream_t stream) {
  if (rhs_norm != 0.0) return;
  MaxNormSlot<T> largest;
  largest.reset(stream);
  detail::max_abs_kernel<<<detail::dot_blocks, detail::dot_block, 0, stream>>>(n, b, largest.target());
  RELAX_CUDA_CHECK_LAUNCH();
  const T value = largest.read(stream);
  detail::require(value == T(0), "b", static_cast<double>(value), detail::rhs_norm_underflow_expected);
}

}  // namespace relax
