// The fused CG variants (Fused, Graph, Persistent, PersistentSingleReduction, Pipelined,
// ClusterResident, GridResident) against Unfused and the reference:
// the Poisson problem at awkward sizes and the shipped SPD files, known exact solutions,
// iteration counts within a small margin of Unfused's, statuses (cap, breakdown, non-finite),
// Graph bit-identical to Fused, reproducibility, and Pipelined's attainable accuracy on an
// ill-conditioned matrix. A separate executable from the other device tests, so that a failure
// here cannot hide their results.
#include <catch2/catch.hpp>

#include "matrices.hpp"
#include "vectors.hpp"

#include <relax/cpu/cg.hpp>
#include <relax/solver/cg.cuh>
#include <relax/sparse/device_csr.cuh>
#include <relax/sparse/matrix_market.hpp>
#include <relax/stencil/operator.cuh>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <type_traits>
#include <vector>

namespace ref = relax::reference;

namespace {

using relax::testing::random_vector;
using relax::testing::scaled_poisson;
using relax::testing::true_residual;
using relax::testing::relative_error;

relax::Csr<double> data_file(const char* name) {
  return relax::read_matrix_market<double>(std::string(RELAX_TEST_DATA_DIR "/") + name);
}

template <class Variant, class Operator, class T>
relax::CgReport solve_with(Operator op, const std::vector<T>& b, std::vector<T>& x, const relax::CgOptions& opt) {
  relax::CG<Operator, Variant> cg(std::move(op), opt);
  std::fill(x.begin(), x.end(), T(0));
  return cg.solve(b, x);
}

// Iterations of two CG implementations that differ only in the order of their sums.
void check_close_iterations(std::int64_t got, std::int64_t want) {
  INFO("iterations " << got << " against Unfused's " << want);
  CHECK(std::abs(got - want) <= 2 + want / 50);
}

}  // namespace

namespace {

template <class Variant>
void check_poisson_like_unfused(std::int64_t n) {
  const ref::Poisson5<double> host_op(n);
  std::vector<double> exact(random_vector<double>(host_op.size(), 31 + n));
  std::vector<double> b(exact.size()), x(exact.size()), x_unfused(exact.size());
  host_op.apply(exact.data(), b.data());
  relax::CgOptions opt;
  opt.rel_tol = 1e-11;
  const auto want = solve_with<relax::Unfused>(relax::Poisson5Operator<double>(n), b, x_unfused, opt);
  const auto got = solve_with<Variant>(relax::Poisson5Operator<double>(n), b, x, opt);
  INFO("n = " << n);
  REQUIRE(got.converged());
  check_close_iterations(got.iterations, want.iterations);
  CHECK(got.relative_residual() <= opt.rel_tol);
  CHECK(relative_error(x, exact) <= std::max(1e-9, 1e-12 * 4.0 * double(n * n)));
}

}  // namespace

TEMPLATE_TEST_CASE("CG variants solve the Poisson problem like Unfused", "[cg][variants][sanitize]",
                   relax::Fused, relax::Graph, relax::Persistent, relax::PersistentSingleReduction, relax::Pipelined,
                   relax::GridResident) {
  check_poisson_like_unfused<TestType>(GENERATE(1, 2, 70));
}

TEMPLATE_TEST_CASE("CG variants solve the Poisson problem like Unfused at N = 257", "[cg][variants]",
                   relax::Fused, relax::Graph, relax::Persistent, relax::PersistentSingleReduction, relax::Pipelined,
                   relax::GridResident) {
  check_poisson_like_unfused<TestType>(257);
}

TEMPLATE_TEST_CASE("CG variants solve the shipped SPD matrices", "[cg][variants][sanitize]", relax::Fused,
                   relax::Graph, relax::Persistent, relax::PersistentSingleReduction, relax::Pipelined,
                   relax::ClusterResident, relax::GridResident) {
  for (const char* name : {"poisson2d_10.mtx", "laplace1d_50_general.mtx", "spd_random_40.mtx"}) {
    INFO(name);
    const auto a = data_file(name);
    const std::vector<double> ones(static_cast<std::size_t>(a.rows), 1.0);
    std::vector<double> b(ones.size()), x(ones.size()), x_ref(ones.size(), 0.0);
    a.multiply(ones.data(), b.data());
    relax::CgOptions opt;
    opt.rel_tol = 1e-12;
    const auto got = solve_with<TestType>(relax::CsrOperator<double>(a), b, x, opt);
    const auto want = ref::cg(a, b, x_ref, opt);
    REQUIRE(got.converged());
    check_close_iterations(got.iterations, want.iterations);
    CHECK(relative_error(x, ones) <= 1e-9);
  }
}

namespace {

// Float32 to 1e-4 on an n² Poisson problem, then the statuses: the cap, a breakdown (an
// indefinite matrix) and a non-finite right-hand side.
template <class Variant>
void check_float32_and_statuses(std::int64_t n) {
  using TestType = Variant;
  relax::CgOptions opt;
  opt.rel_tol = 1e-4;  // float's attainable accuracy here is about 3e-5 (see CG's Pipelined notes)
  // Where the recurrence meets 1e-4 the true residual may not yet (residual_gap): a restart from
  // the true residual closes the gap.
  opt.restarts = 2;
  const auto bf = random_vector<float>(n * n, 5);
  std::vector<float> xf(bf.size());
  const auto f = solve_with<TestType>(relax::Poisson5Operator<float>(n), bf, xf, opt);
  INFO(relax::to_string(f.status) << " after " << f.iterations << " iterations, " << f.restarts
                                  << " restarts, true residual " << f.relative_true_residual());
  CHECK(f.converged());
  CHECK(f.relative_residual() <= 1e-4);
  CHECK(f.relative_true_residual() <= 1e-4);

  const std::int64_t m = 30;
  auto b = random_vector<double>(m * m, 9);
  std::vector<double> x(b.size());
  relax::CgOptions capped;
  capped.max_iterations = 5;
  capped.check_interval = 3;
  const auto cap = solve_with<TestType>(relax::Poisson5Operator<double>(m), b, x, capped);
  CHECK(cap.status == relax::CgStatus::iteration_cap);
  CHECK(cap.iterations == 5);

  std::istringstream in("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 1\n2 2 -1\n");
  const auto indefinite = relax::read_matrix_market<double>(in);
  std::vector<double> b2{1.0, 1.0}, x2(2);
  CHECK(solve_with<TestType>(relax::CsrOperator<double>(indefinite), b2, x2, {}).status ==
        relax::CgStatus::breakdown);
  CHECK(x2 == std::vector<double>{0.0, 0.0});  // frozen at the last good iterate

  b[17] = std::numeric_limits<double>::quiet_NaN();
  CHECK(solve_with<TestType>(relax::Poisson5Operator<double>(m), b, x, {}).status == relax::CgStatus::non_finite);
}

}  // namespace

TEMPLATE_TEST_CASE("CG variants in float32, and their statuses", "[cg][variants]", relax::Fused, relax::Graph,
                   relax::Persistent, relax::PersistentSingleReduction, relax::Pipelined, relax::GridResident) {
  check_float32_and_statuses<TestType>(257);
}

// ClusterResident keeps the problem in one cluster: up to 256² unknowns on the H200.
// Small enough for racecheck (40²: four blocks, so rows read other blocks' shared memory).
TEST_CASE("ClusterResident solves the Poisson problem like Unfused", "[cg][variants][cluster][sanitize]") {
  check_poisson_like_unfused<relax::ClusterResident>(GENERATE(1, 2, 40));
}

TEST_CASE("ClusterResident at the largest square it holds, in float64 and float32, and its statuses",
          "[cg][variants][cluster]") {
  using Cluster = relax::CG<relax::Poisson5Operator<double>, relax::ClusterResident>;
  const auto side = static_cast<std::int64_t>(std::sqrt(static_cast<double>(Cluster::cluster_capacity())));
  INFO("largest square: " << side << "²");
  REQUIRE(side >= 16);
  check_poisson_like_unfused<relax::ClusterResident>(70);  // ten blocks, a partial last one
  check_poisson_like_unfused<relax::ClusterResident>(side);
  check_float32_and_statuses<relax::ClusterResident>(side);
}

TEST_CASE("ClusterResident sizes its cluster from the problem and refuses what does not fit",
          "[cg][variants][cluster][validation]") {
  using Cluster = relax::CG<relax::Poisson5Operator<double>, relax::ClusterResident>;
  const std::int64_t capacity = Cluster::cluster_capacity();
  const std::int64_t largest = capacity / (relax::tuning::cg_cluster_threads * relax::tuning::cg_cluster_max_points_per_thread);
  REQUIRE(largest >= 1);
  for (std::int64_t n : {1, 40, 64, 100, 181, 256}) {
    if (n * n > capacity) continue;
    const Cluster cg{relax::Poisson5Operator<double>(n)};
    const std::int64_t per_block = std::int64_t{relax::tuning::cg_cluster_threads} * cg.cluster_points_per_thread();
    INFO("n = " << n << ": " << cg.cluster_blocks() << " blocks, " << cg.cluster_points_per_thread()
                << " unknowns a thread, largest cluster " << largest);
    CHECK(cg.cluster_blocks() == (n * n + per_block - 1) / per_block);  // every block owns some unknowns
    CHECK(cg.cluster_blocks() <= largest);
    // The fewest unknowns a thread: half as many would need a larger cluster than the device runs.
    if (cg.cluster_points_per_thread() > 1) CHECK(2 * n * n > largest * per_block);
  }
  const std::int64_t too_large = static_cast<std::int64_t>(std::sqrt(static_cast<double>(capacity))) + 1;
  CHECK_THROWS_AS(Cluster(relax::Poisson5Operator<double>(too_large)), relax::invalid_argument);
  CHECK_THROWS_WITH(Cluster(relax::Poisson5Operator<double>(too_large)),
                    Catch::Contains("ClusterResident") && Catch::Contains("PersistentSingleReduction"));
}

// GridResident's blocks own ranges of unknowns: at 256² two rows each (128 blocks of 256 threads
// at two unknowns a thread), at 70² a block's range ends inside a row, and its rows reach the
// unknowns of the blocks before and after it. Its largest problem fills every SM at eight
// unknowns a thread.
TEST_CASE("GridResident at the largest square it holds, in float64 and float32, and its statuses",
          "[cg][variants][grid_resident]") {
  using Resident = relax::CG<relax::Poisson5Operator<double>, relax::GridResident>;
  const auto side = static_cast<std::int64_t>(std::sqrt(static_cast<double>(Resident::resident_capacity())));
  INFO("largest square: " << side << "²");
  REQUIRE(side >= 64);
  check_poisson_like_unfused<relax::GridResident>(256);
  check_poisson_like_unfused<relax::GridResident>(side);
  check_float32_and_statuses<relax::GridResident>(side);
}

TEST_CASE("GridResident sizes its grid from the problem and refuses what does not fit",
          "[cg][variants][grid_resident][validation]") {
  using Resident = relax::CG<relax::Poisson5Operator<double>, relax::GridResident>;
  const std::int64_t sms = relax::current_sm_count();
  REQUIRE(Resident::resident_capacity() ==
          sms * relax::tuning::cg_resident_threads * relax::tuning::cg_resident_max_points_per_thread);
  for (std::int64_t n : {1, 15, 16, 70, 181, 256, 300, 500}) {
    if (n * n > Resident::resident_capacity()) continue;
    const Resident cg{relax::Poisson5Operator<double>(n)};
    const std::int64_t per_block = std::int64_t{relax::tuning::cg_resident_threads} * cg.resident_points_per_thread();
    INFO("n = " << n << ": " << cg.resident_blocks() << " blocks, " << cg.resident_points_per_thread()
                << " unknowns a thread, " << sms << " SMs");
    CHECK(cg.resident_blocks() == (n * n + per_block - 1) / per_block);  // every block owns some unknowns
    CHECK(cg.resident_blocks() <= sms);
    // The fewest unknowns a thread: half as many would need more blocks than SMs.
    if (cg.resident_points_per_thread() > 1) CHECK(2 * n * n > sms * per_block);
  }
  const std::int64_t too_large = static_cast<std::int64_t>(std::sqrt(static_cast<double>(Resident::resident_capacity()))) + 1;
  CHECK_THROWS_AS(Resident(relax::Poisson5Operator<double>(too_large)), relax::invalid_argument);
  CHECK_THROWS_WITH(Resident(relax::Poisson5Operator<double>(too_large)),
                    Catch::Contains("GridResident") && Catch::Contains("PersistentSingleReduction"));
}

TEST_CASE("GridResident's blocks give the same bits with their neighbours in shared or in global memory",
          "[cg][variants][grid_resident]") {
  // A block whose window does not fit in its shared memory recomputes its neighbours' r' from
  // global memory with the owners' operations: the same iterates, sums and decisions.
  for (std::int64_t n : {70, 256}) {
    const auto b = random_vector<double>(n * n, 53 + n);
    relax::CgOptions opt;
    opt.rel_tol = 1e-10;
    relax::CG<relax::Poisson5Operator<double>, relax::GridResident> windowed(relax::Poisson5Operator<double>(n), opt);
    relax::CG<relax::Poisson5Operator<double>, relax::GridResident> global(relax::Poisson5Operator<double>(n), opt);
    global.set_resident_window_for_testing(0);  // a block's own unknowns only
    std::vector<double> x1(b.size(), 0.0), x2(b.size(), 0.0);
    const auto want = windowed.solve(b, x1);
    const auto got = global.solve(b, x2);
    INFO("n = " << n << ": " << windowed.resident_blocks() << " blocks");
    REQUIRE(want.converged());
    CHECK(got.iterations == want.iterations);
    CHECK(got.true_residual_norm == want.true_residual_norm);
    CHECK(std::memcmp(x1.data(), x2.data(), x1.size() * sizeof(double)) == 0);
  }
}

TEMPLATE_TEST_CASE("The on-chip variants run Chronopoulos-Gear's iterations and are reproducible", "[cg][variants]",
                   relax::ClusterResident, relax::GridResident) {
  // The same recurrences and operations on every unknown as PersistentSingleReduction; only the
  // order of the sums differs (a cluster's or a grid's blocks, each summing its own range).
  for (std::int64_t n : {3, 64, 255}) {
    const auto b = random_vector<double>(n * n, 41 + n);
    std::vector<double> x1(b.size()), x2(b.size()), x3(b.size());
    relax::CgOptions opt;
    opt.rel_tol = 1e-10;
    const auto single = solve_with<relax::PersistentSingleReduction>(relax::Poisson5Operator<double>(n), b, x1, opt);
    relax::CG<relax::Poisson5Operator<double>, TestType> cg(relax::Poisson5Operator<double>(n), opt);
    std::fill(x2.begin(), x2.end(), 0.0);
    const auto on_chip = cg.solve(b, x2);
    std::fill(x3.begin(), x3.end(), 0.0);
    const auto again = cg.solve(b, x3);
    INFO("n = " << n);
    REQUIRE(on_chip.converged());
    check_close_iterations(on_chip.iterations, single.iterations);
    CHECK(relative_error(x2, x1) <= 1e-8);
    CHECK(again.iterations == on_chip.iterations);
    CHECK(std::memcmp(x2.data(), x3.data(), x2.size() * sizeof(double)) == 0);
  }
}

TEST_CASE("Graph runs Fused's iterations: the same count and bits at any check interval", "[cg][variants]") {
  const std::int64_t n = 100;
  const auto b = random_vector<double>(n * n, 13);
  std::vector<double> fused_x(b.size()), graph_x(b.size()), again_x(b.size());
  relax::CgOptions every;
  every.rel_tol = 1e-10;
  const auto fused = solve_with<relax::Fused>(relax::Poisson5Operator<double>(n), b, fused_x, every);
  relax::CgOptions odd = every;
  odd.check_interval = 7;  // graphs that start at odd and even iterations
  const auto graph = solve_with<relax::Graph>(relax::Poisson5Operator<double>(n), b, graph_x, odd);
  REQUIRE(fused.converged());
  REQUIRE(graph.converged());
  // The device stops at convergence, so checking less often changes nothing.
  CHECK(graph.iterations == fused.iterations);
  CHECK(std::memcmp(graph_x.data(), fused_x.data(), b.size() * sizeof(double)) == 0);
  // Two more solves with one solver give Fused's count and the same bits (graphs are reused only
  // when x keeps its address, which the vector convenience does not promise).
  relax::CG<relax::Poisson5Operator<double>, relax::Graph> cg(relax::Poisson5Operator<double>(n), odd);
  std::vector<double> first(b.size(), 0.0);
  cg.solve(b, first);
  const auto second = cg.solve(b, again_x);
  CHECK(second.iterations == fused.iterations);
  CHECK(std::memcmp(first.data(), again_x.data(), b.size() * sizeof(double)) == 0);
}

TEMPLATE_TEST_CASE("Persistent CG sizes its grid from the problem and occupancy and is reproducible", "[cg][variants]",
                   relax::Persistent, relax::PersistentSingleReduction) {
  const std::int64_t n = 64;
  relax::CG<relax::Poisson5Operator<double>, TestType> cg{relax::Poisson5Operator<double>(n)};
  // 4096 points fill fewer blocks than one per SM at two points a thread: one block per SM.
  CHECK(cg.persistent_blocks() == relax::current_sm_count());
  relax::CG<relax::Poisson5Operator<double>, TestType> large{relax::Poisson5Operator<double>(2048)};
  CHECK(large.persistent_blocks() > relax::current_sm_count());
  const auto b = random_vector<double>(n * n, 17);
  std::vector<double> x1(b.size(), 0.0), x2(b.size(), 0.0);
  const auto r1 = cg.solve(b, x1);
  const auto r2 = cg.solve(b, x2);
  CHECK(r1.converged());
  CHECK(r1.iterations == r2.iterations);
  CHECK(std::memcmp(x1.data(), x2.data(), x1.size() * sizeof(double)) == 0);
}

TEMPLATE_TEST_CASE("a persistent CG whose grid barrier cannot complete ends with an error naming the kernel",
                   "[cg][variants][validation]", relax::Persistent, relax::PersistentSingleReduction,
                   relax::GridResident) {
  const std::int64_t n = 40;
  relax::CG<relax::Poisson5Operator<double>, TestType> cg{relax::Poisson5Operator<double>(n)};
  const auto b = random_vector<double>(n * n, 29);
  std::vector<double> x(b.size(), 0.0);
  cg.set_absent_blocks_for_testing(1);  // the barrier waits for a block that does not exist
  const char* kernel = std::is_same_v<TestType, relax::Persistent>                  ? "cg_persistent:"
                       : std::is_same_v<TestType, relax::PersistentSingleReduction> ? "cg_persistent_single:"
                                                                                     : "cg_grid_resident:";
  CHECK_THROWS_AS(cg.solve(b, x), relax::device_loop_error);
  CHECK_THROWS_WITH(cg.solve(b, x), Catch::Contains(kernel) && Catch::Contains("did not complete"));
  // The solver serves the next solve.
  cg.set_absent_blocks_for_testing(0);
  std::fill(x.begin(), x.end(), 0.0);
  CHECK(cg.solve(b, x).converged());
}

TEST_CASE("Chronopoulos-Gear CG takes standard CG's iterations on the Poisson problem", "[cg][variants]") {
  // One reduction per iteration, α from a recurrence: the same iterates in exact arithmetic.
  for (std::int64_t n : {3, 64, 255}) {
    const auto b = random_vector<double>(n * n, 41 + n);
    std::vector<double> x1(b.size()), x2(b.size());
    relax::CgOptions opt;
    opt.rel_tol = 1e-10;
    const auto standard = solve_with<relax::Persistent>(relax::Poisson5Operator<double>(n), b, x1, opt);
    const auto single = solve_with<relax::PersistentSingleReduction>(relax::Poisson5Operator<double>(n), b, x2, opt);
    INFO("n = " << n);
    REQUIRE(single.converged());
    check_close_iterations(single.iterations, standard.iterations);
    CHECK(relative_error(x2, x1) <= 1e-8);
  }
}

TEST_CASE("Pipelined CG reaches standard CG's true residual on an ill-conditioned matrix", "[cg][variants]") {
  const auto a = scaled_poisson(40, 1.5);
  const auto exact = random_vector<double>(a.rows, 23);
  std::vector<double> b(exact.size()), x_cg(b.size()), x_pipe(b.size()), x_plain(b.size());
  a.multiply(exact.data(), b.data());
  relax::CgOptions opt;
  opt.rel_tol = 1e-11;
  opt.max_iterations = 50000;
  const auto standard = solve_with<relax::Unfused>(relax::CsrOperator<double>(a), b, x_cg, opt);
  const auto pipelined = solve_with<relax::Pipelined>(relax::CsrOperator<double>(a), b, x_pipe, opt);
  REQUIRE(standard.converged());
  REQUIRE(pipelined.converged());
  const double want = true_residual(a, b, x_cg), got = true_residual(a, b, x_pipe);
  INFO("true residual: standard " << want << " (" << standard.iterations << " iterations), pipelined "
                                  << got << " (" << pipelined.iterations << ")");
  CHECK(got <= std::max(10.0 * want, 1e-10));
  // For the record: without replacement the recurrence drifts from the true residual.
  relax::CgOptions never = opt;
  never.replace_interval = opt.max_iterations;
  const auto plain = solve_with<relax::Pipelined>(relax::CsrOperator<double>(a), b, x_plain, never);
  WARN("pipelined without replacement: " << relax::to_string(plain.status) << " after " << plain.iterations
                                         << " iterations, true residual " << true_residual(a, b, x_plain)
                                         << "; with replacement " << got << "; standard CG " << want);
}

// ‖b‖₂ underflows to 0 where every b[k]² does (1e-170² < the smallest double): every variant
// refuses such a b, as the reference does, rather than measuring ρ against ‖b‖ = 0 and stopping at
// once, "converged". A b that is 0 is solved (x = 0 at once), not refused.
TEMPLATE_TEST_CASE("CG variants refuse a right-hand side whose 2-norm underflows", "[cg][variants][validation]",
                   relax::Unfused, relax::Fused, relax::Graph, relax::Persistent, relax::PersistentSingleReduction,
                   relax::Pipelined, relax::ClusterResident, relax::GridResident) {
  const std::int64_t n = 20;
  relax::CG<relax::Poisson5Operator<double>, TestType> cg{relax::Poisson5Operator<double>(n)};
  std::vector<double> b(n * n, 1e-170), x(n * n, 0.0);
  b[n * n / 2] = -3e-170;  // the largest |b[k]|, which the error names
  CHECK_THROWS_AS(cg.solve(b, x), relax::invalid_argument);
  CHECK_THROWS_WITH(cg.solve(b, x), Catch::Contains("2-norm does not underflow") && Catch::Contains("3e-170"));
  std::fill(b.begin(), b.end(), 0.0);
  std::fill(x.begin(), x.end(), 0.0);
  const relax::CgReport report = cg.solve(b, x);
  CHECK(report.status == relax::CgStatus::converged);
  CHECK(report.rhs_norm == 0.0);
  CHECK(std::all_of(x.begin(), x.end(), [](double v) { return v == 0.0; }));
}
