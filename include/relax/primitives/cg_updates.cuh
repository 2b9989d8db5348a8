#pragma once
//! \file
//! The element-wise CG updates, with their scalars read on the device so that no launch waits
//! for the host: the start (r = p = b − Ax), y += ±(num/den)·x and p = r + (num/den)·p with the
//! breakdown checks, and r = b − Ax. Each takes a status word: a step that is not usable leaves
//! its vector alone and says why. The fused CG kernels (`relax/solver/cg_kernels.cuh`) use the
//! same statuses.

#include <algorithm>
#include <cstdint>

namespace relax::detail {

//! Status of a CG solve on the device.
//! `cg_drift`: Pipelined's recurrence gave pᵀAp ≤ 0, which the host checks on p and A p.
//! `cg_gap`: Pipelined's checkpoint found its residual too far from b − A x
//! (`CgOptions::switch_gap`); the host goes on with standard CG.
//! `cg_barrier_failed`: a persistent kernel's grid barrier did not complete in time; the host
//! throws `relax::device_loop_error`.
enum : int { cg_ok = 0, cg_breakdown = 1, cg_non_finite = 2, cg_drift = 3, cg_gap = 4, cg_barrier_failed = 5 };

//! r = p = b − ax.
template <class T>
__global__ void cg_start(std::int64_t n, const T* __restrict__ b, const T* __restrict__ ax,
                         T* __restrict__ r, T* __restrict__ p) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride)
    p[k] = r[k] = b[k] - ax[k];
}

//! y += step · v over a grid-stride loop (the body of `cg_axpy`, shared by the split CG).
template <class T>
__device__ void axpy_range(std::int64_t n, T step, const T* __restrict__ v, T* __restrict__ y) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride)
    y[k] += step * v[k];
}

//! p = r + b · p over a grid-stride loop (the body of `cg_xpay`, shared by the split CG).
template <class T>
__device__ void xpay_range(std::int64_t n, T b, const T* __restrict__ r, T* __restrict__ p) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride)
    p[k] = r[k] + b * p[k];
}

//! y += sign · (num / den) · v, unless the step is not usable: then y is left alone and the
//! status says why (den ≤ 0: breakdown; a non-finite scalar: non-finite).
template <class T>
__global__ void cg_axpy(std::int64_t n, const double* num, const double* den, double sign,
                        const T* __restrict__ v, T* __restrict__ y, int* status) {
  const double a = *num, d = *den;
  const double alpha = a / d;
  if (!(d > 0.0) || !isfinite(alpha) || *status != cg_ok) {
    if (blockIdx.x == 0 && threadIdx.x == 0 && *status == cg_ok)
      *status = isfinite(a) && isfinite(d) ? cg_breakdown : cg_non_finite;
    return;
  }
  axpy_range(n, static_cast<T>(sign * alpha), v, y);
}

//! p = r + (rr_next / rr) p.
template <class T>
__global__ void cg_xpay(std::int64_t n, const double* rr_next, const double* rr, const T* __restrict__ r,
                        T* __restrict__ p, int* status) {
  if (*status != cg_ok) return;
  const double beta = *rr > 0.0 ? *rr_next / *rr : 0.0;
  if (!isfinite(beta)) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *status = cg_non_finite;
    return;
  }
  xpay_range(n, static_cast<T>(beta), r, p);
}

//! Blocks of 256 threads for an element-wise kernel over n values (grid-stride beyond 65535).
inline unsigned vector_blocks(std::int64_t n) {
  return static_cast<unsigned>(std::min<std::int64_t>((n + 255) / 256, 65535));
}

//! r = b − ax.
template <class T>
__global__ void cg_residual(std::int64_t n, const T* __restrict__ b, const T* __restrict__ ax, T* __restrict__ r) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride)
    r[k] = b[k] - ax[k];
}

}  // namespace relax::detail
