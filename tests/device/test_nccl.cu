// The NCCL Comm policy (multi/nccl.cuh): one rank per GPU, so k = 1 .. the GPUs present (one
// rank on a machine with one GPU), bit for bit the single-domain solve (sweeps, checks, ρ,
// iterate), 2D and 3D, Sync and TemporalBlock<D, ColumnStream>, and the ten-step problem; a
// repeated device refused with a message naming relax::HostCopy and relax::PeerStore. With a
// communicator of one rank per process (`Nccl::comm`), here one rank on GPU 0: the same bits,
// the program's communicator left alive, and any other device list refused.
#include <catch2/catch.hpp>

#include "gpu_runs.hpp"
#include "grids.hpp"
#include "nccl_rank.hpp"
#include "runs.hpp"
#include "split_runs.hpp"

#include <relax/multi/nccl.cuh>
#include <relax/solver/diffusion.cuh>
#include <relax/solver/solver.cuh>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>

#include <vector>

using relax::DeviceGrid;
using relax::Extents;
using relax::HostGrid;

namespace {

std::vector<int> first_gpus(int k) {
  std::vector<int> devices;
  for (int d = 0; d < k; ++d) devices.push_back(d);
  return devices;
}

template <class Strategy, class S>
void check_nccl_equals_whole(const Extents& e, const S& s, int parts, int m = 8, std::int64_t max_sweeps = 400) {
  relax::testing::check_split_equals_whole<Strategy, relax::Nccl>(e, s, first_gpus(parts), m, max_sweeps);
}

}  // namespace

TEST_CASE("NCCL halos on one rank per GPU solve as one domain, bit for bit", "[multi][nccl]") {
  const relax::Stencil5<float> s(10.0);
  for (int parts = 1; parts <= relax::device_count(); ++parts) {
    check_nccl_equals_whole<relax::Sync>(Extents(257, 257), s, parts);
    check_nccl_equals_whole<relax::Sync>(Extents(33, 517), s, parts, 5, 37);
    check_nccl_equals_whole<relax::TemporalBlock<4, relax::ColumnStream>>(Extents(1000, 70), s, parts);
    check_nccl_equals_whole<relax::Sync>(Extents(33, 17, 29), relax::Stencil7<double>(10.0), parts);
    check_nccl_equals_whole<relax::TemporalBlock<2, relax::ColumnStream>>(Extents(40, 40, 40), relax::Stencil7<float>(1.0),
                                                                         parts);
  }
}

TEST_CASE("the ten-step problem with NCCL halos is the single-domain run, bit for bit", "[multi][nccl][diffusion]") {
  const relax::DiffusionParams p = relax::testing::diffusion_params(257, 10.0, relax::Source::gaussian, 3);
  HostGrid<float> want_u;
  const auto want = relax::testing::gpu_diffusion<relax::Stencil5<float>, relax::Sync>(p, want_u, relax::Fixed(8), {},
                                                                                        relax::StepLaunch::per_step);
  for (int parts = 1; parts <= relax::device_count(); ++parts) {
    INFO(parts << " ranks");
    relax::MultiSolver<relax::Stencil5<float>, relax::Sync, relax::Nccl> solver(p.extents(), first_gpus(parts),
                                                                              relax::Stencil5<float>(p.r));
    relax::DistributedDiffusionState<float> state(p, solver.decomposition(), solver.devices());
    const auto got = relax::run_diffusion(solver, state);
    HostGrid<float> got_u = relax::initial_state<float>(p);
    state.u().gather(got_u);
    relax::testing::check_same_run(got, got_u, want, want_u);
  }
}

TEST_CASE("NCCL needs a GPU per rank", "[multi][nccl][validation]") {
  using Multi = relax::MultiSolver<relax::Stencil5<float>, relax::Sync, relax::Nccl>;
  CHECK_THROWS_WITH(Multi(Extents(64, 64), {0, 0}, relax::Stencil5<float>(1.0)),
                    Catch::Contains("distinct devices") && Catch::Contains("relax::PeerStore"));
  int version = 0;
  REQUIRE(ncclGetVersion(&version) == ncclSuccess);
  CHECK(version / 10000 == 2);
  CHECK(relax::detail::checked_nccl_version() == version);
}

TEST_CASE("a communicator of one rank per process: its rank's slab, bit for bit the single-domain solve",
          "[multi][nccl][processes]") {
  const relax::testing::OneNcclRank rank;
  relax::Nccl policy;
  policy.comm = rank.comm;
  const relax::Stencil5<float> s(10.0);
  relax::testing::check_split_equals_whole<relax::Sync, relax::Nccl>(Extents(257, 257), s, {0}, 8, 400, policy);
  relax::testing::check_split_equals_whole<relax::TemporalBlock<4, relax::ColumnStream>, relax::Nccl>(
      Extents(1000, 70), s, {0}, 8, 400, policy);
  relax::testing::check_split_equals_whole<relax::Sync, relax::Nccl>(Extents(33, 17, 29), relax::Stencil7<double>(10.0),
                                                                    {0}, 5, 37, policy);
  int ranks = 0;
  CHECK(ncclCommCount(rank.comm, &ranks) == ncclSuccess);  // the solvers left the program's communicator alive
  CHECK(ranks == 1);
  using Multi = relax::MultiSolver<relax::Stencil5<float>, relax::Sync, relax::Nccl>;
  CHECK_THROWS_WITH(Multi(Extents(64, 64), {0, 0}, s, relax::Fixed(8), {}, policy),
                    Catch::Contains("this process's one device"));
  Multi one(Extents(64, 64), {0}, s, relax::Fixed(8), {}, policy);
  CHECK(one.decomposition().size() == 1);
  CHECK(one.make_grid().first() == 0);
}
