// The Nvshmem Comm policy (multi/nvshmem.cuh), one PE per process: each PE holds k ∈ {1, 2, 3, 4}
// sub-domains, every halo stored through NVSHMEM's mapping or (`store_when_mapped` off) put with a
// signal (to itself on one PE), and the solve is bit for bit
// the single-domain one (sweeps, checks, ρ, history, every held point), 2D and 3D, square,
// rectangular and degenerate boxes, float and double; the ten-step problem; many short solves;
// a sub-domain that never puts its edge rows ends the solve with an error naming it; bad
// settings refused. The host-controlled solver over NVSHMEM (Sync and TemporalBlock<D,
// ColumnStream> rounds, the halos put between them): the same bits. Run alone (one PE) or under
// `mpirun -np P` (P PEs, the comparisons on the rows each holds).
#include <relax/multi/nvshmem.cuh>  // first: the header compiles on its own

#include <catch2/catch.hpp>

#include "gpu_runs.hpp"
#include "grids.hpp"
#include "runs.hpp"
#include "split_runs.hpp"

#include <relax/solver/diffusion.cuh>
#include <relax/solver/solver.cuh>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>

#include <algorithm>
#include <string>
#include <vector>

using relax::Extents;
using relax::HostGrid;

namespace {

using CpuFree = relax::DeviceLoop<relax::Sync>;

const relax::NvshmemRuntime& runtime() { return *relax::NvshmemRuntime::active(); }

// `per_pe` sub-domains on this PE's GPU.
std::vector<int> mine(int per_pe) { return std::vector<int>(static_cast<std::size_t>(per_pe), runtime().device()); }

// The ways of moving a halo: stored through NVSHMEM's mapping, put with a signal, and put with a
// signal by boundary blocks apart (`BlockRoles::specialised`).
const std::vector<relax::Nvshmem>& halo_ways() {
  static const std::vector<relax::Nvshmem> comms = [] {
    relax::Nvshmem put;
    put.store_when_mapped = false;
    relax::Nvshmem roles = put;
    roles.blocks = relax::BlockRoles::specialised;
    return std::vector<relax::Nvshmem>{relax::Nvshmem{}, put, roles};
  }();
  return comms;
}

template <class S>
void check_nvshmem(const Extents& e, const S& s, int per_pe, int m = 8, std::int64_t max_sweeps = 400) {
  for (const relax::Nvshmem& comm : halo_ways()) {
    INFO(runtime().pes() << " PEs, " << (comm.store_when_mapped ? "stores where mapped" : "puts with a signal")
                         << (comm.blocks == relax::BlockRoles::specialised ? ", boundary blocks apart" : ""));
    relax::testing::check_split_equals_whole<CpuFree, relax::Nvshmem, relax::Sync>(e, s, mine(per_pe), m, max_sweeps,
                                                                                   comm);
  }
}

}  // namespace

TEST_CASE("NVSHMEM halos solve as one domain, bit for bit", "[multi][nvshmem]") {
  const relax::Stencil5<float> s(10.0);
  for (int per_pe : {1, 2, 3, 4}) {
    for (std::int64_t n : {70, 257})
      check_nvshmem(Extents(n, n), s, per_pe);
    check_nvshmem(Extents(1000, 70), s, per_pe);
    check_nvshmem(Extents(33, 517), s, per_pe, 5, 37);  // the cap, not a multiple of M
    check_nvshmem(Extents(40, 40, 40), relax::Stencil7<float>(1.0), per_pe);
    check_nvshmem(Extents(33, 17, 29), relax::Stencil7<double>(10.0), per_pe);
    check_nvshmem(Extents(257, 257), relax::Stencil5<double>(1.0), per_pe, 3, 50);
  }
  check_nvshmem(Extents(1000, 1000), s, 3, 8, 96);
  if (runtime().pes() == 1) {
    check_nvshmem(Extents(70, 4), s, 4);                                // one-row sub-domains
    check_nvshmem(Extents(9, 5, 4), relax::Stencil7<float>(10.0), 4);  // one-plane sub-domains
    check_nvshmem(Extents(1, 1), s, 1);
  }
}

TEST_CASE("NVSHMEM halos on small boxes, for the sanitizers", "[multi][nvshmem][sanitize]") {
  check_nvshmem(Extents(70, 33), relax::Stencil5<float>(10.0), 3, 4, 24);
  check_nvshmem(Extents(20, 9, 7), relax::Stencil7<float>(1.0), 2, 2, 10);
}

namespace {

// The host-controlled solver over NVSHMEM (launch-based rounds, the halos put between them).
template <class Strategy, class S>
void check_nvshmem_host(const Extents& e, const S& s, int per_pe, int m = 8, std::int64_t max_sweeps = 400) {
  INFO(runtime().pes() << " PEs, host-controlled");
  relax::testing::check_split_equals_whole<Strategy, relax::Nvshmem, relax::Sync>(e, s, mine(per_pe), m, max_sweeps,
                                                                                  relax::Nvshmem{});
}

using Stream4 = relax::TemporalBlock<4, relax::ColumnStream>;

}  // namespace

TEST_CASE("host-controlled rounds with NVSHMEM halos solve as one domain, bit for bit", "[multi][nvshmem][nvshmem_host]") {
  const relax::Stencil5<float> s(10.0);
  for (int per_pe : {1, 2, 3, 4}) {
    check_nvshmem_host<relax::Sync>(Extents(257, 257), s, per_pe);
    check_nvshmem_host<relax::Sync>(Extents(33, 517), s, per_pe, 5, 37);  // the cap, not a multiple of M
    check_nvshmem_host<Stream4>(Extents(1000, 70), s, per_pe);            // a 4-row halo every 4 sweeps
    check_nvshmem_host<relax::TemporalBlock<2, relax::ColumnStream>>(Extents(40, 40, 40), relax::Stencil7<float>(1.0),
                                                                     per_pe);
    check_nvshmem_host<relax::Sync>(Extents(33, 17, 29), relax::Stencil7<double>(10.0), per_pe);
  }
  if (runtime().pes() == 1) check_nvshmem_host<relax::Sync>(Extents(70, 4), s, 4);  // one-row sub-domains
}

TEST_CASE("host-controlled NVSHMEM halos on small boxes, for the sanitizers", "[multi][nvshmem][nvshmem_host][sanitize]") {
  check_nvshmem_host<Stream4>(Extents(70, 33), relax::Stencil5<float>(10.0), 2, 4, 24);
}

TEST_CASE("the ten-step problem with NVSHMEM halos is the single-domain run, bit for bit",
          "[multi][nvshmem][diffusion]") {
  const relax::Source src = GENERATE(relax::Source::point, relax::Source::gaussian);
  for (double r : {1.0, 10.0, 100.0}) {
    const relax::DiffusionParams p = relax::testing::diffusion_params(257, r, src, 3);
    HostGrid<float> want_u;
    const auto want = relax::testing::gpu_diffusion<relax::Stencil5<float>, relax::Sync>(
        p, want_u, relax::Fixed(8), {}, relax::StepLaunch::per_step);
    for (int per_pe : {2, 3}) {
      INFO("r = " << r << ", " << per_pe << " sub-domains per PE");
      relax::MultiSolver<relax::Stencil5<float>, CpuFree, relax::Nvshmem> solver(p.extents(), mine(per_pe),
                                                                               relax::Stencil5<float>(p.r));
      relax::DistributedDiffusionState<float> state(p, solver);
      const auto got = relax::run_diffusion(solver, state);
      relax::testing::check_same_run(got, relax::testing::gathered(state.u(), relax::initial_state<float>(p), want_u),
                                     want, want_u);
    }
  }
}

TEST_CASE("many short NVSHMEM solves lose or repeat no halo", "[multi][nvshmem]") {
  relax::testing::check_short_solves<CpuFree>(Extents(130, 61), relax::Stencil5<float>(10.0), 300, mine(4), halo_ways());
  relax::testing::check_short_solves<CpuFree>(Extents(20, 9, 13), relax::Stencil7<float>(1.0), 150, mine(4), halo_ways());
}

TEST_CASE("the NVSHMEM solver says how it moved the halos", "[multi][nvshmem]") {
  // On one GPU (one PE, or PEs whose GPUs are peers) NVSHMEM maps every neighbour.
  for (const relax::Nvshmem& comm : halo_ways()) {
    relax::MultiSolver<relax::Stencil5<float>, CpuFree, relax::Nvshmem> split(Extents(64, 64), mine(2),
                                                                            relax::Stencil5<float>(1.0), relax::Fixed(8),
                                                                            {}, comm);
    auto u = split.make_grid();
    auto b = split.make_grid();
    split.solve(u, b);
    if (!comm.store_when_mapped) CHECK_FALSE(split.stored_directly());
    else if (runtime().pes() == 1) CHECK(split.stored_directly());
  }
}

namespace {

// After a solve of an odd number of sweeps S on three sub-domains per PE, every held slab's word
// [p][side][r] holds the rows the neighbour on `side` sent for tile r into the array of parity p
// over the S sweeps: (S + 1) / 2 sweeps of parity 1 and S / 2 of parity 0, times 1 row in 2D and
// the tile's rows of the edge plane in 3D (tiles of 32 × 4 floats across and 8 rows); none where
// there is no neighbour. On one PE every wait is already met when it is reached (the grid barrier
// orders the sends), so this is what shows a count that is off.
template <class S>
void check_signal_counts(const Extents& e, const S& s, const relax::Nvshmem& comm) {
  INFO("box " << e.to_text() << ", " << (comm.store_when_mapped ? "stores where mapped" : "puts with a signal"));
  relax::SolveOptions options;
  options.tol = 1e-30;
  options.max_sweeps = 13;
  relax::MultiSolver<S, CpuFree, relax::Nvshmem> split(e, mine(3), s, relax::Fixed(4), options, comm);
  auto u = split.make_grid();
  auto b = split.make_grid();
  relax::HostGrid<typename S::value_type> random(e);  // zero grids would converge at the first check
  relax::testing::fill_random(random, 7);
  b.scatter(random);
  const relax::SolveReport report = split.solve(u, b);
  REQUIRE(report.sweeps == 13);
  const std::int64_t band = split.band_tiles(), tiles_x = (e.nx + 127) / 128;
  for (int k = u.first(); k < u.first() + u.held(); ++k) {
    const std::vector<unsigned long long> words = split.signal_words(k);
    REQUIRE(words.size() == static_cast<std::size_t>(4 * band));
    for (int parity = 0; parity < 2; ++parity)
      for (int side = 0; side < 2; ++side)
        for (std::int64_t r = 0; r < band; ++r) {
          const bool neighbour = side == 0 ? k > 0 : k + 1 < u.size();
          const std::int64_t rows = S::rank == 2 ? 1 : std::min<std::int64_t>(8, e.ny - r / tiles_x * 8);
          const std::int64_t sweeps = parity == 1 ? (report.sweeps + 1) / 2 : report.sweeps / 2;
          INFO("sub-domain " << k << ", parity " << parity << ", side " << side << ", tile " << r);
          CHECK(words[static_cast<std::size_t>((parity * 2 + side) * band + r)] ==
                static_cast<unsigned long long>(neighbour ? sweeps * rows : 0));
        }
  }
}

}  // namespace

TEST_CASE("the NVSHMEM signal words count every sweep's rows, by parity", "[multi][nvshmem]") {
  for (const relax::Nvshmem& comm : halo_ways()) {
    check_signal_counts(Extents(300, 61), relax::Stencil5<float>(10.0), comm);
    check_signal_counts(Extents(150, 19, 13), relax::Stencil7<float>(1.0), comm);
  }
}

TEST_CASE("a sub-domain that never puts its halo ends the NVSHMEM solve with an error naming it", "[multi][nvshmem]") {
  if (runtime().pes() != 1) return;  // the other PEs would see other waits fail first
  const Extents e(256, 96);
  const relax::Stencil5<float> s(10.0);
  for (relax::Nvshmem comm : halo_ways()) {
    INFO((comm.store_when_mapped ? "stores where mapped" : "puts with a signal"));
    comm.silent_subdomain = 1;
    comm.timeout_ns = 200'000'000;  // 0.2 s
    std::string what;
    {
      relax::MultiSolver<relax::Stencil5<float>, CpuFree, relax::Nvshmem> split(e, mine(3), s, relax::Fixed(8), {},
                                                                              comm);
      auto u = split.make_grid();
      auto b = split.make_grid();
      try {
        split.solve(u, b);
      } catch (const relax::device_loop_error& x) {
        what = x.what();
      }
    }
    CHECK_THAT(what, Catch::Contains("sub-domain 1 never put its edge rows"));
    // NVSHMEM is usable afterwards: a solve with every sub-domain sending completes.
    comm.silent_subdomain = -1;
    relax::testing::check_split_equals_whole<CpuFree, relax::Nvshmem, relax::Sync>(e, s, mine(3), 8, 64, comm);
  }
}

TEST_CASE("the NVSHMEM solver refuses bad settings", "[multi][nvshmem][validation]") {
  const relax::Stencil5<float> s(1.0);
  const Extents e(64, 64);
  using Multi = relax::MultiSolver<relax::Stencil5<float>, CpuFree, relax::Nvshmem>;
  relax::Nvshmem comm;
  comm.timeout_ns = 0;
  CHECK_THROWS_WITH(Multi(e, mine(2), s, relax::Fixed(8), {}, comm), Catch::Contains("comm.timeout_ns"));
  comm = {};
  comm.silent_subdomain = 2 * runtime().pes();
  CHECK_THROWS_WITH(Multi(e, mine(2), s, relax::Fixed(8), {}, comm), Catch::Contains("comm.silent_subdomain"));
  comm = {};
  CHECK_THROWS_WITH(Multi(e, {runtime().device() + 1}, s), Catch::Contains("this PE's device"));
  CHECK_THROWS_WITH(Multi(e, {}, s), Catch::Contains("at least one sub-domain"));
  CHECK_THROWS_WITH(Multi(e, mine(65), s), Catch::Contains("thinnest sub-domain"));
  relax::SolveOptions overlapped;
  overlapped.checks = relax::CheckMode::overlapped;
  CHECK_THROWS_WITH(Multi(e, mine(2), s, relax::Fixed(8), overlapped), Catch::Contains("options.checks"));
  // A grid outside the symmetric heap (the halos would land at no PE's address) is refused.
  Multi split(e, mine(2), s);
  relax::DistributedGrid<float> foreign(split.decomposition(), split.make_grid().first(), mine(2), {});
  auto b = split.make_grid();
  CHECK_THROWS_WITH(split.solve(foreign, b), Catch::Contains("symmetric heap"));
  // A second runtime in the process is refused.
  CHECK_THROWS_WITH(relax::NvshmemRuntime(runtime().device()), Catch::Contains("already running"));
}
