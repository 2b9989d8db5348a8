#pragma once
//! \file
//! Element-wise vector operations shared by Jacobi and CG.

#include <relax/core/cuda_check.hpp>
#include <relax/core/arith.hpp>

#include <algorithm>
#include <cstdint>

namespace relax {

namespace detail {
template <class T>
__global__ void add_kernel(std::int64_t count, const T* __restrict__ x, const T* __restrict__ y,
                           T* __restrict__ out) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < count;
       k += stride)
    out[k] = arith::add(x[k], y[k]);
}
}  // namespace detail

//! out[k] = x[k] + y[k] for k < count, rounded to nearest (the same bits as the host's x + y).
template <class T>
void add(std::int64_t count, const T* x, const T* y, T* out, cudaStream_t stream) {
  if (count <= 0) return;
  constexpr int threads = 256;
  // Enough blocks to fill any current GPU several times over; the loop covers the rest.
  const std::int64_t blocks = std::min<std::int64_t>((count + threads - 1) / threads, 65536);
  detail::add_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(count, x, y, out);
  RELAX_CUDA_CHECK_LAUNCH();
}

}  // namespace relax
