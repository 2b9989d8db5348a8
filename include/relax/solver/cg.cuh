#pragma once
//! \file
//! `relax::CG<Operator, Variant>`: Conjugate Gradient on one GPU for a symmetric positive definite
//! operator (`Poisson5Operator<T>`, `CsrOperator<T>`, or any type with `value_type`, `size()`
//! and `apply(p, q, stream)`).
//!
//! Variants (tags): `Unfused` — one kernel per operation (SpMV, each dot, each vector update), the
//! shape of a cuSPARSE + cuBLAS solver, with the scalars α and β kept on the device. Fused, graph,
//! persistent and pipelined variants are later work.
//!
//! Stopping (see `CgOptions`): ‖r‖₂ ≤ max(rel_tol ‖b‖₂, abs_tol) for the recurrence residual,
//! read back every `check_interval` iterations; the iteration cap. Breakdown — pᵀAp ≤ 0, or a
//! non-finite scalar — freezes x at the last good iterate and is reported at the next check.

#include <relax/core/buffer.hpp>
#include <relax/core/cg_report.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/core/device.hpp>
#include <relax/core/stream.hpp>
#include <relax/primitives/dot.cuh>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace relax {

//! One kernel per operation.
struct Unfused {};

template <class V>
struct is_cg_variant : std::false_type {};
template <>
struct is_cg_variant<Unfused> : std::true_type {};

namespace detail {

enum : int { cg_ok = 0, cg_breakdown = 1, cg_non_finite = 2 };

template <class T>
__global__ void cg_start(std::int64_t n, const T* __restrict__ b, const T* __restrict__ ax,
                         T* __restrict__ r, T* __restrict__ p) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride)
    p[k] = r[k] = b[k] - ax[k];
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
  const T step = static_cast<T>(sign * alpha);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride)
    y[k] += step * v[k];
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
  const T b = static_cast<T>(beta);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride)
    p[k] = r[k] + b * p[k];
}

inline unsigned vector_blocks(std::int64_t n) {
  return static_cast<unsigned>(std::min<std::int64_t>((n + 255) / 256, 65535));
}

}  // namespace detail

template <class Operator, class Variant = Unfused>
class CG {
  static_assert(is_cg_variant<Variant>::value,
                "relax::CG<Operator, Variant>: the second argument (Variant) is not a CG variant "
                "such as relax::Unfused");

 public:
  using value_type = typename Operator::value_type;
  using T = value_type;

  //! \throws relax::unavailable_error without a GPU; relax::invalid_argument for bad options.
  CG(Operator op, CgOptions options = {})
      : op_((require_gpu(), std::move(op))),
        options_((options.validate(), options)),
        r_(static_cast<std::size_t>(op_.size())),
        p_(static_cast<std::size_t>(op_.size())),
        q_(static_cast<std::size_t>(op_.size())),
        scalars_(4),
        status_(1),
        host_(4) {}

  const Operator& op() const { return op_; }
  cudaStream_t stream() const { return stream_.get(); }

  //! Solves A x = b from the initial guess in `x`; `b` and `x` are device arrays of `size()`
  //! values. Blocks until done.
  CgReport solve(const T* b, T* x, cudaStream_t stream) {
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    const std::int64_t n = op_.size();
    double* bb = scalars_.data();
    double* rr = scalars_.data() + 1;
    double* rr_next = scalars_.data() + 2;
    double* pq = scalars_.data() + 3;
    RELAX_CUDA_CHECK(cudaMemsetAsync(status_.data(), 0, sizeof(int), stream));
    op_.apply(x, q_.data(), stream);
    detail::cg_start<<<detail::vector_blocks(n), 256, 0, stream>>>(n, b, q_.data(), r_.data(), p_.data());
    RELAX_CUDA_CHECK_LAUNCH();
    dot(n, b, b, bb, dots_, stream);
    dot(n, r_.data(), r_.data(), rr, dots_, stream);
    CgReport report;
    read_back(bb, rr, stream);
    report.rhs_norm = std::sqrt(host_.data()[0]);
    const double target = std::max(options_.rel_tol * report.rhs_norm, options_.abs_tol);
    auto finish = [&](CgStatus s, double residual_squared) {
      report.status = s;
      report.residual_norm = std::sqrt(residual_squared);
      report.time_ms = std::chrono::duration<double, std::milli>(clock::now() - start).count();
      return report;
    };
    if (!std::isfinite(host_.data()[1])) return finish(CgStatus::non_finite, host_.data()[1]);
    if (std::sqrt(host_.data()[1]) <= target) return finish(CgStatus::converged, host_.data()[1]);
    while (report.iterations < options_.max_iterations) {
      iterate(x, rr, rr_next, pq, stream);
      std::swap(rr, rr_next);
      ++report.iterations;
      if (report.iterations % options_.check_interval != 0 && report.iterations < options_.max_iterations)
        continue;
      const int status = read_back(rr, nullptr, stream);
      const double rr_now = host_.data()[0];
      if (status == detail::cg_breakdown) return finish(CgStatus::breakdown, rr_now);
      if (status == detail::cg_non_finite || !std::isfinite(rr_now)) return finish(CgStatus::non_finite, rr_now);
      if (options_.record_history)
        report.history.push_back({report.iterations, report.rhs_norm > 0 ? std::sqrt(rr_now) / report.rhs_norm
                                                                         : std::sqrt(rr_now)});
      if (std::sqrt(rr_now) <= target) return finish(CgStatus::converged, rr_now);
    }
    return finish(CgStatus::iteration_cap, host_.data()[0]);
  }

  //! Host convenience: uploads `b` and `x`, solves, downloads `x`.
  CgReport solve(const std::vector<T>& b, std::vector<T>& x) {
    const std::size_t n = static_cast<std::size_t>(op_.size());
    detail::require(b.size() == n, "b", b.size(), "one value per unknown of the operator");
    detail::require(x.size() == n, "x", x.size(), "one value per unknown of the operator");
    DeviceBuffer<T> db(n), dx(n);
    RELAX_CUDA_CHECK(cudaMemcpy(db.data(), b.data(), db.bytes(), cudaMemcpyHostToDevice));
    RELAX_CUDA_CHECK(cudaMemcpy(dx.data(), x.data(), dx.bytes(), cudaMemcpyHostToDevice));
    const CgReport report = solve(db.data(), dx.data(), stream_.get());
    RELAX_CUDA_CHECK(cudaMemcpy(x.data(), dx.data(), dx.bytes(), cudaMemcpyDeviceToHost));
    return report;
  }

 private:
  static bool require_gpu() {
    if (device_count() == 0)
      throw unavailable_error("relax::CG needs a CUDA device and none is present; use "
                              "relax::reference::cg instead");
    return true;
  }

  // One unfused iteration: q = A p, pq = p·q, x += α p, r −= α q, rr_next = r·r, p = r + β p.
  void iterate(T* x, double* rr, double* rr_next, double* pq, cudaStream_t stream) {
    const std::int64_t n = op_.size();
    const unsigned blocks = detail::vector_blocks(n);
    op_.apply(p_.data(), q_.data(), stream);
    dot(n, p_.data(), q_.data(), pq, dots_, stream);
    detail::cg_axpy<<<blocks, 256, 0, stream>>>(n, rr, pq, 1.0, p_.data(), x, status_.data());
    detail::cg_axpy<<<blocks, 256, 0, stream>>>(n, rr, pq, -1.0, q_.data(), r_.data(), status_.data());
    dot(n, r_.data(), r_.data(), rr_next, dots_, stream);
    detail::cg_xpay<<<blocks, 256, 0, stream>>>(n, rr_next, rr, r_.data(), p_.data(), status_.data());
    RELAX_CUDA_CHECK_LAUNCH();
  }

  // Copies `first` (and `second`, if given) into host_[0], host_[1]; returns the status.
  int read_back(const double* first, const double* second, cudaStream_t stream) {
    RELAX_CUDA_CHECK(cudaMemcpyAsync(host_.data(), first, sizeof(double), cudaMemcpyDeviceToHost, stream));
    if (second)
      RELAX_CUDA_CHECK(cudaMemcpyAsync(host_.data() + 1, second, sizeof(double), cudaMemcpyDeviceToHost, stream));
    RELAX_CUDA_CHECK(cudaMemcpyAsync(host_.data() + 3, status_.data(), sizeof(int), cudaMemcpyDeviceToHost, stream));
    RELAX_CUDA_CHECK(cudaStreamSynchronize(stream));
    int status = 0;
    std::memcpy(&status, host_.data() + 3, sizeof(int));
    return status;
  }

  Operator op_;
  CgOptions options_;
  Stream stream_;
  DeviceBuffer<T> r_, p_, q_;
  DeviceBuffer<double> scalars_;
  DeviceBuffer<int> status_;
  PinnedBuffer<double> host_;
  DotWorkspace dots_;
};

}  // namespace relax
