// Policy traits: what counts as a stencil, strategy and controller, and a user-defined stencil
// that works with the reference backend like the shipped one.
#include <catch2/catch.hpp>

#include "../support/anisotropic.hpp"

#include <relax/control/fixed.hpp>
#include <relax/reference/jacobi.hpp>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/traits.hpp>
#include <relax/strategy/sync.hpp>

namespace {

using relax::testing::Anisotropic5;

struct NoResidual {
  using value_type = float;
  static constexpr int radius = 1;
  float update(float, float, float, float, float) const { return 0; }
};

struct NotAController {
  int check_interval = 8;
};

}  // namespace

TEST_CASE("stencil trait accepts stencils and rejects other types", "[policy]") {
  STATIC_REQUIRE(relax::is_stencil_v<relax::Stencil5<float>>);
  STATIC_REQUIRE(relax::is_stencil_v<relax::Stencil5<double>>);
  STATIC_REQUIRE(relax::is_stencil_v<Anisotropic5>);
  STATIC_REQUIRE_FALSE(relax::is_stencil_v<NoResidual>);
  STATIC_REQUIRE_FALSE(relax::is_stencil_v<int>);
}

TEST_CASE("strategy and controller traits", "[policy]") {
  STATIC_REQUIRE(relax::is_strategy_v<relax::Sync>);
  STATIC_REQUIRE(relax::is_strategy_v<relax::SyncTile<64, 4, 2>>);
  STATIC_REQUIRE_FALSE(relax::is_strategy_v<relax::Fixed>);
  STATIC_REQUIRE(relax::Sync::block_x == 32);
  STATIC_REQUIRE(relax::Sync::block_y == 8);
  STATIC_REQUIRE(relax::is_controller_v<relax::Fixed>);
  STATIC_REQUIRE_FALSE(relax::is_controller_v<NotAController>);
  STATIC_REQUIRE_FALSE(relax::is_controller_v<relax::Sync>);
  CHECK(relax::Fixed(3).sweeps_before_check() == 3);
  CHECK(relax::Fixed().sweeps_before_check() == 8);
}

TEST_CASE("a user-defined stencil converges with the reference backend", "[policy][reference]") {
  const Anisotropic5 s;
  relax::HostGrid<float> u(33), scratch(33), b(33);
  for (int j = 0; j <= 34; ++j) u(0, j) = 1.0f;
  const auto rep = relax::reference::solve(s, u, scratch, b, 4, {});
  CHECK(rep.status == relax::SolveStatus::converged);
  CHECK(rep.rho < 1e-5);
  CHECK(u(1, 17) > u(2, 17));  // heat flows down from the top edge
  CHECK(u(2, 17) > u(3, 17));
}
