// CG benchmarks on the 2D Poisson problem (n × n unknowns, 5-point stencil, zero Dirichlet
// boundary): time per iteration at a fixed iteration count, and time to a relative residual of
// 1e-8, for relax's CG variants and the two baselines of the CG lab:
//
//   cg_iter/relax_<variant>/<T>/N:n  CG<Poisson5Operator<T>, Variant> (matrix-free), variant one of
//                                    unfused, fused, graph, persistent, persistent_single,
//                                    pipelined, cluster (ClusterResident, at N = 256 only: one
//                                    cluster holds at most 256² unknowns), grid_resident
//                                    (GridResident, at N = 256 only: it holds at most 520²)
//   cg_iter/relax_csr/<T>/N:n        CG<CsrOperator<T>, Unfused> on the same matrix in CSR
//   cg_iter/cusparse_cublas/<T>/N:n  the library path: cuSPARSE SpMV (CSR) + cuBLAS dot/axpy/scal
//                                    with host scalars (each dot returns to the host), as in
//                                    NVIDIA's conjugateGradient sample
//   cg_iter/reference_openmp/<T>/N:n relax::reference::cg with all OpenMP threads, and
//   cg_iter/reference_serial/<T>/N:n with one thread
//   cg_iter/relax_<variant>/f64/csr:1138_bus  the fused variants on a real SPD matrix of 1138 rows
//                                    (tests/data/suitesparse), the fixed count
//   cg_solve/<path>/<T>/N:n          the same paths to ‖r‖ ≤ 1e-8 ‖b‖ (relax checks every 10
//                                    iterations; the library path checks every iteration)
//
// Counters: ms_per_iter, iterations, kernels_per_iter (launches issued per iteration),
// bytes_per_iter (the minimum traffic of the iteration) and gbs (bytes_per_iter over ms_per_iter).
#include "bench_support.hpp"

#include <relax/cpu/cg.hpp>
#include <relax/solver/cg.cuh>
#include <relax/sparse/device_csr.cuh>
#include <relax/sparse/matrix_market.hpp>
#include <relax/stencil/operator.cuh>

#include <cublas_v2.h>
#include <cusparse.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace {

#define BENCH_CUSPARSE(call)                                                               \
  do {                                                                                     \
    const cusparseStatus_t s_ = (call);                                                    \
    if (s_ != CUSPARSE_STATUS_SUCCESS)                                                     \
      throw std::runtime_error(std::string("cuSPARSE: ") + cusparseGetErrorString(s_));    \
  } while (0)
#define BENCH_CUBLAS(call)                                                                 \
  do {                                                                                     \
    const cublasStatus_t s_ = (call);                                                      \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                                       \
      throw std::runtime_error("cuBLAS error " + std::to_string(static_cast<int>(s_)));    \
  } while (0)

// The 5-point Laplacian (4 on the diagonal, −1 to each neighbour) in CSR, 32-bit indices.
template <class T>
relax::Csr<T> poisson_csr(std::int64_t n) {
  relax::Csr<T> a;
  a.rows = a.cols = n * n;
  a.row_ptr.reserve(static_cast<std::size_t>(n * n + 1));
  a.col_idx.reserve(static_cast<std::size_t>(5 * n * n));
  a.values.reserve(static_cast<std::size_t>(5 * n * n));
  a.row_ptr.push_back(0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      auto put = [&](std::int64_t c, T v) {
        a.col_idx.push_back(static_cast<std::int32_t>(c));
        a.values.push_back(v);
      };
      if (i > 0) put((i - 1) * n + j, T(-1));
      if (j > 0) put(i * n + j - 1, T(-1));
      put(i * n + j, T(4));
      if (j + 1 < n) put(i * n + j + 1, T(-1));
      if (i + 1 < n) put((i + 1) * n + j, T(-1));
      a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
    }
  return a;
}

// One CSR matrix per (type, n), built once per process (the large ones take seconds).
template <class T>
const relax::Csr<T>& cached_csr(std::int64_t n) {
  static std::map<std::int64_t, std::unique_ptr<relax::Csr<T>>> cache;
  auto& slot = cache[n];
  if (!slot) slot = std::make_unique<relax::Csr<T>>(poisson_csr<T>(n));
  return *slot;
}

template <class T>
std::vector<T> ones(std::int64_t count) {
  return std::vector<T>(static_cast<std::size_t>(count), T(1));
}

// Minimum bytes of one unfused CG iteration: the operator reads p and writes q (plus the matrix
// for CSR), the dots read p, q and r, two axpys read 4 vectors and write 2, xpay reads 2 and
// writes 1: 14 vectors.
template <class T>
double bytes_per_iter(std::int64_t n, bool csr) {
  const double v = static_cast<double>(n) * static_cast<double>(n) * sizeof(T);
  const double matrix = csr ? static_cast<double>(5 * n * n) * (sizeof(T) + 4) + static_cast<double>(n * n + 1) * 4 : 0.0;
  return 2 * v + matrix + 3 * v + 6 * v + 3 * v;
}

void report(benchmark::State& state, double ms_per_iter, double iterations, int kernels, double bytes) {
  relax::bench::counter(state, "ms_per_iter", ms_per_iter);
  relax::bench::counter(state, "iterations", iterations);
  relax::bench::counter(state, "kernels_per_iter", kernels);
  relax::bench::counter(state, "bytes_per_iter", bytes);
  relax::bench::counter(state, "gbs", bytes / (ms_per_iter * 1e6));
}

constexpr std::int64_t fixed_iterations = 200;

// ms_per_iter over every solve a benchmark run timed (Σ time / Σ iterations), not its last solve's.
struct PerIteration {
  double ms = 0.0, iterations = 0.0;
  void add(double solve_ms, double solve_iterations) {
    ms += solve_ms;
    iterations += solve_iterations;
  }
  double ms_per_iteration() const { return ms / iterations; }
};

// What `timed_cg` returns: the last solve's report and the mean over all its solves.
struct TimedCg {
  relax::CgReport last;
  PerIteration mean;
};

template <class Variant>
constexpr int kernels_per_iteration() {
  if constexpr (std::is_same_v<Variant, relax::Unfused>) return 6;  // SpMV, 2 dots, 2 axpys, xpay
  else if constexpr (std::is_same_v<Variant, relax::Persistent> ||
                     std::is_same_v<Variant, relax::PersistentSingleReduction> ||
                     std::is_same_v<Variant, relax::ClusterResident> ||
                     std::is_same_v<Variant, relax::GridResident>)
    return 0;  // one launch per solve
  else return 2;  // Fused, Graph (in a graph), Pipelined
}

// Vectors of n² values the fused variants move per iteration: Fused, Graph and Persistent 9
// (read r, p, x; write p, q, x; read q, r; write r: x's update rides on the first kernel's read
// of p); Pipelined 16 (read r, w; write m; read m, z, s, p, x, r, w; write z, s, p, x, r, w);
// PersistentSingleReduction 10 (read r, w, s, p, x; write p, s, x, r, w); ClusterResident 0 (its
// vectors stay in registers and shared memory from the first load to the last store);
// GridResident 3 (it publishes r, w and s of every unknown; what its neighbours read back is a few
// rows a block).
// Unfused and the library path: bytes_per_iter.
template <class Variant>
constexpr int vectors_per_iteration() {
  if constexpr (std::is_same_v<Variant, relax::Pipelined>) return 16;
  else if constexpr (std::is_same_v<Variant, relax::ClusterResident>) return 0;
  else if constexpr (std::is_same_v<Variant, relax::GridResident>) return 3;
  else if constexpr (std::is_same_v<Variant, relax::PersistentSingleReduction>) return 10;
  else return 9;
}

// relax's CG with `Operator` from x = 0 with b = 1, timed; `to_tol` runs to 1e-8 instead of a
// fixed count. Returns the last solve's report (reported as skipped if it should have converged)
// and the time per iteration over every timed solve.
template <class T, class Variant, class Operator>
TimedCg timed_cg(benchmark::State& state, Operator op, bool to_tol) {
  relax::CgOptions opt;
  if (to_tol) {
    opt.rel_tol = 1e-8;
    opt.max_iterations = 100000;
    opt.check_interval = 10;
  } else {
    opt.rel_tol = 0.0;
    opt.abs_tol = 1e-300;  // never met: run the fixed count
    opt.max_iterations = fixed_iterations;
    opt.check_interval = fixed_iterations;
  }
  const auto b = ones<T>(op.size());
  relax::CG<Operator, Variant> cg(std::move(op), opt);
  relax::DeviceBuffer<T> db(b.size()), dx(b.size());
  // On the solver's stream: legacy-stream copies are not ordered with it (non-blocking).
  RELAX_CUDA_CHECK(cudaMemcpyAsync(db.data(), b.data(), db.bytes(), cudaMemcpyHostToDevice, cg.stream()));
  relax::CgReport last;
  PerIteration mean;
  for (auto _ : state) {
    RELAX_CUDA_CHECK(cudaMemsetAsync(dx.data(), 0, dx.bytes(), cg.stream()));
    last = cg.solve(db.data(), dx.data(), cg.stream());
    state.SetIterationTime(last.time_ms / 1e3);
    mean.add(last.time_ms, static_cast<double>(last.iterations));
  }
  if (to_tol && !last.converged()) {
    // Say how it ended: a cap, a breakdown and a stagnating residual need different fixes.
    const std::string why = std::string("relax CG did not converge: ") + relax::to_string(last.status) +
                            " after " + std::to_string(last.iterations) + " iterations, |r|/|b| " +
                            std::to_string(last.relative_residual());
    state.SkipWithError(why.c_str());
  }
  return {last, mean};
}

// relax's CG on the n² Poisson problem (`csr`: its matrix in CSR).
template <class T, class Variant = relax::Unfused, class Operator>
void relax_cg(benchmark::State& state, Operator op, bool csr, bool to_tol) {
  const std::int64_t n = state.range(0);
  const auto [last, mean] = timed_cg<T, Variant>(state, std::move(op), to_tol);
  const double vector_bytes = static_cast<double>(n) * static_cast<double>(n) * sizeof(T);
  const double bytes = std::is_same_v<Variant, relax::Unfused>
                           ? bytes_per_iter<T>(n, csr)
                           : vectors_per_iteration<Variant>() * vector_bytes;
  report(state, mean.ms_per_iteration(), static_cast<double>(last.iterations),
         kernels_per_iteration<Variant>(), bytes);
}

template <class T, class Variant>
void BM_relax(benchmark::State& state, bool to_tol) {
  relax_cg<T, Variant>(state, relax::Poisson5Operator<T>(state.range(0)), false, to_tol);
}

template <class T>
void BM_relax_csr(benchmark::State& state, bool to_tol) {
  relax_cg<T>(state, relax::CsrOperator<T>(cached_csr<T>(state.range(0))), true, to_tol);
}

// cg_iter/relax_<variant>/f64/csr:<name>: a real SPD matrix of tests/data/suitesparse (1138_bus,
// 1138 rows: the issue's "CSR of about 1000 rows"), b = 1, the fixed iteration count.
template <class Variant>
void BM_relax_real(benchmark::State& state, const std::string& name) {
  static std::map<std::string, relax::Csr<double>> cache;
  auto found = cache.find(name);
  if (found == cache.end())
    found = cache.emplace(name, relax::read_matrix_market<double>(std::string(RELAX_BENCH_DATA_DIR) + "/suitesparse/" +
                                                                  name + ".mtx")).first;
  const relax::Csr<double>& a = found->second;
  const auto [last, mean] = timed_cg<double, Variant>(state, relax::CsrOperator<double>(a), false);
  const double vectors = static_cast<double>(a.rows) * sizeof(double) * vectors_per_iteration<Variant>();
  const double matrix = static_cast<double>(a.nnz()) * (sizeof(double) + 4) + static_cast<double>(a.rows + 1) * 8;
  report(state, mean.ms_per_iteration(), static_cast<double>(last.iterations),
         kernels_per_iteration<Variant>(), vectors + matrix);
}

// The library path (cuSPARSE + cuBLAS, host scalars), after NVIDIA's conjugateGradient sample.
template <class T>
class LibraryCg {
 public:
  explicit LibraryCg(const relax::Csr<T>& a) : rows_(a.rows), nnz_(a.nnz()) {
    BENCH_CUBLAS(cublasCreate(&blas_));
    BENCH_CUSPARSE(cusparseCreate(&sparse_));
    row_ptr_ = relax::DeviceBuffer<std::int32_t>(a.row_ptr.size());
    col_ = relax::DeviceBuffer<std::int32_t>(a.col_idx.size());
    val_ = relax::DeviceBuffer<T>(a.values.size());
    const std::vector<std::int32_t> offsets(a.row_ptr.begin(), a.row_ptr.end());  // nnz < 2^31 here
    RELAX_CUDA_CHECK(cudaMemcpy(row_ptr_.data(), offsets.data(), row_ptr_.bytes(), cudaMemcpyHostToDevice));
    RELAX_CUDA_CHECK(cudaMemcpy(col_.data(), a.col_idx.data(), col_.bytes(), cudaMemcpyHostToDevice));
    RELAX_CUDA_CHECK(cudaMemcpy(val_.data(), a.values.data(), val_.bytes(), cudaMemcpyHostToDevice));
    for (auto* v : {&r_, &p_, &q_}) *v = relax::DeviceBuffer<T>(static_cast<std::size_t>(rows_));
    BENCH_CUSPARSE(cusparseCreateCsr(&mat_, rows_, rows_, nnz_, row_ptr_.data(), col_.data(), val_.data(),
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, kind));
    BENCH_CUSPARSE(cusparseCreateDnVec(&vp_, rows_, p_.data(), kind));
    BENCH_CUSPARSE(cusparseCreateDnVec(&vq_, rows_, q_.data(), kind));
    const T one = 1, zero = 0;
    std::size_t bytes = 0;
    BENCH_CUSPARSE(cusparseSpMV_bufferSize(sparse_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, vp_, &zero,
                                           vq_, kind, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    buffer_ = relax::DeviceBuffer<char>(bytes > 0 ? bytes : 1);
  }
  ~LibraryCg() {
    cusparseDestroyDnVec(vp_);
    cusparseDestroyDnVec(vq_);
    cusparseDestroySpMat(mat_);
    cusparseDestroy(sparse_);
    cublasDestroy(blas_);
  }
  LibraryCg(const LibraryCg&) = delete;
  LibraryCg& operator=(const LibraryCg&) = delete;

  // Solves from x = 0 for at most `max_iter` iterations or until ‖r‖ ≤ rel_tol ‖b‖; returns the
  // iterations done. Host time.
  std::int64_t solve(const T* b, T* x, std::int64_t max_iter, double rel_tol) {
    const int n = static_cast<int>(rows_);
    const T one = 1, zero = 0;
    RELAX_CUDA_CHECK(cudaMemset(x, 0, sizeof(T) * rows_));
    RELAX_CUDA_CHECK(cudaMemcpy(r_.data(), b, sizeof(T) * rows_, cudaMemcpyDeviceToDevice));  // r = b − A·0
    T r1 = dot(r_.data(), r_.data());
    const double target = rel_tol * rel_tol * static_cast<double>(r1);
    T r0 = 0;
    std::int64_t k = 0;
    while (k < max_iter && static_cast<double>(r1) > target) {
      if (k > 0) {
        const T beta = r1 / r0;
        BENCH_CUBLAS(scal(n, &beta, p_.data()));
        BENCH_CUBLAS(axpy(n, &one, r_.data(), p_.data()));
      } else {
        RELAX_CUDA_CHECK(cudaMemcpy(p_.data(), r_.data(), sizeof(T) * rows_, cudaMemcpyDeviceToDevice));
      }
      BENCH_CUSPARSE(cusparseSpMV(sparse_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, vp_, &zero, vq_, kind,
                                  CUSPARSE_SPMV_ALG_DEFAULT, buffer_.data()));
      const T alpha = r1 / dot(p_.data(), q_.data());
      const T minus_alpha = -alpha;
      BENCH_CUBLAS(axpy(n, &alpha, p_.data(), x));
      BENCH_CUBLAS(axpy(n, &minus_alpha, q_.data(), r_.data()));
      r0 = r1;
      r1 = dot(r_.data(), r_.data());
      ++k;
    }
    RELAX_CUDA_CHECK(cudaDeviceSynchronize());
    converged_ = static_cast<double>(r1) <= target;
    return k;
  }
  bool converged() const { return converged_; }

 private:
  static constexpr cudaDataType kind = std::is_same_v<T, double> ? CUDA_R_64F : CUDA_R_32F;
  T dot(const T* a, const T* b) {
    T out{};
    if constexpr (std::is_same_v<T, double>)
      BENCH_CUBLAS(cublasDdot(blas_, static_cast<int>(rows_), a, 1, b, 1, &out));
    else
      BENCH_CUBLAS(cublasSdot(blas_, static_cast<int>(rows_), a, 1, b, 1, &out));
    return out;
  }
  cublasStatus_t scal(int n, const T* s, T* v) {
    if constexpr (std::is_same_v<T, double>) return cublasDscal(blas_, n, s, v, 1);
    else return cublasSscal(blas_, n, s, v, 1);
  }
  cublasStatus_t axpy(int n, const T* a, const T* v, T* y) {
    if constexpr (std::is_same_v<T, double>) return cublasDaxpy(blas_, n, a, v, 1, y, 1);
    else return cublasSaxpy(blas_, n, a, v, 1, y, 1);
  }

  std::int64_t rows_, nnz_;
  cublasHandle_t blas_{};
  cusparseHandle_t sparse_{};
  cusparseSpMatDescr_t mat_{};
  cusparseDnVecDescr_t vp_{}, vq_{};
  relax::DeviceBuffer<std::int32_t> row_ptr_, col_;
  relax::DeviceBuffer<T> val_, r_, p_, q_;
  relax::DeviceBuffer<char> buffer_;
  bool converged_ = false;
};

template <class T>
void BM_cusparse_cublas(benchmark::State& state, bool to_tol) {
  const std::int64_t n = state.range(0);
  LibraryCg<T> cg(cached_csr<T>(n));
  const auto b = ones<T>(n * n);
  relax::DeviceBuffer<T> db(b.size()), dx(b.size());
  RELAX_CUDA_CHECK(cudaMemcpy(db.data(), b.data(), db.bytes(), cudaMemcpyHostToDevice));
  std::int64_t iterations = 0;
  PerIteration mean;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    iterations = cg.solve(db.data(), dx.data(), to_tol ? 100000 : fixed_iterations, to_tol ? 1e-8 : 0.0);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    state.SetIterationTime(ms / 1e3);
    mean.add(ms, static_cast<double>(iterations));
  }
  if (to_tol && !cg.converged()) state.SkipWithError("library CG did not converge");
  // scal, axpy, SpMV, dot, 2 axpys, dot (+ cuSPARSE's internal launches, not counted).
  report(state, mean.ms_per_iteration(), static_cast<double>(iterations), 7, bytes_per_iter<T>(n, true));
}

// The reference backend's CG: `threads` = 0 for all OpenMP threads, 1 for the serial baseline.
template <class T>
void BM_reference(benchmark::State& state, int threads) {
  const std::int64_t n = state.range(0);
  relax::reference::Poisson5<T> a(n);
  const auto b = ones<T>(n * n);
  std::vector<T> x;
  relax::CgOptions opt;
  opt.rel_tol = 0.0;
  opt.abs_tol = 1e-300;
  opt.max_iterations = threads == 1 ? 3 : 10;
  PerIteration mean;
  for (auto _ : state) {
    x.assign(b.size(), T(0));
    const auto start = std::chrono::steady_clock::now();
    const relax::CgReport rep = relax::reference::cg(a, b, x, opt, relax::reference::Exec::openmp(threads));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    state.SetIterationTime(ms / 1e3);
    mean.add(ms, static_cast<double>(rep.iterations));
  }
  report(state, mean.ms_per_iteration(), static_cast<double>(opt.max_iterations), 0, bytes_per_iter<T>(n, false));
}

template <class T>
const char* type_name() {
  return std::is_same_v<T, double> ? "f64" : "f32";
}

template <class T>
void register_type() {
  const std::string t = type_name<T>();
  for (const char* kind : {"cg_iter", "cg_solve"}) {
    const bool to_tol = std::string(kind) == "cg_solve";
    // To 1e-8 at N = 8192 takes about 15 000 iterations in float64 (20-60 s a path): a device
    // call runs those rows on their own (CG_FILTER='cg_solve/.*/N:8192', see run_h200.sh).
    for (std::int64_t n : {256, 1024, 4096, 8192}) {
      auto add = [&](const std::string& path, auto fn) {
        benchmark::RegisterBenchmark((std::string(kind) + "/" + path + "/" + t + "/N:" + std::to_string(n)).c_str(),
                                     [fn, to_tol](benchmark::State& s) { fn(s, to_tol); })
            ->Arg(n)
            ->UseManualTime()
            ->Iterations(to_tol ? 1 : 3)
            ->Unit(benchmark::kMillisecond);
      };
      add("relax_unfused", BM_relax<T, relax::Unfused>);
      add("relax_fused", BM_relax<T, relax::Fused>);
      add("relax_graph", BM_relax<T, relax::Graph>);
      add("relax_persistent", BM_relax<T, relax::Persistent>);
      add("relax_persistent_single", BM_relax<T, relax::PersistentSingleReduction>);
      add("relax_pipelined", BM_relax<T, relax::Pipelined>);
      if (n <= 256) add("relax_cluster", BM_relax<T, relax::ClusterResident>);
      if (n <= 256) add("relax_grid_resident", BM_relax<T, relax::GridResident>);
      if (n <= 4096) add("relax_csr", BM_relax_csr<T>);  // the host symmetry check of 3e8 entries is slow
      add("cusparse_cublas", BM_cusparse_cublas<T>);
    }
  }
  for (const auto& [name, threads] : {std::pair<const char*, int>{"reference_openmp", 0}, {"reference_serial", 1}})
    benchmark::RegisterBenchmark(("cg_iter/" + std::string(name) + "/" + t + "/N:4096").c_str(),
                                 [threads = threads](benchmark::State& s) { BM_reference<T>(s, threads); })
        ->Arg(4096)
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
}

template <class Variant>
void register_real(const char* variant, const char* matrix) {
  benchmark::RegisterBenchmark(("cg_iter/" + std::string(variant) + "/f64/csr:" + matrix).c_str(),
                               [name = std::string(matrix)](benchmark::State& s) { BM_relax_real<Variant>(s, name); })
      ->UseManualTime()
      ->Iterations(3)
      ->Unit(benchmark::kMillisecond);
}

const bool registered = [] {
  register_type<float>();
  register_type<double>();
  register_real<relax::Graph>("relax_graph", "1138_bus");
  register_real<relax::Persistent>("relax_persistent", "1138_bus");
  register_real<relax::PersistentSingleReduction>("relax_persistent_single", "1138_bus");
  register_real<relax::ClusterResident>("relax_cluster", "1138_bus");
  register_real<relax::GridResident>("relax_grid_resident", "1138_bus");
  return true;
}();

}  // namespace
