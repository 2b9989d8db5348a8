// CG on k sub-domains with the NVSHMEM Comm policy (multi/cg_nvshmem.cuh), one PE per process:
// MultiCG<Part, Unfused | Pipelined, Nvshmem> with k parts on each of the P PEs is
// MultiCG<Part, Variant> (HostCopy) on the same k·P parts in one process, bit for bit (report,
// and the entries of x this PE holds), since every PE adds the all-gathered sums in the order the
// host adds them; the same with every transfer routed through NVSHMEM's puts, inbox and barrier
// (to itself on one PE), so one GPU exercises them; on the Poisson operators (2D, rectangular,
// 3D) and SPD matrices, generated and real. The CPU-free variants over NVSHMEM (Persistent,
// PersistentPipelined: vectors, boards and barrier in the symmetric heap, reached through
// NVSHMEM's mapping) converge to the tolerance and repeat bit for bit; on one PE they are the
// PeerStore solve bit for bit (the same kernel on the same blocks); a barrier that cannot
// complete is an error, not a hang. Splits for another PE count, or parts off the PE's GPU,
// refused with a clear error on every PE. Parts each PE reads from the file alone make the split
// of the whole matrix (the same solves, bit for bit). Run alone (one PE) or under `mpirun -np P`.
#include <relax/multi/cg_nvshmem.cuh>  // first: the header compiles on its own

#include <catch2/catch.hpp>

#include "matrices.hpp"
#include "real_matrices.hpp"
#include "split_cg.hpp"

#include <relax/sparse/distribute.hpp>
#include <relax/sparse/matrix_market.hpp>
#include <relax/stencil/poisson.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {

const relax::NvshmemRuntime& runtime() { return *relax::NvshmemRuntime::active(); }

// The global entries [first, second) the held parts of `split` own.
template <class Split>
std::pair<std::size_t, std::size_t> held_range(const Split& split) {
  const relax::PartLayout& first = split.layout.parts[static_cast<std::size_t>(split.first_held)];
  const relax::PartLayout& last = split.layout.parts[static_cast<std::size_t>(split.first_held + split.size() - 1)];
  return {static_cast<std::size_t>(first.global_first), static_cast<std::size_t>(last.global_first + last.owned)};
}

// MultiCG<Part, Variant, Nvshmem> on this PE's parts of `split(parts, pes, pe, device)` against
// MultiCG<Part, Variant> on every part of the same split on this PE's GPU: the same report, and
// the same bits in the entries of x this PE holds (the others stay as they were).
template <class Variant, class Split, class T>
void check_nvshmem_equals_host_copy(const Split& split, int parts, const std::vector<T>& b,
                                    const relax::CgOptions& options, bool routed) {
  const int pes = runtime().pes(), pe = runtime().pe(), device = runtime().device();
  auto whole = split(parts, 1, 0, device);
  auto mine = split(parts, pes, pe, device);
  using Part = typename decltype(whole)::part_type;
  const auto [begin, end] = held_range(mine);

  relax::MultiCG<Part, Variant> host(std::move(whole), options);
  relax::MultiCG<Part, Variant, relax::Nvshmem> shmem(std::move(mine), options);
  if (routed) shmem.route_every_transfer_through_comm_for_testing();
  std::vector<T> want(b.size(), T(0)), got(b.size(), T(0));
  const relax::CgReport w = host.solve(b, want);
  const relax::CgReport g = shmem.solve(b, got);
  CHECK(w.converged());
  relax::testing::check_same_report(g, w);
  CHECK(std::memcmp(got.data() + begin, want.data() + begin, (end - begin) * sizeof(T)) == 0);
  for (std::size_t i = 0; i < got.size(); ++i)
    if (i < begin || i >= end) REQUIRE(got[i] == T(0));  // another PE's entries: not written here
}

// The CPU-free `Variant` over NVSHMEM on this PE's parts of `split(parts, pes, pe, device)`:
// converged with the true residual below the tolerance, a second solve the same bits; on one PE,
// MultiCG<Part, Variant> (PeerStore) on the same split bit for bit.
template <class Variant, class Split, class T>
void check_cpu_free_nvshmem(const Split& split, int parts, const std::vector<T>& b, const relax::CgOptions& options) {
  const int pes = runtime().pes(), pe = runtime().pe(), device = runtime().device();
  auto mine = split(parts, pes, pe, device);
  using Part = typename decltype(mine)::part_type;
  const auto [begin, end] = held_range(mine);
  const std::size_t bytes = (end - begin) * sizeof(T);
  relax::MultiCG<Part, Variant, relax::Nvshmem> shmem(std::move(mine), options);
  std::vector<T> got(b.size(), T(0)), again(b.size(), T(0));
  const relax::CgReport g = shmem.solve(b, got);
  const relax::CgReport a = shmem.solve(b, again);
  CHECK(g.converged());
  CHECK(g.relative_true_residual() < options.rel_tol);
  CHECK(a.iterations == g.iterations);
  CHECK(a.true_residual_norm == g.true_residual_norm);
  CHECK(std::memcmp(again.data() + begin, got.data() + begin, bytes) == 0);
  if (pes == 1) {
    relax::MultiCG<Part, Variant> peer(split(parts, 1, 0, device), options);
    std::vector<T> want(b.size(), T(0));
    relax::testing::check_same_report(g, peer.solve(b, want));
    CHECK(std::memcmp(got.data(), want.data(), b.size() * sizeof(T)) == 0);
  }
}

using relax::testing::wavy;

}  // namespace

TEST_CASE("CG with NVSHMEM is CG with HostCopy, bit for bit", "[multi_cg][nvshmem]") {
  relax::CgOptions options;
  options.rel_tol = 1e-8;
  options.replace_interval = 7;  // Pipelined: checkpoints with replacement inside the runs
  const int pes = runtime().pes();
  for (int k : {1, 2, 3}) {
    const int parts = k * pes;
    for (const bool routed : {false, true}) {
      INFO(k << " parts a PE on " << pes << " PEs" << (routed ? ", every transfer through NVSHMEM" : ""));
      for (const relax::Extents& e : {relax::Extents(70, 70), relax::Extents(257, 33)}) {
        auto split = [&](int n, int ranks, int rank, int device) {
          return relax::split_stencil_of_rank(relax::Poisson5<double>{}, e, n, ranks, rank, device);
        };
        const std::vector<double> b = wavy(e.nx * e.ny);
        check_nvshmem_equals_host_copy<relax::Unfused>(split, parts, b, options, routed);
        check_nvshmem_equals_host_copy<relax::Pipelined>(split, parts, b, options, routed);
      }
      const relax::Extents e3(20, 17, 13);
      auto split3 = [&](int n, int ranks, int rank, int device) {
        return relax::split_stencil_of_rank(relax::Poisson7<double>{}, e3, n, ranks, rank, device);
      };
      check_nvshmem_equals_host_copy<relax::Unfused>(split3, parts, wavy(e3.nx * e3.ny * e3.nz), options, routed);
      for (const char* name : {"nos4", "bcsstk14"}) {
        INFO(name);
        const relax::Csr<double> a = relax::testing::read_real_matrix(RELAX_TEST_DATA_DIR, name);
        auto split_a = [&](int n, int ranks, int rank, int device) {
          return relax::split_csr_of_rank(a, n, ranks, rank, device, relax::Balance::nonzeros);
        };
        check_nvshmem_equals_host_copy<relax::Unfused>(split_a, parts, relax::testing::ones_rhs(a), options, routed);
        check_nvshmem_equals_host_copy<relax::Pipelined>(split_a, parts, relax::testing::ones_rhs(a), options, routed);
      }
      const relax::Csr<double> dense = relax::testing::dense_spd(60);  // every part reads every other
      auto split_d = [&](int n, int ranks, int rank, int device) {
        return relax::split_csr_of_rank(dense, n, ranks, rank, device);
      };
      check_nvshmem_equals_host_copy<relax::Unfused>(split_d, parts, relax::testing::ones_rhs(dense), options, routed);
    }
  }
}

TEST_CASE("CPU-free CG with NVSHMEM converges, repeats, and on one PE is PeerStore's, bit for bit",
          "[multi_cg][nvshmem][cpu_free]") {
  relax::CgOptions options;
  options.rel_tol = 1e-8;
  options.replace_interval = 7;
  const int pes = runtime().pes();
  for (int k : {1, 2, 3}) {
    const int parts = k * pes;
    INFO(k << " parts a PE on " << pes << " PEs");
    for (const relax::Extents& e : {relax::Extents(70, 70), relax::Extents(257, 33)}) {
      auto split = [&](int n, int ranks, int rank, int device) {
        return relax::split_stencil_of_rank(relax::Poisson5<double>{}, e, n, ranks, rank, device);
      };
      const std::vector<double> b = wavy(e.nx * e.ny);
      check_cpu_free_nvshmem<relax::Persistent>(split, parts, b, options);
      check_cpu_free_nvshmem<relax::PersistentPipelined>(split, parts, b, options);
    }
    const relax::Extents e3(20, 17, 13);
    auto split3 = [&](int n, int ranks, int rank, int device) {
      return relax::split_stencil_of_rank(relax::Poisson7<double>{}, e3, n, ranks, rank, device);
    };
    check_cpu_free_nvshmem<relax::Persistent>(split3, parts, wavy(e3.nx * e3.ny * e3.nz), options);
    for (const char* name : {"nos4", "bcsstk14"}) {
      INFO(name);
      const relax::Csr<double> a = relax::testing::read_real_matrix(RELAX_TEST_DATA_DIR, name);
      auto split_a = [&](int n, int ranks, int rank, int device) {
        return relax::split_csr_of_rank(a, n, ranks, rank, device, relax::Balance::nonzeros);
      };
      check_cpu_free_nvshmem<relax::Persistent>(split_a, parts, relax::testing::ones_rhs(a), options);
      check_cpu_free_nvshmem<relax::PersistentPipelined>(split_a, parts, relax::testing::ones_rhs(a), options);
    }
    // Rows of 16 entries or more: a warp a row in the kernels.
    const relax::Csr<double> dense = relax::testing::dense_spd(60);
    auto split_d = [&](int n, int ranks, int rank, int device) {
      return relax::split_csr_of_rank(dense, n, ranks, rank, device);
    };
    check_cpu_free_nvshmem<relax::Persistent>(split_d, parts, relax::testing::ones_rhs(dense), options);
    check_cpu_free_nvshmem<relax::PersistentPipelined>(split_d, parts, relax::testing::ones_rhs(dense), options);
  }
}

TEST_CASE("CPU-free CG with NVSHMEM ends a barrier that cannot complete with an error", "[multi_cg][nvshmem][cpu_free]") {
  const int pes = runtime().pes(), pe = runtime().pe(), device = runtime().device();
  const relax::Csr<double> a = relax::testing::scaled_poisson(12, 1.0);
  const std::vector<double> b(static_cast<std::size_t>(a.rows), 1.0);
  relax::MultiCG<relax::CsrPartOperator<double>, relax::Persistent, relax::Nvshmem> cg(
      relax::split_csr_of_rank(a, 2 * pes, pes, pe, device));
  cg.set_absent_blocks_for_testing(1);
  std::vector<double> x(b.size(), 0.0);
  CHECK_THROWS_AS(cg.solve(b, x), relax::device_loop_error);
  cg.set_absent_blocks_for_testing(0);
  std::fill(x.begin(), x.end(), 0.0);
  CHECK(cg.solve(b, x).converged());  // the next solve meets at a barrier reset again
}

TEST_CASE("CG with NVSHMEM on small problems, for the sanitizers", "[multi_cg][nvshmem][sanitize]") {
  relax::CgOptions options;
  options.rel_tol = 1e-8;
  options.replace_interval = 7;
  const int parts = 2 * runtime().pes();
  const relax::Csr<double> a = relax::testing::read_real_matrix(RELAX_TEST_DATA_DIR, "nos4");
  auto split = [&](int n, int ranks, int rank, int device) {
    return relax::split_csr_of_rank(a, n, ranks, rank, device, relax::Balance::nonzeros);
  };
  check_nvshmem_equals_host_copy<relax::Unfused>(split, parts, relax::testing::ones_rhs(a), options, true);
  check_nvshmem_equals_host_copy<relax::Pipelined>(split, parts, relax::testing::ones_rhs(a), options, true);
  check_cpu_free_nvshmem<relax::Persistent>(split, parts, relax::testing::ones_rhs(a), options);
  check_cpu_free_nvshmem<relax::PersistentPipelined>(split, parts, relax::testing::ones_rhs(a), options);
}

TEST_CASE("CG with NVSHMEM refuses a split for other PEs with a clear error", "[multi_cg][nvshmem][validation]") {
  const int pes = runtime().pes(), pe = runtime().pe(), device = runtime().device();
  const relax::Csr<double> a = relax::testing::scaled_poisson(6, 1.0);
  using Cg = relax::MultiCG<relax::CsrPartOperator<double>, relax::Unfused, relax::Nvshmem>;
  // This PE's parts for a program of one more PE than there are (every PE refuses its own).
  CHECK_THROWS_WITH(Cg(relax::split_csr_of_rank(a, 2 * (pes + 1), pes + 1, pe, device)),
                    Catch::Contains("rank " + std::to_string(pe) + "'s parts"));
  // A part on another device than the PE's (an invalid ordinal counts as another device only
  // where it exists, so use the PE's device plus one where there is one).
  if (relax::device_count() > device + 1)
    CHECK_THROWS_WITH(Cg(relax::split_csr_of_rank(a, pes, pes, pe, device + 1)), Catch::Contains("this PE's device"));
  // Nvshmem settings MultiCG does not honour: refused on every PE, not ignored.
  relax::Nvshmem puts;
  puts.store_when_mapped = false;
  using CpuFree = relax::MultiCG<relax::CsrPartOperator<double>, relax::Persistent, relax::Nvshmem>;
  CHECK_THROWS_WITH(CpuFree(relax::split_csr_of_rank(a, 2 * pes, pes, pe, device), {}, puts),
                    Catch::Contains("comm.store_when_mapped"));
  // Bad vectors are refused on every PE before any collective call.
  Cg cg(relax::split_csr_of_rank(a, 2 * pes, pes, pe, device));
  std::vector<double> b(static_cast<std::size_t>(a.rows), 1.0), x(3, 0.0);
  CHECK_THROWS_WITH(cg.solve(b, x), Catch::Contains("one value per unknown"));
  x.assign(b.size(), 0.0);
  const relax::CgReport r = cg.solve(b, x);
  CHECK(r.converged());
}

TEST_CASE("CG with NVSHMEM on parts each PE reads from the file alone is the whole matrix's, bit for bit",
          "[multi_cg][nvshmem]") {
  const int pes = runtime().pes(), pe = runtime().pe(), device = runtime().device();
  relax::CgOptions options;
  options.rel_tol = 1e-8;
  const std::string path = std::string(RELAX_TEST_DATA_DIR) + "/suitesparse/bcsstk14.mtx";
  const relax::Csr<double> a = relax::read_matrix_market<double>(path);
  const std::vector<double> b = relax::testing::ones_rhs(a);
  for (int k : {1, 2}) {
    const int parts = k * pes;
    INFO(k << " parts a PE on " << pes << " PEs, each read on its own");
    const relax::RankParts held = relax::rank_parts(parts, pes, pe);
    std::vector<relax::CsrPart<double>> read;
    for (int p = held.first; p < held.first + held.count; ++p)
      read.push_back(relax::read_matrix_market_part<double>(path, parts, p));
    auto check = [&](auto variant) {
      using Cg = relax::MultiCG<relax::CsrPartOperator<double>, decltype(variant), relax::Nvshmem>;
      Cg from_file(relax::split_csr_of_rank(read, parts, runtime()), options);
      Cg from_whole(relax::split_csr_of_rank(a, parts, pes, pe, device), options);
      std::vector<double> got(b.size(), 0.0), want(b.size(), 0.0);
      const relax::CgReport w = from_whole.solve(b, want);
      CHECK(w.converged());
      relax::testing::check_same_report(from_file.solve(b, got), w);
      CHECK(std::memcmp(got.data(), want.data(), b.size() * sizeof(double)) == 0);
    };
    check(relax::Pipelined{});
    check(relax::Persistent{});
    if (k == 2) {  // out of rank_parts' order on every PE: every PE refuses
      std::vector<relax::CsrPart<double>> swapped(read.rbegin(), read.rend());
      CHECK_THROWS_WITH(relax::split_csr_of_rank(swapped, parts, runtime()), Catch::Contains("part index"));
    }
  }
}
