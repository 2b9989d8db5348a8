#pragma once
//! \file
//! The matrix-free 5-point Poisson operator of CG, written once for host and device:
//!
//!     (A p)(i, j) = 4 p(i, j) − p(i−1, j) − p(i+1, j) − p(i, j−1) − p(i, j+1)
//!
//! on n × n unknowns stored row-major, with zero Dirichlet values outside.

#include <relax/config.hpp>
#include <relax/stencil/arithmetic.hpp>

#include <cstdint>

namespace relax {

//! (A p) at unknown (i, j), in round-to-nearest operations (the same bits on host and device).
template <class T>
RELAX_HOST_DEVICE inline T poisson5_at(const T* p, std::int64_t n, std::int64_t i, std::int64_t j) {
  const std::int64_t k = i * n + j;
  T v = arith::mul(T(4), p[k]);
  if (i > 0) v = arith::sub(v, p[k - n]);
  if (i + 1 < n) v = arith::sub(v, p[k + n]);
  if (j > 0) v = arith::sub(v, p[k - 1]);
  if (j + 1 < n) v = arith::sub(v, p[k + 1]);
  return v;
}

}  // namespace relax
