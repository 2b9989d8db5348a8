#pragma once
//! \file
//! `StencilOperator<S>`: any stencil of the concept as CG's matrix-free operator on the device
//! (`value_type`, `size()`, `apply(p, q, stream)`, `rows()` for the fused variants), and
//! `Poisson5Operator<T>` / `Poisson7Operator<T>`, the Poisson operators on n × n (× n) unknowns.

#include <relax/core/cuda_check.hpp>
#include <relax/core/error.hpp>
#include <relax/core/launch.hpp>
#include <relax/stencil/operator.hpp>
#include <relax/stencil/poisson.hpp>

#include <algorithm>
#include <cstdint>

namespace relax {

namespace detail {
//! q = A p: threads along x, blocks walk the rows (y) and planes (z) of the box, with no integer
//! division (a 64-bit division per row cost 10% of Unfused CG's iteration at 4096², H200).
template <class S, class T>
__global__ void stencil_apply_kernel(StencilRows<S> a, const T* __restrict__ p, T* __restrict__ q) {
  const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x >= a.nx) return;
  for (std::int64_t z = blockIdx.z; z < a.nz; z += gridDim.z)
    for (std::int64_t y = static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; y < a.ny;
         y += static_cast<std::int64_t>(gridDim.y) * blockDim.y)
      q[(z * a.ny + y) * a.nx + x] = a.row_at(x, y, z, ArrayLoad<T>{p});
}
}  // namespace detail

template <class S>
class StencilOperator {
 public:
  using value_type = typename S::value_type;
  using rows_type = StencilRows<S>;

  //! The matrix of `s` on the unknowns of box `e`.
  StencilOperator(const S& s, const Extents& e) : rows_(stencil_rows(s, e)) {}

  std::int64_t size() const { return rows_.size(); }
  //! The rows of A, by value, for device code.
  rows_type rows() const { return rows_; }

  //! q = A p on `stream`.
  void apply(const value_type* p, value_type* q, cudaStream_t stream) const {
    const dim3 block(32, 8);
    const dim3 grid(static_cast<unsigned>(detail::tile_count(rows_.nx, block.x)),
                    static_cast<unsigned>(std::min<std::int64_t>(detail::tile_count(rows_.ny, block.y), 65535)),
                    static_cast<unsigned>(std::min<std::int64_t>(rows_.nz, 65535)));
    detail::stencil_apply_kernel<<<grid, block, 0, stream>>>(rows_, p, q);
    RELAX_CUDA_CHECK_LAUNCH();
  }

 private:
  rows_type rows_;
};

//! The 5-point Poisson operator on n × n unknowns (row-major), zero Dirichlet boundary.
template <class T>
class Poisson5Operator : public StencilOperator<Poisson5<T>> {
 public:
  explicit Poisson5Operator(std::int64_t n)
      : StencilOperator<Poisson5<T>>(Poisson5<T>{}, Extents(detail::checked_side(n), n)),
        n_(n) {}
  std::int64_t n() const { return n_; }

 private:
  std::int64_t n_;
};

//! The 7-point Poisson operator on n × n × n unknowns, zero Dirichlet boundary.
template <class T>
class Poisson7Operator : public StencilOperator<Poisson7<T>> {
 public:
  explicit Poisson7Operator(std::int64_t n)
      : StencilOperator<Poisson7<T>>(Poisson7<T>{}, Extents(detail::checked_side(n), n, n)),
        n_(n) {}
  std::int64_t n() const { return n_; }

 private:
  std::int64_t n_;
};

}  // namespace relax
