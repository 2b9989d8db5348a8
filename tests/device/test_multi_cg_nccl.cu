// CG on k sub-domains with the NCCL Comm policy (multi/cg_nccl.cuh), one rank on one GPU:
// MultiCG<Part, Unfused | Pipelined, Nccl> on k = 1, 2, 3 parts is MultiCG<Part, Variant>
// (HostCopy) bit for bit (iterate, iterations, residuals), since every GPU adds the all-gathered
// sums in the order the host adds them; the same with every transfer routed through NCCL's send
// and receive (to its own rank), so one GPU exercises them; on the Poisson operators and SPD
// matrices, generated and real. With the program's communicator of one rank (one process per
// GPU, alone here) and `split_csr_of_rank`: the same bits; a split for another rank count, or
// one rank's parts without that communicator, refused with a clear error. With NCCL's device API,
// the CPU-free variants over Nccl (windows, LSA pointers) are PeerStore's bit for bit, and a
// barrier that cannot complete is an error.
#include <catch2/catch.hpp>

#include "matrices.hpp"
#include "nccl_rank.hpp"
#include "real_matrices.hpp"
#include "split_cg.hpp"

#include <relax/multi/cg_nccl.cuh>
#include <relax/sparse/distribute.hpp>
#include <relax/sparse/matrix_market.hpp>
#include <relax/stencil/poisson.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace {

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// MultiCG<Part, Variant, Nccl> on `split()` against MultiCG<Part, Variant> on the same split,
// bit for bit; `routed`: every transfer through NCCL's send and receive.
template <class Variant, class Split, class T>
void check_nccl_equals_host_copy(const Split& split, const std::vector<T>& b, const relax::CgOptions& options,
                                 bool routed, const relax::Nccl& comm = {}) {
  using Part = typename decltype(split())::part_type;
  relax::MultiCG<Part, Variant> host(split(), options);
  relax::MultiCG<Part, Variant, relax::Nccl> nccl(split(), options, comm);
  if (routed) nccl.route_every_transfer_through_comm_for_testing();
  std::vector<T> want(b.size(), T(0)), got(b.size(), T(0));
  const relax::CgReport w = host.solve(b, want);
  const relax::CgReport g = nccl.solve(b, got);
  CHECK(w.converged());
  relax::testing::check_same_report(g, w);
  CHECK(same_bits(got, want));
}

using relax::testing::wavy;

}  // namespace

TEST_CASE("CG with NCCL on one rank is CG with HostCopy, bit for bit", "[multi_cg][nccl]") {
  relax::CgOptions options;
  options.rel_tol = 1e-8;
  options.replace_interval = 7;  // Pipelined: checkpoints with replacement inside the runs
  for (int k : {1, 2, 3}) {
    const std::vector<int> devices(static_cast<std::size_t>(k), 0);
    for (const bool routed : {false, true}) {
      INFO(k << " parts" << (routed ? ", every transfer through NCCL" : ""));
      for (const relax::Extents& e : {relax::Extents(70, 70), relax::Extents(257, 33)}) {
        const std::vector<double> b = wavy(e.nx * e.ny);
        auto split = [&] { return relax::split_stencil(relax::Poisson5<double>{}, e, devices); };
        check_nccl_equals_host_copy<relax::Unfused>(split, b, options, routed);
        check_nccl_equals_host_copy<relax::Pipelined>(split, b, options, routed);
      }
      const relax::Extents e3(20, 17, 13);
      auto split3 = [&] { return relax::split_stencil(relax::Poisson7<double>{}, e3, devices); };
      check_nccl_equals_host_copy<relax::Unfused>(split3, wavy(e3.nx * e3.ny * e3.nz), options, routed);
      for (const char* name : {"nos4", "bcsstk14"}) {
        INFO(name);
        const relax::Csr<double> a = relax::testing::read_real_matrix(RELAX_TEST_DATA_DIR, name);
        auto split_a = [&] { return relax::split_csr(a, devices, relax::Balance::nonzeros); };
        check_nccl_equals_host_copy<relax::Unfused>(split_a, relax::testing::ones_rhs(a), options, routed);
        check_nccl_equals_host_copy<relax::Pipelined>(split_a, relax::testing::ones_rhs(a), options, routed);
      }
      const relax::Csr<double> dense = relax::testing::dense_spd(60);  // every part reads every other
      auto split_d = [&] { return relax::split_csr(dense, devices); };
      check_nccl_equals_host_copy<relax::Unfused>(split_d, relax::testing::ones_rhs(dense), options, routed);
    }
  }
}

TEST_CASE("CG with the program's NCCL communicator of one rank is CG with HostCopy, bit for bit",
          "[multi_cg][nccl]") {
  const relax::testing::OneNcclRank rank;
  const relax::Nccl comm = rank.policy();
  relax::CgOptions options;
  options.rel_tol = 1e-8;
  options.replace_interval = 7;
  const relax::Csr<double> a = relax::testing::read_real_matrix(RELAX_TEST_DATA_DIR, "bcsstk14");
  const std::vector<double> b = relax::testing::ones_rhs(a);
  for (int k : {1, 2, 3})
    for (const bool routed : {false, true}) {
      INFO(k << " parts on rank 0 of 1" << (routed ? ", every transfer through NCCL" : ""));
      auto split = [&] { return relax::split_csr_of_rank(a, k, 1, 0, 0, relax::Balance::nonzeros); };
      check_nccl_equals_host_copy<relax::Unfused>(split, b, options, routed, comm);
      check_nccl_equals_host_copy<relax::Pipelined>(split, b, options, routed, comm);
    }
}

TEST_CASE("CG with NCCL refuses a split for other ranks with a clear error", "[multi_cg][nccl][validation]") {
  const relax::testing::OneNcclRank rank;
  const relax::Nccl comm = rank.policy();
  const relax::Csr<double> a = relax::testing::scaled_poisson(4, 1.0);
  using Cg = relax::MultiCG<relax::CsrPartOperator<double>, relax::Unfused, relax::Nccl>;
  // Rank 0 of 2 holds part 0 of 3; the communicator has one rank, whose parts are all three.
  CHECK_THROWS_WITH(Cg(relax::split_csr_of_rank(a, 3, 2, 0, 0), {}, comm), Catch::Contains("rank 0's parts"));
  // One rank's parts without the program's communicator.
  CHECK_THROWS_WITH((relax::MultiCG<relax::CsrPartOperator<double>, relax::Unfused>(relax::split_csr_of_rank(a, 3, 2, 1, 0))),
                    Catch::Contains("every part"));
  CHECK_THROWS_WITH(Cg(relax::split_csr_of_rank(a, 3, 2, 1, 0)), Catch::Contains("every part"));
  CHECK_THROWS_WITH(relax::split_csr_of_rank(a, 1, 2, 0, 0), Catch::Contains("parts"));
}

TEST_CASE("CG with the program's NCCL communicator on parts read from the file alone is the whole matrix's, bit for bit",
          "[multi_cg][nccl]") {
  const relax::testing::OneNcclRank rank;
  const relax::Nccl comm = rank.policy();
  relax::CgOptions options;
  options.rel_tol = 1e-8;
  const std::string path = std::string(RELAX_TEST_DATA_DIR) + "/suitesparse/bcsstk14.mtx";
  const relax::Csr<double> a = relax::read_matrix_market<double>(path);
  const std::vector<double> b = relax::testing::ones_rhs(a);
  using Cg = relax::MultiCG<relax::CsrPartOperator<double>, relax::Pipelined, relax::Nccl>;
  for (int k : {1, 2, 3}) {
    INFO(k << " parts on rank 0 of 1, each read on its own");
    std::vector<relax::CsrPart<double>> read;
    for (int p = 0; p < k; ++p) read.push_back(relax::read_matrix_market_part<double>(path, k, p));
    Cg from_file(relax::split_csr_of_rank(read, k, comm), options, comm);
    Cg from_whole(relax::split_csr_of_rank(a, k, 1, 0, 0), options, comm);
    std::vector<double> got(b.size(), 0.0), want(b.size(), 0.0);
    const relax::CgReport w = from_whole.solve(b, want);
    CHECK(w.converged());
    relax::testing::check_same_report(from_file.solve(b, got), w);
    CHECK(same_bits(got, want));
    if (k >= 2) {  // parts out of rank_parts' order, or not all of this rank's
      std::vector<relax::CsrPart<double>> swapped(read.rbegin(), read.rend());
      CHECK_THROWS_WITH(relax::split_csr_of_rank(swapped, k, comm), Catch::Contains("part index"));
      read.pop_back();
      CHECK_THROWS_WITH(relax::split_csr_of_rank(read, k, comm), Catch::Contains("rank 0's"));
    }
  }
  CHECK_THROWS_WITH(relax::split_csr_of_rank(std::vector<relax::CsrPart<double>>{}, 1, relax::Nccl{}),
                    Catch::Contains("comm.comm"));
}

#if __has_include(<nccl_device.h>)
namespace {

// The CPU-free `Variant` over Nccl (NCCL's windows and LSA pointers) on `split()` against the
// same variant over PeerStore: the same kernels on the same blocks, so the same report and x,
// bit for bit; and a repeat.
template <class Variant, class Split, class T>
void check_cpu_free_nccl(const Split& split, const std::vector<T>& b, const relax::CgOptions& options,
                         const relax::Nccl& comm) {
  using Part = typename decltype(split())::part_type;
  relax::MultiCG<Part, Variant> peer(split(), options);
  relax::MultiCG<Part, Variant, relax::Nccl> nccl(split(), options, comm);
  REQUIRE(nccl.persistent_blocks() == peer.persistent_blocks());
  std::vector<T> want(b.size(), T(0)), got(b.size(), T(0)), again(b.size(), T(0));
  const relax::CgReport w = peer.solve(b, want);
  const relax::CgReport g = nccl.solve(b, got);
  CHECK(w.converged());
  relax::testing::check_same_report(g, w);
  CHECK(same_bits(got, want));
  relax::testing::check_same_report(nccl.solve(b, again), g);
  CHECK(same_bits(again, got));
}

}  // namespace

TEST_CASE("CPU-free CG over NCCL's device API on one rank is PeerStore's, bit for bit", "[multi_cg][nccl][cpu_free]") {
  const relax::testing::OneNcclRank rank;
  const relax::Nccl program = rank.policy();
  relax::CgOptions options;
  options.rel_tol = 1e-8;
  options.replace_interval = 7;  // PersistentPipelined: several launches, checkpoints between them
  const relax::Csr<double> a = relax::testing::read_real_matrix(RELAX_TEST_DATA_DIR, "bcsstk14");
  const relax::Csr<double> dense = relax::testing::dense_spd(60);  // a warp a row
  for (const bool made : {true, false}) {
    const relax::Nccl comm = made ? relax::Nccl{} : program;
    for (int k : {1, 2, 3}) {
      INFO(k << " parts, " << (made ? "a communicator made for the GPU" : "the program's communicator"));
      const std::vector<int> devices(static_cast<std::size_t>(k), 0);
      const relax::Extents e(70, 70);
      auto split = [&] { return relax::split_stencil(relax::Poisson5<double>{}, e, devices); };
      check_cpu_free_nccl<relax::Persistent>(split, wavy(e.nx * e.ny), options, comm);
      check_cpu_free_nccl<relax::PersistentPipelined>(split, wavy(e.nx * e.ny), options, comm);
      const relax::Extents e3(20, 17, 13);
      auto split3 = [&] { return relax::split_stencil(relax::Poisson7<double>{}, e3, devices); };
      check_cpu_free_nccl<relax::Persistent>(split3, wavy(e3.nx * e3.ny * e3.nz), options, comm);
      auto split_a = [&] { return relax::split_csr(a, devices, relax::Balance::nonzeros); };
      check_cpu_free_nccl<relax::Persistent>(split_a, relax::testing::ones_rhs(a), options, comm);
      check_cpu_free_nccl<relax::PersistentPipelined>(split_a, relax::testing::ones_rhs(a), options, comm);
      auto split_d = [&] { return relax::split_csr(dense, devices); };
      check_cpu_free_nccl<relax::Persistent>(split_d, relax::testing::ones_rhs(dense), options, comm);
      check_cpu_free_nccl<relax::PersistentPipelined>(split_d, relax::testing::ones_rhs(dense), options, comm);
    }
  }
}

TEST_CASE("CPU-free CG over NCCL ends a barrier that cannot complete with an error naming it",
          "[multi_cg][nccl][cpu_free]") {
  const relax::Extents e(30, 30);
  const std::vector<double> b = wavy(e.nx * e.ny);
  relax::MultiCG<relax::StencilSlabOperator<relax::Poisson5<double>>, relax::Persistent, relax::Nccl> cg(
      relax::split_stencil(relax::Poisson5<double>{}, e, {0, 0}));
  cg.set_absent_blocks_for_testing(1);
  std::vector<double> x(b.size(), 0.0);
  CHECK_THROWS_WITH(cg.solve(b, x), Catch::Contains("split_cg_persistent") && Catch::Contains("did not complete"));
  // Refused as every Comm refuses the CPU-free Jacobi solver's settings.
  relax::Nccl apart;
  apart.launch_per_subdomain = true;
  CHECK_THROWS_WITH((relax::MultiCG<relax::StencilSlabOperator<relax::Poisson5<double>>, relax::Persistent, relax::Nccl>(
                        relax::split_stencil(relax::Poisson5<double>{}, e, {0}), {}, apart)),
                    Catch::Contains("launch_per_subdomain"));
}

TEST_CASE("CPU-free CG over NCCL, small problems for the sanitizers", "[multi_cg][nccl][sanitize]") {
  relax::CgOptions options;
  options.rel_tol = 1e-8;
  options.replace_interval = 5;
  const relax::Extents e(9, 7);
  auto split = [&] { return relax::split_stencil(relax::Poisson5<double>{}, e, {0, 0, 0}); };
  check_cpu_free_nccl<relax::Persistent>(split, wavy(e.nx * e.ny), options, relax::Nccl{});
  check_cpu_free_nccl<relax::PersistentPipelined>(split, wavy(e.nx * e.ny), options, relax::Nccl{});
}
#endif
