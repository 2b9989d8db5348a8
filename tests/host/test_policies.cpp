// Policy traits: what counts as a stencil, strategy and controller, and a user-defined stencil
// that works with the reference backend like the shipped one.
#include <catch2/catch.hpp>

#include "../support/anisotropic.hpp"
#include "../support/variable.hpp"

#include <relax/control/feedback.hpp>
#include <relax/control/fixed.hpp>
#include <relax/control/ladder.hpp>
#include <relax/cpu/jacobi.hpp>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>
#include <relax/stencil/traits.hpp>
#include <relax/strategy/adaptive.hpp>
#include <relax/strategy/auto.hpp>
#include <relax/strategy/sync.hpp>
#include <relax/strategy/tiled.hpp>

#include <cmath>
#include <limits>

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
  STATIC_REQUIRE(relax::is_exact_strategy_v<relax::Sync>);
  STATIC_REQUIRE(relax::is_exact_strategy_v<relax::TemporalBlock<4>>);
  STATIC_REQUIRE_FALSE(relax::is_exact_strategy_v<relax::BlockAsync<4>>);
  STATIC_REQUIRE_FALSE(relax::is_exact_strategy_v<relax::Auto>);
  STATIC_REQUIRE(relax::is_strategy_v<relax::Auto>);
  // What the solver asks of a strategy instead of its name: Auto picks a device loop per grid.
  STATIC_REQUIRE(relax::picks_device_loop_v<relax::Auto>);
  STATIC_REQUIRE_FALSE(relax::picks_device_loop_v<relax::Sync>);
  STATIC_REQUIRE_FALSE(relax::picks_device_loop_v<relax::Adaptive>);
  STATIC_REQUIRE_FALSE(relax::picks_device_loop_v<relax::TemporalBlock<4>>);
  // The deepest run-time D of each strategy, which a controller that chooses D never passes.
  STATIC_REQUIRE(relax::max_depth_v<relax::TemporalBlock<relax::dynamic, relax::ColumnStream>> == 8);
  STATIC_REQUIRE(relax::max_depth_v<relax::TemporalBlock<relax::dynamic, relax::Tile<32, 16>>> == 16);
  STATIC_REQUIRE(relax::max_depth_v<relax::Adaptive> == 8);
  STATIC_REQUIRE(relax::max_depth_v<relax::BlockAsync<relax::dynamic>> == 0);  // no limit
  STATIC_REQUIRE(relax::max_depth_v<relax::Sync> == 0);
  // Adaptive needs a controller that chooses the family.
  STATIC_REQUIRE(relax::has_dynamic_depth_v<relax::Adaptive>);
  STATIC_REQUIRE(relax::chooses_family_v<relax::Feedback>);
  STATIC_REQUIRE_FALSE(relax::chooses_family_v<relax::Ladder>);
  STATIC_REQUIRE_FALSE(relax::chooses_family_v<relax::Fixed>);
}

TEST_CASE("Auto's features: the working set of u, u' and b over the L2 size, and r", "[policy][auto]") {
  const std::size_t l2 = 60u << 20;
  for (std::int64_t n : {64, 512, 1000, 4096, 16384, 32768, 90000})
    for (double r : {0.5, 1.0, 10.0, 100.0, 1000.0}) {
      INFO("n = " << n << ", r = " << r);
      const relax::FamilyChoice c = relax::auto_select(n, r, sizeof(float), l2);
      const relax::FamilyChoice want = relax::auto_choice(12.0 * double(n) * double(n) / double(l2), r);
      CHECK(c.family == want.family);
      CHECK(c.depth == want.depth);
      CHECK(c.device_loop == want.device_loop);
      // Every leaf of the generated tree names a strategy the dispatcher can run: a launched
      // strategy at D = 1, 2, 4 or 8, or the streamed device loop at D = 4 or 8 (AutoStreamed).
      CHECK((c.depth == 1 || c.depth == 2 || c.depth == 4 || c.depth == 8));
      if (c.family == relax::Family::sync) CHECK(c.depth == 1);
      if (c.device_loop) {
        CHECK(c.family == relax::Family::temporal);
        CHECK((c.depth == 4 || c.depth == 8));
        CHECK(relax::to_string(c) == "DeviceLoop<TemporalBlock<" + std::to_string(c.depth) + ", ColumnStream>>");
      }
      CHECK(relax::to_string(c).find(c.family == relax::Family::sync ? "Sync" : "<") != std::string::npos);
      // float64 doubles the working set: the same choice as a float grid of twice the points.
      const relax::FamilyChoice d = relax::auto_select(n, r, sizeof(double), l2);
      const relax::FamilyChoice twice = relax::auto_choice(24.0 * double(n) * double(n) / double(l2), r);
      CHECK(d.family == twice.family);
      CHECK(d.depth == twice.depth);
      CHECK(d.device_loop == twice.device_loop);
    }
}

TEST_CASE("Auto does not evaluate on the host a stencil that says its coupling, nor any in 3D", "[policy][auto]") {
  // Null coefficient fields (as a device field is to the host): an update on the host would
  // dereference them and crash the test.
  const relax::testing::VariableDiffusion5 s2{nullptr, 8, 2.5};
  CHECK(relax::equivalent_coupling(s2) == 2.5);
  for (const relax::Extents& e : {relax::Extents(8, 8), relax::Extents(3000, 1700), relax::Extents(20000, 20000)}) {
    INFO("box " << e.to_text());
    const relax::FamilyChoice got = relax::auto_select_for(s2, e, 60u << 20);
    const relax::FamilyChoice want = relax::auto_select(e, 2.5, sizeof(float), 60u << 20);
    CHECK(got.family == want.family);
    CHECK(got.depth == want.depth);
    CHECK(got.device_loop == want.device_loop);
  }
  const relax::testing::VariableDiffusion7 s3{nullptr, 8, 8};
  const relax::FamilyChoice c3 = relax::auto_select_for(s3, relax::Extents(8, 8, 8), 60u << 20);
  CHECK(c3.family == relax::Family::sync);
  CHECK(c3.depth == 1);
  CHECK_THROWS_AS(relax::auto_select_for(s3, relax::Extents(8, 8), 60u << 20), relax::invalid_argument);
  CHECK_THROWS_AS(relax::auto_select_for(s2, relax::Extents(8, 8, 8), 60u << 20), relax::invalid_argument);
  CHECK_THROWS_AS(relax::auto_select_for(s3, relax::Extents(0, 8, 8), 60u << 20), relax::invalid_argument);
  // host_coupling is checked like any coupling; +inf (a contraction of 1 or more) is allowed.
  for (double bad : {0.0, -1.0, std::nan("")}) {
    INFO("host_coupling " << bad);
    CHECK_THROWS_AS(relax::equivalent_coupling(relax::testing::VariableDiffusion5{nullptr, 8, bad}),
                    relax::invalid_argument);
  }
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(relax::equivalent_coupling(relax::testing::VariableDiffusion5{nullptr, 8, inf}) == inf);
}

TEST_CASE("Auto reads the coupling every stencil has: its Jacobi contraction", "[policy][auto]") {
  for (double r : {0.01, 0.5, 10.0, 1000.0}) {
    INFO("r = " << r);
    CHECK(relax::equivalent_coupling(relax::Stencil5<double>(r)) == Approx(r).epsilon(1e-12));
    CHECK(relax::equivalent_coupling(relax::Stencil7<double>(r)) == Approx(r).epsilon(1e-12));
    CHECK(relax::equivalent_coupling(relax::Stencil5<float>(r)) == Approx(r).epsilon(1e-4));
  }
  // A stencil without a member r: anisotropic couplings 1 and 0.25 contract like r = 0.625.
  CHECK(relax::equivalent_coupling(Anisotropic5{}) == Approx(0.625).epsilon(1e-5));
  // 3D boxes run Sync until the tree is trained on 3D runs.
  const relax::FamilyChoice c3 = relax::auto_select(relax::Extents(512, 512, 512), 10.0, 4, 60u << 20);
  CHECK(c3.family == relax::Family::sync);
  CHECK_FALSE(c3.device_loop);
  CHECK_THROWS_AS(relax::auto_select(relax::Extents(0, 4), 10.0, 4, 60u << 20), relax::invalid_argument);
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
