#pragma once
//! \file
//! The matrix-free 5-point Poisson operator of CG, written once for host and device:
//!
//!     (A p)(i, j) = 4 p(i, j) − p(i−1, j) − p(i+1, j) − p(i, j−1) − p(i, j+1)
//!
//! on n × n unknowns stored row-major, with zero Dirichlet values outside.

#include <relax/config.hpp>
#include <relax/core/arith.hpp>

#include <cstdint>

namespace relax {

//! (A p) at unknown (i, j) with p read through `load(k)` (k = i n + j), in round-to-nearest
//! operations (the same bits on host and device). Fused CG kernels load p as r + β p_old.
template <class T, class Load>
RELAX_HOST_DEVICE inline T poisson5_row(std::int64_t n, std::int64_t i, std::int64_t j, const Load& load) {
  const std::int64_t k = i * n + j;
  T v = arith::mul(T(4), load(k));
  if (i > 0) v = arith::sub(v, load(k - n));
  if (i + 1 < n) v = arith::sub(v, load(k + n));
  if (j > 0) v = arith::sub(v, load(k - 1));
  if (j + 1 < n) v = arith::sub(v, load(k + 1));
  return v;
}

//! Reads a vector element: the `load` of `poisson5_row` for a plain array.
template <class T>
struct ArrayLoad {
  const T* p;
  RELAX_HOST_DEVICE T operator()(std::int64_t k) const { return p[k]; }
};

//! (A p) at unknown (i, j).
template <class T>
RELAX_HOST_DEVICE inline T poisson5_at(const T* p, std::int64_t n, std::int64_t i, std::int64_t j) {
  return poisson5_row<T>(n, i, j, ArrayLoad<T>{p});
}

}  // namespace relax
