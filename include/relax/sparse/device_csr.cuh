#pragma once
//! \file
//! A CSR matrix in device memory and its SpMV, y = A x: one thread per row for short rows, one
//! warp per row for long ones (coalesced reads of a row's entries), chosen from the mean row length.

#include <relax/core/buffer.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/core/device.hpp>
#include <relax/sparse/csr.hpp>

#include <algorithm>
#include <cstdint>

namespace relax {

namespace detail {

//! Mean entries per row from which a warp per row beats a thread per row. A lead, not yet measured
//! on the H200: with fewer entries most lanes of a warp would idle.
inline constexpr double warp_per_row_min_mean = 16.0;

template <class T>
__global__ void spmv_thread_per_row(std::int64_t rows, const std::int64_t* __restrict__ row_ptr,
                                    const std::int32_t* __restrict__ col, const T* __restrict__ val,
                                    const T* __restrict__ x, T* __restrict__ y) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows; i += stride) {
    T sum = T(0);
    for (std::int64_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) sum += val[k] * x[col[k]];
    y[i] = sum;
  }
}

template <class T>
__global__ void spmv_warp_per_row(std::int64_t rows, const std::int64_t* __restrict__ row_ptr,
                                  const std::int32_t* __restrict__ col, const T* __restrict__ val,
                                  const T* __restrict__ x, T* __restrict__ y) {
  const int lane = threadIdx.x % 32;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / 32;
  for (std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows;
       i += warps) {
    T sum = T(0);
    for (std::int64_t k = row_ptr[i] + lane; k < row_ptr[i + 1]; k += 32) sum += val[k] * x[col[k]];
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (lane == 0) y[i] = sum;
  }
}

//! Block-level: `spmv_warp_per_row`'s arithmetic (the same bits) over the grid's x, for kernels
//! whose pointers arrive in a structure (the batched products of `CsrPartOperator::apply_all`):
//! there `__restrict__` does not reach the loads, so they name the read-only path themselves.
template <class T>
__device__ __forceinline__ void warp_rows_spmv(std::int64_t rows, const std::int64_t* row_ptr, const std::int32_t* col,
                                               const T* val, const T* x, T* y) {
  const int lane = threadIdx.x % 32;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / 32;
  for (std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows;
       i += warps) {
    T sum = T(0);
    const std::int64_t end = __ldg(row_ptr + i + 1);
    for (std::int64_t k = __ldg(row_ptr + i) + lane; k < end; k += 32) sum += __ldg(val + k) * __ldg(x + __ldg(col + k));
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (lane == 0) y[i] = sum;
  }
}

//! y = A x for a device CSR of `rows` rows and `nnz` entries on `stream`: a warp per row where
//! rows hold `warp_per_row_min_mean` entries or more on average, a thread per row otherwise.
template <class T>
void csr_spmv(std::int64_t rows, std::int64_t nnz, const std::int64_t* row_ptr, const std::int32_t* col, const T* val,
              const T* x, T* y, cudaStream_t stream) {
  constexpr int threads = 256;
  const bool warp_rows = static_cast<double>(nnz) >= warp_per_row_min_mean * rows;
  const std::int64_t work = warp_rows ? rows * 32 : rows;
  const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>((work + threads - 1) / threads, 65535));
  if (warp_rows)
    spmv_warp_per_row<<<blocks, threads, 0, stream>>>(rows, row_ptr, col, val, x, y);
  else
    spmv_thread_per_row<<<blocks, threads, 0, stream>>>(rows, row_ptr, col, val, x, y);
  RELAX_CUDA_CHECK_LAUNCH();
}

}  // namespace detail

//! The rows of a device CSR matrix, for kernels that compute (A p)_i themselves (fused CG): `row`
//! is the arithmetic of `spmv_thread_per_row`, `warp_row` that of `spmv_warp_per_row`.
template <class T>
struct CsrRows {
  const std::int64_t* row_ptr;
  const std::int32_t* col;
  const T* val;
  //! (A p)_i with p read through `load`.
  template <class Load>
  __device__ T row(std::int64_t i, const Load& load) const {
    T sum = T(0);
    for (std::int64_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) sum += val[k] * load(col[k]);
    return sum;
  }
  //! Warp-level (all 32 lanes of a warp, the same i): (A p)_i, whole in lane 0 (`lane`), each lane
  //! reading every 32nd entry of the row, coalesced.
  template <class Load>
  __device__ T warp_row(std::int64_t i, const Load& load, int lane) const {
    T sum = T(0);
    for (std::int64_t k = row_ptr[i] + lane; k < row_ptr[i + 1]; k += 32) sum += val[k] * load(col[k]);
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    return sum;
  }
};

//! A `Csr<T>` copied to the device; the operator of CG on sparse matrices. It owns its device
//! memory and is move-only; several solvers share one upload through `relax::OperatorView`
//! (`relax/solver/operator_view.hpp`).
template <class T>
class CsrOperator {
 public:
  using value_type = T;

  //! Uploads `a` after checking, before anything indexes with them, its CSR invariants and that
  //! it is square and symmetric within `symmetry` (see `CsrSymmetry`; with `symmetrise` the
  //! operator is (A + Aᵀ) / 2).
  //! \throws relax::unavailable_error without a GPU (before any CUDA call that could fail with
  //! another error); relax::invalid_argument naming the broken invariant or the asymmetric pair.
  explicit CsrOperator(const Csr<T>& a, const CsrSymmetry& symmetry = {}) {
    require_gpu();
    require_square_symmetric(a, "A", symmetry);
    if (symmetry.symmetrise)
      upload(symmetric_part(a));
    else
      upload(a);
  }

  CsrOperator(CsrOperator&&) noexcept = default;
  CsrOperator& operator=(CsrOperator&&) noexcept = default;
  CsrOperator(const CsrOperator&) = delete;
  CsrOperator& operator=(const CsrOperator&) = delete;

  std::int64_t size() const { return rows_; }
  //! The rows of A, by value, for device code (valid while this operator lives).
  CsrRows<T> rows() const { return {row_ptr_.data(), col_.data(), val_.data()}; }
  using rows_type = CsrRows<T>;

  //! y = A x on `stream`.
  void apply(const T* x, T* y, cudaStream_t stream) const {
    detail::csr_spmv(rows_, nnz_, row_ptr_.data(), col_.data(), val_.data(), x, y, stream);
  }

 private:
  // Uploads a matrix that has passed the checks above.
  void upload(const Csr<T>& a) {
    rows_ = a.rows;
    nnz_ = a.nnz();
    row_ptr_ = DeviceBuffer<std::int64_t>(a.row_ptr.size());
    col_ = DeviceBuffer<std::int32_t>(a.col_idx.size());
    val_ = DeviceBuffer<T>(a.values.size());
    RELAX_CUDA_CHECK(cudaMemcpy(row_ptr_.data(), a.row_ptr.data(), row_ptr_.bytes(), cudaMemcpyHostToDevice));
    if (nnz_ > 0) {
      RELAX_CUDA_CHECK(cudaMemcpy(col_.data(), a.col_idx.data(), col_.bytes(), cudaMemcpyHostToDevice));
      RELAX_CUDA_CHECK(cudaMemcpy(val_.data(), a.values.data(), val_.bytes(), cudaMemcpyHostToDevice));
    }
    // A copy from pageable memory may return before its DMA lands, and solvers use non-blocking
    // streams that do not wait for the legacy stream: the upload is complete when this returns.
    RELAX_CUDA_CHECK(cudaDeviceSynchronize());
  }

  static bool require_gpu() {
    if (device_count() == 0)
      throw unavailable_error("relax::CsrOperator needs a CUDA device and none is present; use "
                              "relax::reference::cg on the Csr<T> instead");
    return true;
  }

  std::int64_t rows_ = 0;
  std::int64_t nnz_ = 0;
  DeviceBuffer<std::int64_t> row_ptr_;
  DeviceBuffer<std::int32_t> col_;
  DeviceBuffer<T> val_;
};

}  // namespace relax
