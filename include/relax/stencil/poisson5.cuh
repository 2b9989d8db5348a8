#pragma once
//! \file
//! `Poisson5Operator<T>`: the matrix-free Poisson operator of CG on the device.

#include <relax/core/cuda_check.hpp>
#include <relax/core/error.hpp>
#include <relax/core/launch.hpp>
#include <relax/stencil/poisson5.hpp>

#include <cstdint>

namespace relax {

namespace detail {
template <class T>
__global__ void poisson5_kernel(std::int64_t n, const T* __restrict__ p, T* __restrict__ q) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const std::int64_t tiles_y = tile_count(n, blockDim.y);
  for (std::int64_t ty = blockIdx.y; ty < tiles_y; ty += gridDim.y) {
    const std::int64_t i = ty * blockDim.y + threadIdx.y;
    if (i < n) q[i * n + j] = poisson5_at(p, n, i, j);
  }
}
}  // namespace detail

//! The rows of the Poisson operator, for kernels that compute (A p)_k themselves (fused CG).
template <class T>
struct Poisson5Rows {
  std::int64_t n;
  //! (A p)_k with p read through `load`.
  template <class Load>
  __device__ T row(std::int64_t k, const Load& load) const {
    return poisson5_row<T>(n, k / n, k % n, load);
  }
};

template <class T>
class Poisson5Operator {
 public:
  using value_type = T;
  using rows_type = Poisson5Rows<T>;
  explicit Poisson5Operator(std::int64_t n) : n_(n) {
    detail::require(n >= 1, "n", n, "at least 1 unknown per side");
  }
  std::int64_t size() const { return n_ * n_; }
  std::int64_t n() const { return n_; }
  //! The rows of A, by value, for device code.
  rows_type rows() const { return {n_}; }

  //! q = A p on `stream`.
  void apply(const T* p, T* q, cudaStream_t stream) const {
    detail::poisson5_kernel<<<detail::tile_grid(n_, n_, 32, 8), dim3(32, 8), 0, stream>>>(n_, p, q);
    RELAX_CUDA_CHECK_LAUNCH();
  }

 private:
  std::int64_t n_;
};

}  // namespace relax
