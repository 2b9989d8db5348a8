// A stencil defined by a user (anisotropic diffusion) works with every strategy: each GPU run
// equals the reference backend's schedule bit for bit, and the exact strategies equal Sync; the
// residual norm of the result agrees too.
#include <catch2/catch.hpp>

#include "anisotropic.hpp"
#include "grids.hpp"

#include <relax/core/stream.hpp>
#include <relax/reference/tiled.hpp>
#include <relax/strategy/residual.cuh>
#include <relax/strategy/column_stream.cuh>
#include <relax/strategy/sync.cuh>
#include <relax/strategy/tiled.cuh>

namespace {

using relax::testing::Anisotropic5;

template <class Strategy, class Schedule>
void check(std::int64_t n, std::int64_t count, const Schedule& schedule) {
  const Anisotropic5 s(4.0f, 0.5f);
  relax::HostGrid<float> u(n), b(n);
  relax::testing::fill_random(u, 61 + n, 0.0, 10.0);
  relax::testing::fill_random(b, 67 + n);
  relax::Stream stream;
  relax::DeviceGrid<float> du = relax::to_device(u, stream), scratch = relax::to_device(u, stream);
  const relax::DeviceGrid<float> db = relax::to_device(b, stream);
  relax::Sweeper<Strategy>::run(s, du, scratch, db, {count}, stream);
  const auto got = relax::to_host(du, stream);
  relax::HostGrid<float> host_scratch = u;
  relax::reference::sweeps(s, u, host_scratch, b, schedule, count, relax::reference::Exec::openmp());
  INFO("n = " << n << ", differing points " << relax::testing::count_differences(got, u));
  CHECK(relax::testing::same_bits(got, u));
  relax::MaxNormSlot<float> slot;
  CHECK(relax::residual_norm(s, du, db, slot, stream) == relax::reference::residual_norm(s, u, b));
}

}  // namespace

TEST_CASE("a user-defined stencil runs under every strategy", "[user_stencil][sanitize]") {
  STATIC_REQUIRE(relax::is_stencil_v<Anisotropic5>);
  const std::int64_t n = GENERATE(33, 130);
  const relax::reference::SyncSchedule sync;
  check<relax::Sync>(n, 5, sync);
  check<relax::TemporalBlock<4>>(n, 9, sync);  // exact: the synchronous iterates
  check<relax::TemporalBlock<8, relax::ColumnStream>>(n, 17, sync);
  check<relax::BlockAsync<4>>(n, 9, relax::reference::TiledSchedule{32, 8, 4, false});
}
