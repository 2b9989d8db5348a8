// Grid layout: aligned interior rows, 64-bit offsets, views that agree with element access.
#include <catch2/catch.hpp>

#include <relax/domain/grid.hpp>

#include <cstdint>

using relax::GridLayout;

TEMPLATE_TEST_CASE("every interior row starts on a 128-byte boundary", "[grid]", float, double) {
  for (std::int64_t n : {1, 3, 31, 32, 33, 70, 257, 1000}) {
    const GridLayout l = GridLayout::of<TestType>(n);
    CHECK(l.pitch >= l.lead + n + 2);
    for (std::int64_t i = 0; i <= n + 1; ++i)
      CHECK((l.offset(i, 1) * static_cast<std::int64_t>(sizeof(TestType))) % 128 == 0);
    CHECK(l.offset(n + 1, n + 1) < l.size());  // the last point is inside the allocation
  }
}

TEST_CASE("offsets are 64-bit for grids of more than 2^31 points", "[grid]") {
  const std::int64_t n = 50000;  // 2.5e9 interior points: no allocation needed to check the maths
  const GridLayout l = GridLayout::of<float>(n);
  REQUIRE(l.points() > (std::int64_t(1) << 31));
  CHECK(l.offset(n + 1, n + 1) == (n + 1) * l.pitch + l.lead + n + 1);
  CHECK(l.offset(n + 1, n + 1) > (std::int64_t(1) << 31));
  CHECK(l.size() == (n + 2) * l.pitch);
}

TEST_CASE("views and element access address the same storage", "[grid]") {
  relax::HostGrid<float> g(70);
  g(0, 0) = 1.0f;
  g(35, 36) = 2.0f;
  g(71, 71) = 3.0f;
  auto v = g.view();
  CHECK(v.extent(0) == 72);
  CHECK(v.extent(1) == 72);
  CHECK(v(0, 0) == 1.0f);
  CHECK(v(35, 36) == 2.0f);
  CHECK(v(71, 71) == 3.0f);
  v(10, 20) = 4.0f;
  CHECK(g.storage()[g.layout().offset(10, 20)] == 4.0f);
  CHECK(g.layout() == GridLayout::of<float>(70));
  CHECK(g.layout() != GridLayout::of<float>(71));
}
