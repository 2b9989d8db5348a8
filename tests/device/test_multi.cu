// Jacobi on k sub-domains on one GPU (the device named k times): sweeps, checks, ρ, status and
// every owned point bit for bit those of the single-domain solve, 2D and 3D, square and
// rectangular boxes, host-controlled with HostCopy (Sync, an exchange every sweep, with and
// without its overlap with interior compute, and TemporalBlock<D, ColumnStream> and
// TemporalBlock<D, Tile>, a D-row halo every D sweeps; BlockAsync<D>, whose halos are stale
// within a launch, against the host emulation of the split) and CPU-free with PeerStore
// (DeviceLoop<Sync>, and DeviceLoop<TemporalBlock<D, ColumnStream>> with a D-row halo every
// pass: one kernel for all sub-domains, one kernel per sub-domain, and two kernels); bad devices
// and a split too thin for its halo refused with a message; a sub-domain that never signals ends
// the solve with an error naming it; many short solves lose or repeat no halo.
#include <catch2/catch.hpp>

#include "gpu_runs.hpp"
#include "grids.hpp"
#include "runs.hpp"
#include "split_runs.hpp"

#include <relax/cpu/split.hpp>
#include <relax/multi/host_copy.cuh>
#include <relax/multi/peer_store.cuh>
#include <relax/reference/tiled.hpp>
#include <relax/solver/diffusion.cuh>
#include <relax/solver/solver.cuh>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

using relax::DeviceGrid;
using relax::Extents;
using relax::HostGrid;

namespace {

// The single-domain solve with `Whole` against `parts` sub-domains on GPU 0.
template <class Strategy, class Comm = relax::HostCopy, class Whole = Strategy, class S>
void check_split_equals_whole(const Extents& e, const S& s, int parts, int m = 8, std::int64_t max_sweeps = 400,
                              const Comm& comm = {}) {
  relax::testing::check_split_equals_whole<Strategy, Comm, Whole>(e, s, std::vector<int>(static_cast<std::size_t>(parts), 0),
                                                                  m, max_sweeps, comm);
}

}  // namespace

TEST_CASE("k sub-domains on one GPU solve as one, bit for bit (Sync, HostCopy)", "[multi][host_copy]") {
  const relax::Stencil5<float> s(10.0);
  for (int parts : {1, 2, 3, 4}) {
    for (std::int64_t n : {70, 257})
      check_split_equals_whole<relax::Sync>(Extents(n, n), s, parts);
    check_split_equals_whole<relax::Sync>(Extents(1000, 70), s, parts);
    check_split_equals_whole<relax::Sync>(Extents(33, 517), s, parts, 5, 37);  // the cap, not a multiple of M
    check_split_equals_whole<relax::Sync>(Extents(40, 40, 40), relax::Stencil7<float>(1.0), parts);
    check_split_equals_whole<relax::Sync>(Extents(33, 17, 29), relax::Stencil7<double>(10.0), parts);
  }
  check_split_equals_whole<relax::Sync>(Extents(1000, 1000), s, 3, 8, 96);
  check_split_equals_whole<relax::Sync>(Extents(70, 4), s, 4);  // one-row sub-domains
}

TEST_CASE("k sub-domains on one GPU solve as one with the exchange overlapping interior compute (Sync, HostCopy)",
          "[multi][host_copy][overlap]") {
  relax::HostCopy overlap;
  overlap.overlap = true;
  const relax::Stencil5<float> s(10.0);
  for (int parts : {1, 2, 3, 4}) {
    for (std::int64_t n : {70, 257})
      check_split_equals_whole<relax::Sync>(Extents(n, n), s, parts, 8, 400, overlap);
    check_split_equals_whole<relax::Sync>(Extents(1000, 70), s, parts, 8, 400, overlap);
    check_split_equals_whole<relax::Sync>(Extents(33, 517), s, parts, 5, 37, overlap);
    check_split_equals_whole<relax::Sync>(Extents(40, 40, 40), relax::Stencil7<float>(1.0), parts, 8, 400, overlap);
    check_split_equals_whole<relax::Sync>(Extents(33, 17, 29), relax::Stencil7<double>(10.0), parts, 8, 400, overlap);
  }
  check_split_equals_whole<relax::Sync>(Extents(70, 4), s, 4, 8, 400, overlap);   // one-row slabs: edges only
  check_split_equals_whole<relax::Sync>(Extents(70, 6), s, 3, 8, 400, overlap);   // two-row slabs
  check_split_equals_whole<relax::Sync>(Extents(9, 5, 4), relax::Stencil7<float>(10.0), 4, 8, 400, overlap);
  check_split_equals_whole<relax::Sync>(Extents(1, 1), s, 1, 8, 400, overlap);
}

TEST_CASE("the overlapped exchange on small boxes, for the sanitizers", "[multi][host_copy][overlap][sanitize]") {
  relax::HostCopy overlap;
  overlap.overlap = true;
  check_split_equals_whole<relax::Sync>(Extents(70, 33), relax::Stencil5<float>(10.0), 3, 4, 24, overlap);
  check_split_equals_whole<relax::Sync>(Extents(20, 9, 7), relax::Stencil7<float>(1.0), 2, 2, 10, overlap);
}

TEST_CASE("k sub-domains on one GPU solve as one with a D-row halo (TemporalBlock<D, ColumnStream>, HostCopy)",
          "[multi][host_copy]") {
  const relax::Stencil5<float> s(10.0);
  for (int parts : {1, 2, 3, 4}) {
    check_split_equals_whole<relax::TemporalBlock<4, relax::ColumnStream>>(Extents(257, 257), s, parts);
    check_split_equals_whole<relax::TemporalBlock<8, relax::ColumnStream>>(Extents(1000, 70), s, parts);
    check_split_equals_whole<relax::TemporalBlock<3, relax::ColumnStream>>(Extents(70, 70), s, parts, 8, 37);
    check_split_equals_whole<relax::TemporalBlock<2, relax::ColumnStream>>(Extents(40, 40, 40), relax::Stencil7<float>(1.0),
                                                                          parts);
  }
  check_split_equals_whole<relax::TemporalBlock<8, relax::ColumnStream>>(Extents(1000, 1000), s, 3, 8, 96);
}

TEST_CASE("k sub-domains on one GPU solve as one with tiled exact temporal blocking (TemporalBlock<D, Tile>, HostCopy)",
          "[multi][host_copy][tiled]") {
  const relax::Stencil5<float> s(10.0);
  for (int parts : {1, 2, 3, 4}) {
    check_split_equals_whole<relax::TemporalBlock<4>>(Extents(257, 257), s, parts);
    check_split_equals_whole<relax::TemporalBlock<3>>(Extents(1000, 70), s, parts, 8, 400);
    check_split_equals_whole<relax::TemporalBlock<2>>(Extents(33, 517), s, parts, 5, 37);
  }
}

namespace {

// BlockAsync<D> on `parts` slabs of GPU 0 against the host emulation of the same split
// (reference::solve_split with the TiledSchedule of D and the tile): report and bits.
template <int D, class S>
void check_block_async_split(const Extents& e, const S& s, int parts, int m = 8, std::int64_t max_sweeps = 400) {
  using T = typename S::value_type;
  using Tile = typename relax::BlockAsync<D>::tile;
  INFO("box " << e.to_text() << ", " << parts << " sub-domains, BlockAsync<" << D << ">, M = " << m);
  HostGrid<T> u(e), b(e);
  relax::testing::fill_random(u, 17 + e.nx, 0.0, 10.0);
  relax::testing::fill_random(b, 19 + e.ny);
  relax::SolveOptions options;
  options.max_sweeps = max_sweeps;
  options.record_history = true;
  relax::MultiSolver<S, relax::BlockAsync<D>, relax::HostCopy> split(e, std::vector<int>(static_cast<std::size_t>(parts), 0),
                                                                   s, relax::Fixed(m), options);
  auto su = split.make_grid();
  auto sb = split.make_grid();
  su.scatter(u);
  sb.scatter(b);
  const relax::SolveReport got = split.solve(su, sb);
  HostGrid<T> got_u = u;
  su.gather(got_u);
  HostGrid<T> want_u = u;
  const relax::SolveReport want = relax::reference::solve_split(
      s, split.decomposition(), want_u, b, m, options, relax::reference::Exec::openmp(),
      relax::reference::TiledSchedule{Tile::x, Tile::y, D, false, Tile::z});
  relax::testing::check_same_report(got, want);
  CHECK(relax::testing::same_bits(got_u, want_u));
}

}  // namespace

TEST_CASE("k sub-domains with BlockAsync<D> are the host emulation of the split, bit for bit (HostCopy)",
          "[multi][host_copy][block_async]") {
  const relax::Stencil5<float> s(10.0);
  for (int parts : {1, 2, 3, 4}) {
    check_block_async_split<4>(Extents(257, 257), s, parts);
    check_block_async_split<2>(Extents(1000, 70), s, parts);
    check_block_async_split<4>(Extents(33, 517), s, parts, 5, 37);  // the cap, M not a multiple of D
    check_block_async_split<3>(Extents(40, 33, 29), relax::Stencil7<float>(1.0), parts);
  }
  check_block_async_split<4>(Extents(70, 4), s, 4);  // one-row sub-domains
}

TEST_CASE("BlockAsync across sub-domains on small boxes, for the sanitizers", "[multi][host_copy][block_async][sanitize]") {
  check_block_async_split<2>(Extents(70, 33), relax::Stencil5<float>(10.0), 3, 4, 24);
}

TEST_CASE("the host-controlled multi-sub-domain solver refuses bad devices, grids and splits", "[multi][validation]") {
  const relax::Stencil5<float> s(1.0);
  const Extents e(64, 64);
  using Multi = relax::MultiSolver<relax::Stencil5<float>, relax::TemporalBlock<8, relax::ColumnStream>>;
  CHECK_THROWS_WITH(Multi(e, {}, s), Catch::Contains("at least one device"));
  CHECK_THROWS_WITH(Multi(e, {0, relax::device_count()}, s), Catch::Contains("devices"));
  // 64 rows in 9 slabs: 7 rows each, thinner than the 8-row halo of D = 8.
  CHECK_THROWS_WITH(Multi(e, std::vector<int>(9, 0), s), Catch::Contains("thinnest sub-domain"));
  Multi two(e, {0, 0}, s);
  relax::MultiSolver<relax::Stencil5<float>, relax::Sync> three(e, {0, 0, 0}, s);
  auto u = two.make_grid();
  auto b = three.make_grid();  // another split of the same box
  CHECK_THROWS_WITH(two.solve(u, b), Catch::Contains("a grid made by this solver"));
  HostGrid<float> other(Extents(32, 32));
  CHECK_THROWS_WITH(u.scatter(other), Catch::Contains("decomposition's box"));
  relax::SolveOptions overlapped;
  overlapped.checks = relax::CheckMode::overlapped;
  CHECK_THROWS_WITH(Multi(e, {0, 0}, s, relax::Fixed(8), overlapped), Catch::Contains("options.checks"));
  relax::HostCopy overlap;
  overlap.overlap = true;
  CHECK_THROWS_WITH(Multi(e, {0, 0}, s, relax::Fixed(8), {}, overlap),
                    Catch::Contains("comm.overlap") && Catch::Contains("Sync"));
}

namespace {

// Ten steps (three here) of the diffusion problem with `Whole` on one domain against `Strategy`
// and `Comm` on 2 and 3 sub-domains of one GPU: every step's report and the final state.
template <class Whole, class Strategy, class Comm>
void check_ten_steps(relax::Source src) {
  for (double r : {1.0, 10.0, 100.0}) {
    const relax::DiffusionParams p = relax::testing::diffusion_params(257, r, src, 3);
    HostGrid<float> want_u;
    const auto want = relax::testing::gpu_diffusion<relax::Stencil5<float>, Whole>(p, want_u, relax::Fixed(8), {},
                                                                                    relax::StepLaunch::per_step);
    for (int parts : {2, 3}) {
      INFO("r = " << r << ", " << parts << " sub-domains");
      relax::MultiSolver<relax::Stencil5<float>, Strategy, Comm> solver(
          p.extents(), std::vector<int>(static_cast<std::size_t>(parts), 0), relax::Stencil5<float>(p.r));
      relax::DistributedDiffusionState<float> state(p, solver.decomposition(), solver.devices());
      const auto got = relax::run_diffusion(solver, state);
      HostGrid<float> got_u = relax::initial_state<float>(p);
      state.u().gather(got_u);
      relax::testing::check_same_run(got, got_u, want, want_u);
    }
  }
}

}  // namespace

TEST_CASE("the ten-step problem on k sub-domains of one GPU is the single-domain run, bit for bit",
          "[multi][host_copy][diffusion]") {
  using Stream4 = relax::TemporalBlock<4, relax::ColumnStream>;
  check_ten_steps<Stream4, Stream4, relax::HostCopy>(GENERATE(relax::Source::point, relax::Source::gaussian));
}

namespace {

using CpuFree = relax::DeviceLoop<relax::Sync>;

// PeerStore's settings that the CPU-free solves are checked under: one kernel for all sub-domains
// and one kernel per sub-domain (every neighbour through flags), each with the blocks' roles of
// `blocks`; from three sub-domains, two kernels (flags between some neighbours, the grid
// barrier between others).
std::vector<relax::PeerStore> peer_comms(int parts, relax::BlockRoles blocks) {
  std::vector<relax::PeerStore> comms(2);
  comms[1].launch_per_subdomain = true;
  if (parts >= 3) comms.emplace_back().kernels_per_device = 2;
  for (relax::PeerStore& c : comms) c.blocks = blocks;
  return comms;
}

template <class S>
void check_peer_store(const Extents& e, const S& s, int parts, int m = 8, std::int64_t max_sweeps = 400,
                      relax::BlockRoles blocks = relax::BlockRoles::edges_first) {
  for (const relax::PeerStore& comm : peer_comms(parts, blocks)) {
    INFO("launch per sub-domain " << comm.launch_per_subdomain << ", kernels a device " << comm.kernels_per_device
                                  << ", specialised blocks " << (comm.blocks == relax::BlockRoles::specialised));
    check_split_equals_whole<CpuFree, relax::PeerStore, relax::Sync>(e, s, parts, m, max_sweeps, comm);
  }
}

}  // namespace

TEST_CASE("k sub-domains on one GPU solve as one with no host in the loop (DeviceLoop<Sync>, PeerStore)",
          "[multi][peer_store]") {
  const relax::Stencil5<float> s(10.0);
  for (int parts : {1, 2, 3, 4}) {
    for (std::int64_t n : {70, 257})
      check_peer_store(Extents(n, n), s, parts);
    check_peer_store(Extents(1000, 70), s, parts);
    check_peer_store(Extents(33, 517), s, parts, 5, 37);  // the cap, not a multiple of M
    check_peer_store(Extents(40, 40, 40), relax::Stencil7<float>(1.0), parts);
    check_peer_store(Extents(33, 17, 29), relax::Stencil7<double>(10.0), parts);
    check_peer_store(Extents(257, 257), relax::Stencil5<double>(1.0), parts, 3, 50);
  }
  check_peer_store(Extents(1000, 1000), s, 3, 8, 96);
  check_peer_store(Extents(70, 4), s, 4);             // one-row sub-domains
  check_peer_store(Extents(9, 5, 4), relax::Stencil7<float>(10.0), 4);  // one-plane sub-domains
  check_peer_store(Extents(1, 1), s, 1);
}

TEST_CASE("with thread-block specialisation (boundary blocks apart) the CPU-free solve is the same, bit for bit",
          "[multi][peer_store][specialised]") {
  constexpr auto apart = relax::BlockRoles::specialised;
  const relax::Stencil5<float> s(10.0);
  for (int parts : {2, 3, 4}) {
    check_peer_store(Extents(257, 257), s, parts, 8, 400, apart);
    check_peer_store(Extents(1000, 70), s, parts, 8, 400, apart);
    check_peer_store(Extents(33, 517), s, parts, 5, 37, apart);
    check_peer_store(Extents(40, 40, 40), relax::Stencil7<float>(1.0), parts, 8, 400, apart);
    check_peer_store(Extents(33, 17, 29), relax::Stencil7<double>(10.0), parts, 8, 400, apart);
  }
  check_peer_store(Extents(1000, 1000), s, 3, 8, 96, apart);
  check_peer_store(Extents(70, 4), s, 4, 8, 400, apart);  // one-row sub-domains: every tile at an edge
  check_peer_store(Extents(9, 5, 4), relax::Stencil7<float>(10.0), 4, 8, 400, apart);
}

TEST_CASE("the CPU-free multi-sub-domain solver on small boxes, for the sanitizers", "[multi][peer_store][sanitize]") {
  for (const auto blocks : {relax::BlockRoles::edges_first, relax::BlockRoles::specialised}) {
    check_peer_store(Extents(70, 33), relax::Stencil5<float>(10.0), 3, 4, 24, blocks);
    check_peer_store(Extents(20, 9, 7), relax::Stencil7<float>(1.0), 2, 2, 10, blocks);
  }
}

TEST_CASE("the ten-step problem on k sub-domains with PeerStore is the single-domain run, bit for bit",
          "[multi][peer_store][diffusion]") {
  check_ten_steps<relax::Sync, CpuFree, relax::PeerStore>(GENERATE(relax::Source::point, relax::Source::gaussian));
}

TEST_CASE("many short CPU-free solves lose or repeat no halo", "[multi][peer_store]") {
  // Four sub-domains in one kernel, and one kernel per sub-domain, then with boundary blocks.
  std::vector<relax::PeerStore> comms = peer_comms(2, relax::BlockRoles::edges_first);
  for (const relax::PeerStore& c : peer_comms(2, relax::BlockRoles::specialised)) comms.push_back(c);
  const std::vector<int> four{0, 0, 0, 0};
  relax::testing::check_short_solves<CpuFree>(Extents(130, 61), relax::Stencil5<float>(10.0), 300, four, comms);
  relax::testing::check_short_solves<CpuFree>(Extents(20, 9, 13), relax::Stencil7<float>(1.0), 150, four, comms);
}

namespace {

// The message of the device_loop_error a solve of zero grids with `split` ends with ("" if none).
template <class Split>
std::string solve_error(Split& split) {
  auto u = split.make_grid();
  auto b = split.make_grid();
  try {
    split.solve(u, b);
  } catch (const relax::device_loop_error& x) {
    return x.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a sub-domain that never signals ends the CPU-free solve with an error naming it", "[multi][peer_store]") {
  const Extents e(256, 96);
  const relax::Stencil5<float> s(10.0);
  {  // flags are kept back only between kernels: one kernel per sub-domain
    relax::PeerStore comm;
    comm.launch_per_subdomain = true;
    comm.silent_subdomain = 1;
    comm.timeout_ns = 200'000'000;  // 0.2 s
    relax::MultiSolver<relax::Stencil5<float>, CpuFree, relax::PeerStore> split(e, {0, 0, 0}, s, relax::Fixed(8), {},
                                                                                 comm);
    CHECK_THAT(solve_error(split), Catch::Contains("sub-domain 1 never stored its edge rows"));
    comm.blocks = relax::BlockRoles::specialised;  // the boundary blocks' waits time out the same way
    relax::MultiSolver<relax::Stencil5<float>, CpuFree, relax::PeerStore> roles(e, {0, 0, 0}, s, relax::Fixed(8), {},
                                                                                 comm);
    CHECK_THAT(solve_error(roles), Catch::Contains("sub-domain 1 never stored its edge rows"));
    // The solver is usable afterwards: a solve with every sub-domain signalling completes.
    comm.silent_subdomain = -1;
    relax::MultiSolver<relax::Stencil5<float>, CpuFree, relax::PeerStore> healthy(e, {0, 0, 0}, s, relax::Fixed(8), {},
                                                                                   comm);
    auto hu = healthy.make_grid();
    auto hb = healthy.make_grid();
    CHECK_NOTHROW(healthy.solve(hu, hb));
  }
}

namespace {

template <int D>
using CpuFreeStream = relax::DeviceLoop<relax::TemporalBlock<D, relax::ColumnStream>>;

// The streamed CPU-free solve against the single-domain Sync solve: one kernel for all
// sub-domains, one kernel per sub-domain (every neighbour counted through flags) and, from
// three sub-domains, two kernels.
template <int D, class S>
void check_peer_stream(const Extents& e, const S& s, int parts, int m = 8, std::int64_t max_sweeps = 400) {
  for (const relax::PeerStore& comm : peer_comms(parts, relax::BlockRoles::edges_first)) {
    INFO("launch per sub-domain " << comm.launch_per_subdomain << ", kernels a device " << comm.kernels_per_device);
    check_split_equals_whole<CpuFreeStream<D>, relax::PeerStore, relax::Sync>(e, s, parts, m, max_sweeps, comm);
  }
}

}  // namespace

TEST_CASE("k sub-domains on one GPU solve as one with temporal blocking and no host in the loop "
          "(DeviceLoop<TemporalBlock<D, ColumnStream>>, PeerStore)",
          "[multi][peer_store][peer_stream]") {
  const relax::Stencil5<float> s(10.0);
  for (int parts : {1, 2, 3, 4}) {
    for (std::int64_t n : {70, 257})
      check_peer_stream<4>(Extents(n, n), s, parts);
    check_peer_stream<4>(Extents(1000, 70), s, parts);
    check_peer_stream<4>(Extents(33, 517), s, parts, 5, 37);  // passes of 4 and 1, the cap not a multiple of M
    check_peer_stream<4>(Extents(257, 257), relax::Stencil5<double>(1.0), parts, 3, 50);  // checks every 3: passes of 3
    check_peer_stream<2>(Extents(40, 40, 40), relax::Stencil7<float>(1.0), parts);
    check_peer_stream<2>(Extents(33, 17, 29), relax::Stencil7<float>(10.0), parts, 5, 37);
    check_peer_stream<4>(Extents(33, 17, 29), relax::Stencil7<double>(10.0), parts, 5, 37);  // once refused
  }
  check_peer_stream<4>(Extents(1000, 1000), s, 3, 8, 96);
  check_peer_stream<4>(Extents(70, 16), s, 4);  // four-row sub-domains: as thin as the halo, every row in both bands
  check_peer_stream<4>(Extents(70, 23), s, 3);  // seven and eight rows: the bands overlap
  check_peer_stream<2>(Extents(9, 5, 8), relax::Stencil7<float>(10.0), 4);  // two-plane sub-domains
  check_peer_stream<4>(Extents(1, 4), s, 1);
}

TEST_CASE("the streamed CPU-free solve refuses boundary blocks apart", "[multi][peer_store][peer_stream][specialised]") {
  relax::PeerStore comm;
  comm.blocks = relax::BlockRoles::specialised;
  using Multi = relax::MultiSolver<relax::Stencil5<float>, CpuFreeStream<4>, relax::PeerStore>;
  CHECK_THROWS_WITH(Multi(Extents(70, 70), {0, 0}, relax::Stencil5<float>(10.0), relax::Fixed(8), {}, comm),
                    Catch::Contains("comm.blocks") && Catch::Contains("DeviceLoop<Sync>"));
}

TEST_CASE("the streamed CPU-free multi-sub-domain solver on small boxes, for the sanitizers",
          "[multi][peer_store][peer_stream][sanitize]") {
  check_peer_stream<4>(Extents(70, 33), relax::Stencil5<float>(10.0), 3, 4, 24);
  check_peer_stream<2>(Extents(20, 9, 7), relax::Stencil7<float>(1.0), 2, 2, 10);
}

TEST_CASE("the ten-step problem on k sub-domains with temporal blocking and PeerStore is the single-domain run",
          "[multi][peer_store][peer_stream][diffusion]") {
  check_ten_steps<relax::Sync, CpuFreeStream<4>, relax::PeerStore>(GENERATE(relax::Source::point, relax::Source::gaussian));
}

TEST_CASE("many short streamed CPU-free solves lose or repeat no halo", "[multi][peer_store][peer_stream]") {
  const std::vector<relax::PeerStore> comms = peer_comms(2, relax::BlockRoles::edges_first);
  const std::vector<int> four{0, 0, 0, 0};
  relax::testing::check_short_solves<CpuFreeStream<4>>(Extents(130, 61), relax::Stencil5<float>(10.0), 300, four, comms);
  relax::testing::check_short_solves<CpuFreeStream<2>>(Extents(20, 9, 13), relax::Stencil7<float>(1.0), 150, four, comms);
}

TEST_CASE("a sub-domain that never signals ends the streamed CPU-free solve with an error naming it",
          "[multi][peer_store][peer_stream]") {
  relax::PeerStore comm;
  comm.launch_per_subdomain = true;
  comm.silent_subdomain = 2;
  comm.timeout_ns = 200'000'000;  // 0.2 s
  using Multi = relax::MultiSolver<relax::Stencil5<float>, CpuFreeStream<4>, relax::PeerStore>;
  Multi split(Extents(256, 96), {0, 0, 0}, relax::Stencil5<float>(10.0), relax::Fixed(8), {}, comm);
  CHECK_THAT(solve_error(split), Catch::Contains("sub-domain 2 never stored its edge rows") && Catch::Contains("TemporalBlock"));
}

TEST_CASE("the streamed CPU-free multi-sub-domain solver refuses what it cannot run", "[multi][peer_store][peer_stream][validation]") {
  const relax::Stencil5<float> s(1.0);
  using Multi = relax::MultiSolver<relax::Stencil5<float>, CpuFreeStream<8>, relax::PeerStore>;
  // 64 rows in 9 slabs: 7 rows each, thinner than the 8-row halo of D = 8.
  CHECK_THROWS_WITH(Multi(Extents(64, 64), std::vector<int>(9, 0), s), Catch::Contains("thinnest sub-domain"));
  relax::SolveOptions overlapped;
  overlapped.checks = relax::CheckMode::overlapped;
  CHECK_THROWS_WITH(Multi(Extents(64, 64), {0, 0}, s, relax::Fixed(8), overlapped), Catch::Contains("options.checks"));
}

TEST_CASE("the CPU-free multi-sub-domain solver refuses bad settings", "[multi][peer_store][validation]") {
  const relax::Stencil5<float> s(1.0);
  const Extents e(64, 64);
  using Multi = relax::MultiSolver<relax::Stencil5<float>, CpuFree, relax::PeerStore>;
  relax::PeerStore comm;
  comm.timeout_ns = 0;
  CHECK_THROWS_WITH(Multi(e, {0, 0}, s, relax::Fixed(8), {}, comm), Catch::Contains("comm.timeout_ns"));
  comm = {};
  comm.silent_subdomain = 2;
  CHECK_THROWS_WITH(Multi(e, {0, 0}, s, relax::Fixed(8), {}, comm), Catch::Contains("comm.silent_subdomain"));
  CHECK_THROWS_WITH(Multi(e, {0, 0, 0}, s, relax::Fixed(8), {}, comm), Catch::Contains("another kernel"));
  comm = {};
  comm.kernels_per_device = 0;
  CHECK_THROWS_WITH(Multi(e, {0, 0}, s, relax::Fixed(8), {}, comm), Catch::Contains("comm.kernels_per_device"));
  comm = {};
  comm.launch_per_subdomain = true;
  CHECK_THROWS_WITH(Multi(Extents(64, 128), std::vector<int>(33, 0), s, relax::Fixed(8), {}, comm),
                    Catch::Contains("at most 32 kernels"));
  CHECK_THROWS_WITH(Multi(e, std::vector<int>(65, 0), s), Catch::Contains("thinnest sub-domain"));
  relax::SolveOptions overlapped;
  overlapped.checks = relax::CheckMode::overlapped;
  CHECK_THROWS_WITH(Multi(e, {0, 0}, s, relax::Fixed(8), overlapped), Catch::Contains("options.checks"));
}
