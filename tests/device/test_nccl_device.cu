// NCCL's device API (multi/nccl_device.cuh): the CPU-free solver with one process per GPU, here
// one rank on one GPU holding k ∈ {1, 2, 3, 4} sub-domains, every link between them through
// NCCL's symmetric windows and LSA pointers: bit for bit the single-domain solve (sweeps, checks,
// ρ, history, every point), 2D and 3D, square, rectangular and degenerate boxes, float and
// double, the Sync walk and the streamed loop, one kernel for the rank and one per sub-domain
// (the flags and the norm board then cross kernels through the windows too); many short solves
// lose or repeat no halo; a program's communicator (ncclCommInitRank) gives the same bits and is
// left alive; a sub-domain that never signals ends the solve with an error naming it; bad
// settings refused.
#include <relax/multi/nccl_device.cuh>  // first: the header compiles on its own

#include <catch2/catch.hpp>

#include "grids.hpp"
#include "nccl_rank.hpp"
#include "runs.hpp"
#include "split_runs.hpp"

#include <relax/solver/solver.cuh>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>

#include <string>
#include <vector>

using relax::Extents;

namespace {

using CpuFree = relax::DeviceLoop<relax::Sync>;
template <int D>
using CpuFreeStream = relax::DeviceLoop<relax::TemporalBlock<D, relax::ColumnStream>>;

// One kernel for the rank's sub-domains, and one kernel per sub-domain.
std::vector<relax::Nccl> both_launches() {
  relax::Nccl apart;
  apart.launch_per_subdomain = true;
  return {relax::Nccl{}, apart};
}

std::vector<int> on_gpu0(int k) { return std::vector<int>(static_cast<std::size_t>(k), 0); }

// The split on one rank against the single-domain Sync solve.
template <class Strategy, class S>
void check_nccl_device(const Extents& e, const S& s, int per_rank, int m = 8, std::int64_t max_sweeps = 400) {
  for (const relax::Nccl& comm : both_launches()) {
    if (comm.launch_per_subdomain && per_rank == 1) continue;
    INFO((comm.launch_per_subdomain ? "a kernel per sub-domain" : "one kernel for the rank"));
    relax::testing::check_split_equals_whole<Strategy, relax::Nccl, relax::Sync>(e, s, on_gpu0(per_rank), m, max_sweeps,
                                                                                comm);
  }
}

}  // namespace

TEST_CASE("NCCL's device API: sub-domains on one rank solve as one domain, bit for bit", "[multi][nccl][nccl_device]") {
  int version = 0;
  REQUIRE(ncclGetVersion(&version) == ncclSuccess);
  REQUIRE(version == NCCL_VERSION_CODE);  // the device API runs against the headers it was built with
  const relax::Stencil5<float> s(10.0);
  for (int per_rank : {1, 2, 3, 4}) {
    INFO(per_rank << " sub-domains on the rank");
    for (std::int64_t n : {70, 257})
      check_nccl_device<CpuFree>(Extents(n, n), s, per_rank);
    check_nccl_device<CpuFree>(Extents(1000, 70), s, per_rank);
    check_nccl_device<CpuFree>(Extents(33, 517), s, per_rank, 5, 37);  // the cap, not a multiple of M
    check_nccl_device<CpuFree>(Extents(40, 40, 40), relax::Stencil7<float>(1.0), per_rank);
    check_nccl_device<CpuFree>(Extents(33, 17, 29), relax::Stencil7<double>(10.0), per_rank);
    check_nccl_device<CpuFreeStream<4>>(Extents(1000, 70), s, per_rank);  // a 4-row halo every 4 sweeps
    check_nccl_device<CpuFreeStream<8>>(Extents(257, 257), relax::Stencil5<double>(1.0), per_rank, 3, 50);
    check_nccl_device<CpuFreeStream<2>>(Extents(40, 40, 40), relax::Stencil7<float>(1.0), per_rank);
  }
  check_nccl_device<CpuFree>(Extents(70, 4), s, 4);                                // one-row sub-domains
  check_nccl_device<CpuFree>(Extents(9, 5, 4), relax::Stencil7<float>(10.0), 4);  // one-plane sub-domains
  check_nccl_device<CpuFree>(Extents(1, 1), s, 1);
}

TEST_CASE("NCCL's device API on small boxes, for the sanitizers", "[multi][nccl][nccl_device][sanitize]") {
  check_nccl_device<CpuFree>(Extents(70, 33), relax::Stencil5<float>(10.0), 3, 4, 24);
  check_nccl_device<CpuFreeStream<2>>(Extents(20, 9, 13), relax::Stencil7<float>(1.0), 2, 2, 10);
}

TEST_CASE("many short CPU-free solves over NCCL's windows lose or repeat no halo", "[multi][nccl][nccl_device]") {
  relax::testing::check_short_solves<CpuFree>(Extents(130, 61), relax::Stencil5<float>(10.0), 200, on_gpu0(4),
                                              both_launches());
  relax::testing::check_short_solves<CpuFreeStream<2>>(Extents(20, 9, 13), relax::Stencil7<float>(1.0), 100, on_gpu0(3),
                                                       both_launches());
}

TEST_CASE("NCCL's device API with a program's communicator: the same bits, the communicator left alive",
          "[multi][nccl][nccl_device][processes]") {
  const relax::testing::OneNcclRank rank;
  relax::Nccl policy;
  policy.comm = rank.comm;
  relax::testing::check_split_equals_whole<CpuFree, relax::Nccl, relax::Sync>(Extents(257, 257), relax::Stencil5<float>(10.0),
                                                                              on_gpu0(2), 8, 400, policy);
  relax::testing::check_split_equals_whole<CpuFreeStream<4>, relax::Nccl, relax::Sync>(
      Extents(1000, 70), relax::Stencil5<float>(10.0), on_gpu0(3), 8, 400, policy);
  int ranks = 0;
  CHECK(ncclCommCount(rank.comm, &ranks) == ncclSuccess);
  CHECK(ranks == 1);
}

TEST_CASE("a sub-domain that never signals ends the NCCL device-API solve with an error naming it",
          "[multi][nccl][nccl_device]") {
  const Extents e(256, 96);
  const relax::Stencil5<float> s(10.0);
  relax::Nccl comm;
  comm.launch_per_subdomain = true;  // flags are kept back only between kernels
  comm.silent_subdomain = 1;
  comm.timeout_ns = 200'000'000;  // 0.2 s
  using Multi = relax::MultiSolver<relax::Stencil5<float>, CpuFree, relax::Nccl>;
  Multi split(e, on_gpu0(3), s, relax::Fixed(8), {}, comm);
  auto u = split.make_grid();
  auto b = split.make_grid();
  CHECK_THROWS_WITH(split.solve(u, b), Catch::Contains("sub-domain 1 never stored its edge rows"));
  comm.silent_subdomain = -1;  // and a solver of the same windows' kind works afterwards
  Multi healthy(e, on_gpu0(3), s, relax::Fixed(8), {}, comm);
  auto hu = healthy.make_grid();
  auto hb = healthy.make_grid();
  CHECK_NOTHROW(healthy.solve(hu, hb));
}

TEST_CASE("NCCL's device API refuses what it cannot run", "[multi][nccl][nccl_device][validation]") {
  using Multi = relax::MultiSolver<relax::Stencil5<float>, CpuFree, relax::Nccl>;
  const relax::Stencil5<float> s(1.0);
  CHECK_THROWS_WITH(Multi(Extents(64, 64), {0, 1}, s), Catch::Contains("one GPU per process") &&
                                                          Catch::Contains("relax::PeerStore"));
  relax::Nccl comm;
  comm.timeout_ns = 0;
  CHECK_THROWS_WITH(Multi(Extents(64, 64), {0, 0}, s, relax::Fixed(8), {}, comm), Catch::Contains("comm.timeout_ns"));
  comm = relax::Nccl{};
  comm.silent_subdomain = 0;  // one kernel for both: no flags to keep back
  CHECK_THROWS_WITH(Multi(Extents(64, 64), {0, 0}, s, relax::Fixed(8), {}, comm), Catch::Contains("comm.silent_subdomain"));
  CHECK_THROWS_WITH(Multi(Extents(64, 3), {0, 0, 0, 0}, s), Catch::Contains("thinnest sub-domain"));
  // A grid not made by the solver (not in NCCL's windows) is refused before any kernel runs.
  Multi split(Extents(64, 64), {0, 0}, s);
  relax::MultiSolver<relax::Stencil5<float>, CpuFree, relax::PeerStore> other(Extents(64, 64), {0, 0}, s);
  auto u = other.make_grid();
  auto b = split.make_grid();
  CHECK_THROWS_WITH(split.solve(u, b), Catch::Contains("NCCL's windows"));
}
