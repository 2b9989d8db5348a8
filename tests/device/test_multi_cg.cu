// CG on k sub-domains of one GPU (relax::MultiCG: host-controlled standard and pipelined CG, and
// CPU-free standard and pipelined CG, one persistent kernel for the parts of a device):
// each part's operator against the global one bit for bit (its halo filled from the layout's
// transfers on the host); one part against the single-domain CG<..., Unfused> bit for bit; k = 1,
// 2, 3 on the Poisson operators (2D, 3D, rectangular boxes), generated SPD matrices and the real
// SuiteSparse ones: converged, the true residual below tolerance, repeats bit for bit, iteration
// counts within the split bound of k = 1 and of the host model (reference::cg_split); bad input
// refused with a clear error.
#include <catch2/catch.hpp>

#include "matrices.hpp"
#include "real_matrices.hpp"
#include "split_cg.hpp"

#include <relax/cpu/cg.hpp>
#include <relax/cpu/split_cg.hpp>
#include <relax/multi/cg.cuh>
#include <relax/solver/cg.cuh>
#include <relax/sparse/device_csr.cuh>
#include <relax/stencil/operator.cuh>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace {

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

using relax::testing::wavy;

// Each part's local vector of the global x, built on the host from the layout: its owned
// entries, and every transfer's entries at its receive offset.
template <class Part, class T = typename Part::value_type>
std::vector<std::vector<T>> local_vectors(const relax::SplitOperator<Part>& op, const std::vector<T>& x) {
  const relax::SplitLayout& l = op.layout;
  std::vector<std::vector<T>> local(l.parts.size());
  for (std::size_t p = 0; p < l.parts.size(); ++p) {
    local[p].assign(static_cast<std::size_t>(l.parts[p].local_size), T(0));
    std::copy_n(x.begin() + l.parts[p].global_first, l.parts[p].owned, local[p].begin() + l.parts[p].owned_offset);
  }
  for (const relax::HaloTransfer& h : l.transfers) {
    const relax::PartLayout& from = l.parts[static_cast<std::size_t>(h.from)];
    for (std::int64_t e = 0; e < h.count; ++e) {
      const std::int64_t owned = h.indices.empty() ? h.first + e : h.indices[static_cast<std::size_t>(e)];
      local[static_cast<std::size_t>(h.to)][static_cast<std::size_t>(h.receive_offset + e)] =
          x[static_cast<std::size_t>(from.global_first + owned)];
    }
  }
  return local;
}

// y = A x part by part, each part's `apply` on its local vector.
template <class Part, class T = typename Part::value_type>
std::vector<T> split_multiply(const relax::SplitOperator<Part>& op, const std::vector<T>& x) {
  const relax::SplitLayout& l = op.layout;
  const std::vector<std::vector<T>> local = local_vectors(op, x);
  std::vector<T> y(x.size());
  for (std::size_t p = 0; p < l.parts.size(); ++p) {
    relax::DeviceBuffer<T> dx(local[p].size()), dy(static_cast<std::size_t>(l.parts[p].owned));
    RELAX_CUDA_CHECK(cudaMemcpy(dx.data(), local[p].data(), dx.bytes(), cudaMemcpyHostToDevice));
    op.parts[p].apply(dx.data(), dy.data(), nullptr);
    RELAX_CUDA_CHECK(cudaMemcpy(y.data() + l.parts[p].global_first, dy.data(), dy.bytes(), cudaMemcpyDeviceToHost));
  }
  return y;
}

template <class Op, class T = typename Op::value_type>
std::vector<T> global_multiply(const Op& op, const std::vector<T>& x) {
  relax::DeviceBuffer<T> dx(x.size()), dy(x.size());
  RELAX_CUDA_CHECK(cudaMemcpy(dx.data(), x.data(), dx.bytes(), cudaMemcpyHostToDevice));
  op.apply(dx.data(), dy.data(), nullptr);
  std::vector<T> y(x.size());
  RELAX_CUDA_CHECK(cudaMemcpy(y.data(), dy.data(), dy.bytes(), cudaMemcpyDeviceToHost));
  return y;
}

// Solves with `Variant` on `op`'s parts from x = 0; checks convergence, the true residual on the
// host, and a repeat bit for bit. Returns the report.
template <class Variant, class Part, class T = typename Part::value_type>
relax::CgReport solve_checked(relax::SplitOperator<Part> op, const std::vector<T>& b, const relax::CgOptions& options,
                              const std::function<std::vector<T>(const std::vector<T>&)>& multiply,
                              std::vector<T>* x_out = nullptr) {
  relax::MultiCG<Part, Variant> cg(std::move(op), options);
  std::vector<T> x(b.size(), T(0)), again(b.size(), T(0));
  const relax::CgReport r = cg.solve(b, x);
  const relax::CgReport repeat = cg.solve(b, again);
  CHECK(r.converged());
  CHECK(r.relative_true_residual() < options.rel_tol);
  // The true residual recomputed on the host from the returned x.
  const std::vector<T> ax = multiply(x);
  double rr = 0.0, bb = 0.0;
  for (std::size_t k = 0; k < b.size(); ++k) {
    rr += (double(b[k]) - double(ax[k])) * (double(b[k]) - double(ax[k]));
    bb += double(b[k]) * double(b[k]);
  }
  CHECK(std::sqrt(rr / bb) < 2 * options.rel_tol);
  CHECK(repeat.iterations == r.iterations);
  CHECK(repeat.residual_norm == r.residual_norm);
  CHECK(repeat.true_residual_norm == r.true_residual_norm);
  CHECK(same_bits(again, x));
  if (x_out) *x_out = x;
  return r;
}

const std::vector<int>& one_gpu(int k) {
  static std::vector<std::vector<int>> lists(11);
  lists[static_cast<std::size_t>(k)].assign(static_cast<std::size_t>(k), 0);
  return lists[static_cast<std::size_t>(k)];
}

}  // namespace

TEST_CASE("each part's operator is the global operator's rows bit for bit", "[multi_cg]") {
  for (int k : {1, 2, 3, 4}) {
    INFO(k << " parts");
    // 2D and 3D Poisson slabs, odd and rectangular boxes, one-line slabs.
    for (const relax::Extents& e : {relax::Extents(37, 4), relax::Extents(5, 9), relax::Extents(1, 4)}) {
      const auto split = relax::split_stencil(relax::Poisson5<double>{}, e, one_gpu(k));
      const std::vector<double> x = wavy<double>(e.nx * e.ny);
      const relax::StencilOperator<relax::Poisson5<double>> global(relax::Poisson5<double>{}, e);
      CHECK(same_bits(split_multiply(split, x), global_multiply(global, x)));
    }
    for (const relax::Extents& e : {relax::Extents(7, 5, 4), relax::Extents(3, 11, 9)}) {
      const auto split = relax::split_stencil(relax::Poisson7<float>{}, e, one_gpu(k));
      const std::vector<float> x = wavy<float>(e.nx * e.ny * e.nz);
      const relax::StencilOperator<relax::Poisson7<float>> global(relax::Poisson7<float>{}, e);
      CHECK(same_bits(split_multiply(split, x), global_multiply(global, x)));
    }
    // CSR: the scaled Poisson matrix (thread per row) and a dense-rowed one (warp per row).
    for (const relax::Csr<double>& a : {relax::testing::scaled_poisson(9, 1.0), relax::testing::dense_spd(40)}) {
      const std::vector<double> x = wavy<double>(a.rows);
      for (const relax::Balance balance : {relax::Balance::rows, relax::Balance::nonzeros}) {
        const auto split = relax::split_csr(a, one_gpu(k), balance);
        CHECK(same_bits(split_multiply(split, x), global_multiply(relax::CsrOperator<double>(a), x)));
      }
    }
  }
}

// One part against the single-domain CG<Op, Variant>: every field of the report and x, bit for
// bit (Persistent: on the same grid).
template <class Variant, class Op, class Part, class T = typename Op::value_type>
void check_one_part(Op op, relax::SplitOperator<Part> split, const std::vector<T>& b, const relax::CgOptions& options) {
  std::vector<T> x_single(b.size(), T(0)), x_split(b.size(), T(0));
  relax::CG<Op, Variant> single(std::move(op), options);
  const relax::CgReport want = single.solve(b, x_single);
  relax::MultiCG<Part, Variant> multi(std::move(split), options);
  if constexpr (std::is_same_v<Variant, relax::Persistent>)
    REQUIRE(multi.persistent_blocks() == std::vector<int>{single.persistent_blocks()});
  const relax::CgReport got = multi.solve(b, x_split);
  CHECK(got.status == want.status);
  CHECK(got.iterations == want.iterations);
  CHECK(got.residual_norm == want.residual_norm);
  CHECK(got.true_residual_norm == want.true_residual_norm);
  CHECK(got.rhs_norm == want.rhs_norm);
  CHECK(same_bits(x_split, x_single));
}

TEST_CASE("one part is CG<..., Unfused> bit for bit, and CPU-free CG<..., Persistent>", "[multi_cg]") {
  relax::CgOptions options;
  options.rel_tol = 1e-10;
  const relax::Csr<double> a = relax::testing::scaled_poisson(23, 1.0);
  const std::vector<double> b = relax::testing::ones_rhs(a);
  check_one_part<relax::Unfused>(relax::CsrOperator<double>(a), relax::split_csr(a, {0}), b, options);
  check_one_part<relax::Persistent>(relax::CsrOperator<double>(a), relax::split_csr(a, {0}), b, options);
  const relax::Extents e(45, 31);
  using P5 = relax::Poisson5<double>;
  const std::vector<double> b2 = wavy<double>(e.nx * e.ny);
  check_one_part<relax::Unfused>(relax::StencilOperator<P5>(P5{}, e), relax::split_stencil(P5{}, e, {0}), b2, options);
  check_one_part<relax::Persistent>(relax::StencilOperator<P5>(P5{}, e), relax::split_stencil(P5{}, e, {0}), b2,
                                    options);
  relax::CgOptions f = options;
  f.rel_tol = 1e-5;
  using P5f = relax::Poisson5<float>;
  check_one_part<relax::Unfused>(relax::StencilOperator<P5f>(P5f{}, e), relax::split_stencil(P5f{}, e, {0}),
                                 wavy<float>(e.nx * e.ny), f);
}

TEST_CASE("CG on 1, 2 and 3 parts of one GPU converges on the Poisson operators and repeats bit for bit",
          "[multi_cg]") {
  relax::CgOptions options;
  options.rel_tol = 1e-8;
  for (const relax::Extents& e : {relax::Extents(70, 70), relax::Extents(257, 33), relax::Extents(20, 17, 13)}) {
    std::int64_t first_standard = 0, first_pipelined = 0;
    for (int k : {1, 2, 3}) {
      INFO(e.to_text() << ", " << k << " parts");
      const std::int64_t n = e.nx * e.ny * (e.rank == 3 ? e.nz : 1);
      const std::vector<double> b = wavy<double>(n);
      std::function<std::vector<double>(const std::vector<double>&)> multiply;
      relax::CgReport standard, pipe, cpu_free, cpu_free_pipe;
      auto run = [&](auto stencil) {
        using P = decltype(stencil);
        const relax::StencilOperator<P> global(stencil, e);
        multiply = [&](const std::vector<double>& x) { return global_multiply(global, x); };
        standard = solve_checked<relax::Unfused>(relax::split_stencil(stencil, e, one_gpu(k)), b, options, multiply);
        pipe = solve_checked<relax::Pipelined>(relax::split_stencil(stencil, e, one_gpu(k)), b, options, multiply);
        cpu_free = solve_checked<relax::Persistent>(relax::split_stencil(stencil, e, one_gpu(k)), b, options, multiply);
        cpu_free_pipe =
            solve_checked<relax::PersistentPipelined>(relax::split_stencil(stencil, e, one_gpu(k)), b, options, multiply);
      };
      if (e.rank == 2) run(relax::Poisson5<double>{});
      else run(relax::Poisson7<double>{});
      if (k == 1) {
        first_standard = standard.iterations;
        first_pipelined = pipe.iterations;
      }
      INFO("standard " << standard.iterations << " (k = 1: " << first_standard << "), pipelined " << pipe.iterations
                       << " (k = 1: " << first_pipelined << "), CPU-free " << cpu_free.iterations
                       << ", CPU-free pipelined " << cpu_free_pipe.iterations);
      CHECK(std::abs(standard.iterations - first_standard) <= relax::testing::split_iteration_bound(first_standard));
      CHECK(std::abs(pipe.iterations - first_pipelined) <= relax::testing::split_iteration_bound(first_pipelined));
      CHECK(std::abs(cpu_free.iterations - first_standard) <= relax::testing::split_iteration_bound(first_standard));
      CHECK(std::abs(cpu_free_pipe.iterations - first_pipelined) <= relax::testing::split_iteration_bound(first_pipelined));
      CHECK(cpu_free_pipe.switched_at < 0);  // the Poisson problems need no switch to standard CG
    }
  }
}

TEST_CASE("CG on 1, 2 and 3 parts of one GPU on SPD matrices, generated and real", "[multi_cg][real]") {
  relax::CgOptions options;
  options.rel_tol = 1e-8;
  options.restarts = 2;
  std::vector<std::pair<std::string, relax::Csr<double>>> matrices = {
      {"scaled_poisson(30, 2)", relax::testing::scaled_poisson(30, 2.0)}, {"dense_spd(60)", relax::testing::dense_spd(60)}};
  for (const char* name : {"bcsstk01", "nos4", "gr_30_30", "1138_bus", "bcsstk14"})
    matrices.emplace_back(name, relax::testing::read_real_matrix(RELAX_TEST_DATA_DIR, name));
  for (const auto& [name, a] : matrices) {
    const std::vector<double> b = relax::testing::ones_rhs(a);
    const relax::CsrOperator<double> global(a);
    const std::function<std::vector<double>(const std::vector<double>&)> multiply = [&](const std::vector<double>& x) {
      return global_multiply(global, x);
    };
    std::int64_t first = 0;
    for (int k : {1, 2, 3}) {
      for (const relax::Balance balance : {relax::Balance::rows, relax::Balance::nonzeros}) {
        INFO(name << ", " << k << " parts, balanced by " << (balance == relax::Balance::rows ? "rows" : "non-zeros"));
        const relax::CgReport standard =
            solve_checked<relax::Unfused>(relax::split_csr(a, one_gpu(k), balance), b, options, multiply);
        const relax::CgReport pipe =
            solve_checked<relax::Pipelined>(relax::split_csr(a, one_gpu(k), balance), b, options, multiply);
        const relax::CgReport cpu_free =
            solve_checked<relax::Persistent>(relax::split_csr(a, one_gpu(k), balance), b, options, multiply);
        const relax::CgReport cpu_free_pipe =
            solve_checked<relax::PersistentPipelined>(relax::split_csr(a, one_gpu(k), balance), b, options, multiply);
        if (k == 1) first = standard.iterations;
        // The host model on the same parts: about the same iterations (its partials are serial sums).
        std::vector<double> x_host(b.size(), 0.0);
        const relax::CgReport host = relax::reference::cg_split(a, k, b, x_host, options, balance);
        INFO("standard " << standard.iterations << " (k = 1: " << first << ", host model " << host.iterations
                         << "), pipelined " << pipe.iterations << ", CPU-free " << cpu_free.iterations
                         << ", CPU-free pipelined " << cpu_free_pipe.iterations << " (switched at "
                         << cpu_free_pipe.switched_at << ")");
        CHECK(std::abs(standard.iterations - first) <= relax::testing::split_iteration_bound(first));
        CHECK(std::abs(cpu_free.iterations - first) <= relax::testing::split_iteration_bound(first));
        CHECK(std::abs(standard.iterations - host.iterations) <= relax::testing::split_iteration_bound(host.iterations));
      }
    }
  }
}

// A symmetric band matrix whose rows are long in the first half and short in the second: A_ij
// ≠ 0 for |i − j| ≤ 15 where min(i, j) < n / 2, ≤ 2 elsewhere; diagonally dominant.
relax::Csr<double> long_then_short(std::int64_t n) {
  relax::Csr<double> a;
  a.rows = a.cols = n;
  a.row_ptr.push_back(0);
  for (std::int64_t i = 0; i < n; ++i) {
    double sum = 0.0;
    std::size_t diagonal = 0;
    for (std::int64_t j = std::max<std::int64_t>(0, i - 15); j <= std::min<std::int64_t>(n - 1, i + 15); ++j) {
      if (std::abs(i - j) > (std::min(i, j) < n / 2 ? 15 : 2)) continue;
      if (i == j) diagonal = a.values.size();
      a.col_idx.push_back(static_cast<std::int32_t>(j));
      a.values.push_back(i == j ? 0.0 : -1.0 / (1.0 + static_cast<double>(std::abs(i - j))));
      sum += std::abs(a.values.back());
    }
    a.values[diagonal] = sum * 1.01;
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  return a;
}

// y = A x with every part's product in `Part::apply_all`'s launches.
template <class Part, class T = typename Part::value_type>
std::vector<T> split_multiply_all(const relax::SplitOperator<Part>& op, const std::vector<T>& x) {
  const relax::SplitLayout& l = op.layout;
  const std::vector<std::vector<T>> local = local_vectors(op, x);
  std::vector<relax::DeviceBuffer<T>> dx, dy;
  std::vector<relax::PartProduct<Part>> products;
  for (std::size_t p = 0; p < l.parts.size(); ++p) {
    dx.emplace_back(local[p].size());
    dy.emplace_back(static_cast<std::size_t>(l.parts[p].owned));
    RELAX_CUDA_CHECK(cudaMemcpy(dx.back().data(), local[p].data(), dx.back().bytes(), cudaMemcpyHostToDevice));
    RELAX_CUDA_CHECK(cudaMemset(dy.back().data(), 0xff, dy.back().bytes()));  // NaN where nothing is written
  }
  for (std::size_t p = 0; p < l.parts.size(); ++p) products.push_back({&op.parts[p], dx[p].data(), dy[p].data()});
  Part::apply_all(products.data(), static_cast<int>(products.size()), nullptr);
  std::vector<T> y(x.size());
  for (std::size_t p = 0; p < l.parts.size(); ++p)
    RELAX_CUDA_CHECK(cudaMemcpy(y.data() + l.parts[p].global_first, dy[p].data(), dy[p].bytes(), cudaMemcpyDeviceToHost));
  return y;
}

TEST_CASE("a device's parts in one launch: each part's product bit for bit, beyond one launch's parts too",
          "[multi_cg]") {
  // Rows a thread applies, rows a warp applies, and both in one launch (long_then_short: there
  // each part's own choice, not the global operator's); up to 10 parts, more than one launch
  // holds (relax::detail::batch_parts).
  for (const relax::Csr<double>& a :
       {relax::testing::scaled_poisson(13, 1.0), relax::testing::dense_spd(40), long_then_short(700)}) {
    const std::vector<double> x = wavy<double>(a.rows);
    const std::vector<double> global = global_multiply(relax::CsrOperator<double>(a), x);
    for (int k : {1, 2, 3, 9, 10}) {
      INFO(a.rows << " rows, " << k << " parts");
      const auto split = relax::split_csr(a, one_gpu(k));
      const std::vector<double> each = split_multiply(split, x);
      CHECK(same_bits(split_multiply_all(split, x), each));
      if (a.rows != 700) CHECK(same_bits(each, global));  // one way to apply every row
    }
  }
  const relax::Extents e(37, 23);
  const relax::StencilOperator<relax::Poisson5<double>> global(relax::Poisson5<double>{}, e);
  const std::vector<double> x = wavy<double>(e.nx * e.ny);
  CHECK(same_bits(split_multiply_all(relax::split_stencil(relax::Poisson5<double>{}, e, one_gpu(10)), x),
                  global_multiply(global, x)));
}

TEST_CASE("host-controlled CG on 10 parts of one GPU (two launches a step) converges and repeats bit for bit",
          "[multi_cg]") {
  relax::CgOptions options;
  options.rel_tol = 1e-8;
  const relax::Csr<double> a = relax::testing::scaled_poisson(40, 0.5);
  const std::vector<double> b = relax::testing::ones_rhs(a);
  const relax::CsrOperator<double> global(a);
  const std::function<std::vector<double>(const std::vector<double>&)> multiply = [&](const std::vector<double>& x) {
    return global_multiply(global, x);
  };
  const std::int64_t standard1 =
      solve_checked<relax::Unfused>(relax::split_csr(a, one_gpu(1)), b, options, multiply).iterations;
  const std::int64_t pipe1 = solve_checked<relax::Pipelined>(relax::split_csr(a, one_gpu(1)), b, options, multiply).iterations;
  const relax::CgReport standard = solve_checked<relax::Unfused>(relax::split_csr(a, one_gpu(10)), b, options, multiply);
  const relax::CgReport pipe = solve_checked<relax::Pipelined>(relax::split_csr(a, one_gpu(10)), b, options, multiply);
  INFO("k = 1: standard " << standard1 << ", pipelined " << pipe1 << "; k = 10: standard " << standard.iterations
                          << ", pipelined " << pipe.iterations);
  CHECK(std::abs(standard.iterations - standard1) <= relax::testing::split_iteration_bound(standard1));
  CHECK(std::abs(pipe.iterations - pipe1) <= relax::testing::split_iteration_bound(pipe1));
}

TEST_CASE("the CPU-free CG on parts whose rows differ in length: one way to apply them for all", "[multi_cg]") {
  const relax::Csr<double> a = long_then_short(4000);
  {
    const auto split = relax::split_csr(a, one_gpu(2));
    REQUIRE(split.parts[0].warp_rows());  // the parts alone would choose differently
    REQUIRE_FALSE(split.parts[1].warp_rows());
  }
  relax::CgOptions options;
  options.rel_tol = 1e-10;
  const relax::CsrOperator<double> global(a);
  const std::vector<double> b = relax::testing::ones_rhs(a);
  const std::function<std::vector<double>(const std::vector<double>&)> multiply = [&](const std::vector<double>& x) {
    return global_multiply(global, x);
  };
  for (int k : {2, 3}) {
    INFO(k << " parts");
    solve_checked<relax::Persistent>(relax::split_csr(a, one_gpu(k)), b, options, multiply);
    solve_checked<relax::PersistentPipelined>(relax::split_csr(a, one_gpu(k)), b, options, multiply);
  }
}

TEST_CASE("CG on several parts refuses bad input with a clear error", "[multi_cg][validation]") {
  const relax::Csr<double> a = relax::testing::scaled_poisson(4, 1.0);  // 16 rows
  relax::Csr<double> asymmetric = a;
  asymmetric.values[1] += 1.0;
  CHECK_THROWS_WITH(relax::split_csr(asymmetric, {0, 0}), Catch::Contains("symmetric"));
  relax::Csr<double> wide = a;
  wide.cols = a.rows + 1;
  CHECK_THROWS_WITH(relax::split_csr(wide, {0, 0}), Catch::Contains("square"));
  relax::Csr<double> broken = a;
  broken.col_idx[2] = 99;
  CHECK_THROWS_AS(relax::split_csr(broken, {0, 0}), relax::invalid_argument);
  CHECK_THROWS_WITH(relax::split_csr(a, std::vector<int>(17, 0)), Catch::Contains("parts"));
  CHECK_THROWS_WITH(relax::split_csr(a, {0, relax::device_count()}), Catch::Contains("devices"));
  CHECK_THROWS_WITH(relax::split_csr(a, {}), Catch::Contains("devices"));
  CHECK_THROWS_WITH(relax::split_stencil(relax::Poisson5<double>{}, relax::Extents(8, 3), one_gpu(4)),
                    Catch::Contains("parts"));
  CHECK_THROWS_WITH(relax::split_stencil(relax::Poisson7<double>{}, relax::Extents(8, 3), one_gpu(2)),
                    Catch::Contains("extents"));
  relax::MultiCG<relax::CsrPartOperator<double>, relax::Unfused> cg(relax::split_csr(a, {0, 0}));
  std::vector<double> b(16, 1.0), x(15, 0.0);
  CHECK_THROWS_WITH(cg.solve(b, x), Catch::Contains("x"));
  relax::CgOptions bad;
  bad.check_interval = 0;
  CHECK_THROWS_WITH((relax::MultiCG<relax::CsrPartOperator<double>, relax::Unfused>(relax::split_csr(a, {0}), bad)),
                    Catch::Contains("check_interval"));
}

// ‖b‖₂ underflows to 0 where every b[k]² does: refused on any number of parts, as by one GPU's CG
// and the reference; a b that is 0 is solved at once.
TEST_CASE("CG on several parts refuses a right-hand side whose 2-norm underflows", "[multi_cg][validation]") {
  const relax::Extents e(9, 7);
  for (int k : {1, 3}) {
    relax::MultiCG<relax::StencilSlabOperator<relax::Poisson5<double>>, relax::Unfused> host_controlled(
        relax::split_stencil(relax::Poisson5<double>{}, e, one_gpu(k)));
    relax::MultiCG<relax::StencilSlabOperator<relax::Poisson5<double>>, relax::PersistentPipelined> cpu_free(
        relax::split_stencil(relax::Poisson5<double>{}, e, one_gpu(k)));
    std::vector<double> b(63, 0.0), x(63, 0.0);
    b[5] = 1e-170;
    b[60] = -1e-170;  // in the last part where k = 3
    const auto underflow = Catch::Contains("2-norm does not underflow");
    const auto two_entries = Catch::Contains("2 entries");
    CHECK_THROWS_WITH(host_controlled.solve(b, x), underflow && two_entries);
    CHECK_THROWS_WITH(cpu_free.solve(b, x), underflow && two_entries);
    std::fill(b.begin(), b.end(), 0.0);
    const relax::CgReport report = cpu_free.solve(b, x);
    CHECK(report.converged());
    CHECK(std::all_of(x.begin(), x.end(), [](double v) { return v == 0.0; }));
  }
}

TEST_CASE("CG on several parts reports breakdown on an indefinite matrix and the cap", "[multi_cg]") {
  relax::Csr<double> a = relax::testing::scaled_poisson(6, 0.0);
  for (double& v : a.values) v = -v;  // negative definite: pᵀAp < 0 at once
  const std::vector<double> b(36, 1.0);
  std::vector<double> x(36, 0.0);
  relax::MultiCG<relax::CsrPartOperator<double>, relax::Unfused> cg(relax::split_csr(a, {0, 0}));
  CHECK(cg.solve(b, x).status == relax::CgStatus::breakdown);
  relax::CgOptions capped;
  capped.max_iterations = 3;
  relax::MultiCG<relax::CsrPartOperator<double>, relax::Pipelined> pipe(
      relax::split_csr(relax::testing::scaled_poisson(20, 2.0), {0, 0, 0}), capped);
  std::vector<double> b2(400, 1.0), x2(400, 0.0);
  const relax::CgReport r = pipe.solve(b2, x2);
  CHECK(r.status == relax::CgStatus::iteration_cap);
  CHECK(r.iterations == 3);
  relax::MultiCG<relax::CsrPartOperator<double>, relax::Persistent> free_breakdown(relax::split_csr(a, {0, 0}));
  std::fill(x.begin(), x.end(), 0.0);
  CHECK(free_breakdown.solve(b, x).status == relax::CgStatus::breakdown);
  relax::MultiCG<relax::CsrPartOperator<double>, relax::Persistent> free_capped(
      relax::split_csr(relax::testing::scaled_poisson(20, 2.0), {0, 0, 0}), capped);
  std::fill(x2.begin(), x2.end(), 0.0);
  const relax::CgReport c = free_capped.solve(b2, x2);
  CHECK(c.status == relax::CgStatus::iteration_cap);
  CHECK(c.iterations == 3);
  // CPU-free pipelined: η ≤ 0 at once, then pᵀAp < 0 on the direction: a breakdown; the cap.
  relax::MultiCG<relax::CsrPartOperator<double>, relax::PersistentPipelined> pipe_breakdown(relax::split_csr(a, {0, 0}));
  std::fill(x.begin(), x.end(), 0.0);
  CHECK(pipe_breakdown.solve(b, x).status == relax::CgStatus::breakdown);
  relax::MultiCG<relax::CsrPartOperator<double>, relax::PersistentPipelined> pipe_capped(
      relax::split_csr(relax::testing::scaled_poisson(20, 2.0), {0, 0, 0}), capped);
  std::fill(x2.begin(), x2.end(), 0.0);
  const relax::CgReport pc = pipe_capped.solve(b2, x2);
  CHECK(pc.status == relax::CgStatus::iteration_cap);
  CHECK(pc.iterations == 3);
}

TEST_CASE("the CPU-free CG on several parts ends a barrier that cannot complete with an error naming it",
          "[multi_cg]") {
  relax::MultiCG<relax::StencilSlabOperator<relax::Poisson5<double>>, relax::Persistent> cg(
      relax::split_stencil(relax::Poisson5<double>{}, relax::Extents(16, 16), one_gpu(2)));
  cg.set_absent_blocks_for_testing(1);
  std::vector<double> b(256, 1.0), x(256, 0.0);
  CHECK_THROWS_WITH(cg.solve(b, x), Catch::Contains("split_cg_persistent") && Catch::Contains("did not complete"));
  cg.set_absent_blocks_for_testing(0);  // and the solver is usable again
  std::fill(x.begin(), x.end(), 0.0);
  CHECK(cg.solve(b, x).converged());
  relax::MultiCG<relax::StencilSlabOperator<relax::Poisson5<double>>, relax::PersistentPipelined> pipe(
      relax::split_stencil(relax::Poisson5<double>{}, relax::Extents(16, 16), one_gpu(2)));
  pipe.set_absent_blocks_for_testing(1);
  std::fill(x.begin(), x.end(), 0.0);
  CHECK_THROWS_WITH(pipe.solve(b, x), Catch::Contains("split_cg_pipelined") && Catch::Contains("did not complete"));
  pipe.set_absent_blocks_for_testing(0);
  std::fill(x.begin(), x.end(), 0.0);
  CHECK(pipe.solve(b, x).converged());
}

TEST_CASE("CG on several parts, small boxes for the sanitizers", "[multi_cg][sanitize]") {
  relax::CgOptions options;
  options.rel_tol = 1e-8;
  options.replace_interval = 5;  // a checkpoint with replacement inside the run
  for (int k : {1, 3}) {
    const relax::Extents e(9, 7);
    const std::vector<double> b = wavy<double>(63);
    const relax::StencilOperator<relax::Poisson5<double>> global(relax::Poisson5<double>{}, e);
    const std::function<std::vector<double>(const std::vector<double>&)> multiply = [&](const std::vector<double>& x) {
      return global_multiply(global, x);
    };
    solve_checked<relax::Unfused>(relax::split_stencil(relax::Poisson5<double>{}, e, one_gpu(k)), b, options, multiply);
    solve_checked<relax::Pipelined>(relax::split_stencil(relax::Poisson5<double>{}, e, one_gpu(k)), b, options, multiply);
    solve_checked<relax::Persistent>(relax::split_stencil(relax::Poisson5<double>{}, e, one_gpu(k)), b, options,
                                     multiply);
    solve_checked<relax::PersistentPipelined>(relax::split_stencil(relax::Poisson5<double>{}, e, one_gpu(k)), b,
                                              options, multiply);
    const relax::Csr<double> a = relax::testing::scaled_poisson(8, 1.0);
    const relax::CsrOperator<double> csr(a);
    const std::vector<double> b2 = relax::testing::ones_rhs(a);
    const std::function<std::vector<double>(const std::vector<double>&)> m2 = [&](const std::vector<double>& x) {
      return global_multiply(csr, x);
    };
    solve_checked<relax::Pipelined>(relax::split_csr(a, one_gpu(k)), b2, options, m2);
    solve_checked<relax::Persistent>(relax::split_csr(a, one_gpu(k)), b2, options, m2);
    solve_checked<relax::PersistentPipelined>(relax::split_csr(a, one_gpu(k)), b2, options, m2);
    // Rows long enough for a warp per row.
    const relax::Csr<double> d = relax::testing::dense_spd(40);
    CHECK(relax::split_csr(d, one_gpu(k)).parts[0].warp_rows());
    const relax::CsrOperator<double> dense(d);
    const std::vector<double> b3 = relax::testing::ones_rhs(d);
    const std::function<std::vector<double>(const std::vector<double>&)> m3 = [&](const std::vector<double>& x) {
      return global_multiply(dense, x);
    };
    solve_checked<relax::Unfused>(relax::split_csr(d, one_gpu(k)), b3, options, m3);  // the batched warp rows
    solve_checked<relax::Persistent>(relax::split_csr(d, one_gpu(k)), b3, options, m3);
    solve_checked<relax::PersistentPipelined>(relax::split_csr(d, one_gpu(k)), b3, options, m3);
  }
}
