// Grid layout: aligned interior rows, 64-bit offsets, views that agree with element access.
#include <catch2/catch.hpp>

#include <relax/domain/grid.hpp>
#include <relax/domain/shape.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>

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

TEMPLATE_TEST_CASE("rectangular and 3D boxes: aligned rows, planes one after another", "[grid][3d]",
                   float, double) {
  for (auto e : {relax::Extents(1, 57), relax::Extents(57, 1), relax::Extents(70, 1000),
                 relax::Extents(33, 17, 5), relax::Extents(5, 17, 33), relax::Extents(1, 1, 64)}) {
    INFO("box " << e.to_text());
    const GridLayout l = GridLayout::of<TestType>(e);
    CHECK(l.pitch >= l.lead + e.nx + 2);
    CHECK(l.plane == (e.ny + 2) * l.pitch);
    CHECK(l.planes() == (e.rank == 3 ? e.nz + 2 : 1));
    for (std::int64_t k = 0; k < l.planes(); ++k)
      for (std::int64_t i = 0; i <= e.ny + 1; ++i)
        CHECK((l.offset(k, i, 1) * static_cast<std::int64_t>(sizeof(TestType))) % 128 == 0);
    CHECK(l.offset(l.planes() - 1, e.ny + 1, e.nx + 1) < l.size());
    CHECK(l.points() == e.nx * e.ny * e.nz);
  }
}

TEST_CASE("a wider ring keeps the first interior point of each row aligned", "[grid]") {
  const GridLayout l = GridLayout::of<float>(relax::Extents(70, 30), 3);
  CHECK(l.halo == 3);
  CHECK((l.offset(5, 3) * 4) % 128 == 0);
  CHECK(l.pitch >= l.lead + 70 + 6);
  CHECK(l != GridLayout::of<float>(relax::Extents(70, 30)));
  relax::HostGrid<float> g(l);
  CHECK(g.view().extent(0) == 36);
  CHECK(g.view().extent(1) == 76);
  CHECK_THROWS_AS(GridLayout::of<float>(relax::Extents(4, 4), 0), relax::invalid_argument);
}

TEST_CASE("3D views and element access address the same storage", "[grid][3d]") {
  relax::HostGrid<double> g(relax::Extents(5, 17, 33));
  g(0, 0, 0) = 1.0;
  g(34, 18, 6) = 2.0;
  g(3, 4, 5) = 3.0;
  auto v = g.view3();
  CHECK(v.extent(0) == 35);
  CHECK(v.extent(1) == 19);
  CHECK(v.extent(2) == 7);
  CHECK(v(0, 0, 0) == 1.0);
  CHECK(v(34, 18, 6) == 2.0);
  CHECK(v(3, 4, 5) == 3.0);
  CHECK(g.storage()[g.layout().offset(3, 4, 5)] == 3.0);
}

TEST_CASE("boxes with an empty axis or a bad rank are rejected", "[grid][validation]") {
  CHECK_THROWS_WITH(GridLayout::of<float>(relax::Extents(0, 5)), Catch::Contains("0 x 5"));
  CHECK_THROWS_AS(GridLayout::of<float>(relax::Extents(4, 4, 0)), relax::invalid_argument);
  relax::Extents bad(4, 4);
  bad.rank = 4;
  CHECK_THROWS_WITH(bad.validate(), Catch::Contains("rank 2 or 3"));
  CHECK(relax::Extents::cube(7, 3) == relax::Extents(7, 7, 7));
  CHECK(relax::Extents::cube(7) == relax::Extents(7, 7));
}

TEST_CASE("boxes whose storage would overflow 64-bit offsets are rejected, not wrapped", "[grid][validation]") {
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
  // (Catch2 v2 keeps references to the parts of a combined matcher: spelled out at each use.)
#define RELAX_CHECK_OVERFLOWS(expression) \
  CHECK_THROWS_WITH(expression, Catch::Contains("extents") && Catch::Contains("64-bit byte offsets"))
  RELAX_CHECK_OVERFLOWS(GridLayout::of<float>(relax::Extents(max, 1)));
  RELAX_CHECK_OVERFLOWS(GridLayout::of<float>(relax::Extents(1, max)));
  RELAX_CHECK_OVERFLOWS(GridLayout::of<float>(relax::Extents(1, 1, max)));
  RELAX_CHECK_OVERFLOWS(GridLayout::of<double>(relax::Extents(std::int64_t(1) << 31, std::int64_t(1) << 31)));
  RELAX_CHECK_OVERFLOWS(GridLayout::of<float>(relax::Extents(1 << 21, 1 << 21, 1 << 21)));
  // At the bound: a layout whose bytes just fit is accepted, and one more plane is not.
  const std::int64_t plane = GridLayout::of<double>(relax::Extents(1000, 1000, 1)).plane;
  const std::int64_t planes = max / 8 / plane;  // storage planes (the ring's two included) that fit
  CHECK(GridLayout::of<double>(relax::Extents(1000, 1000, planes - 2)).size() <= max / 8);
  RELAX_CHECK_OVERFLOWS(GridLayout::of<double>(relax::Extents(1000, 1000, planes - 1)));
#undef RELAX_CHECK_OVERFLOWS
}

TEST_CASE("a host grid that cannot be allocated says so, naming the box", "[grid][validation]") {
  // 2^60 floats: within 64-bit byte offsets, beyond any machine's memory.
  CHECK_THROWS_WITH(relax::HostGrid<float>(relax::Extents(std::int64_t(1) << 40, std::int64_t(1) << 20)),
                    Catch::Contains("host memory for a grid of 1099511627776 x 1048576 points") &&
                        Catch::Contains("could not be allocated"));
  CHECK_THROWS_AS(relax::HostGrid<float>(relax::Extents(std::int64_t(1) << 40, std::int64_t(1) << 20)),
                  relax::unavailable_error);
}

TEST_CASE("equal shares tile the units, their sizes within one of each other", "[grid][streamed]") {
  // The 2D streamed device loop gives each block the rows [share_begin(p), share_begin(p + 1)) of
  // its strip groups' rows laid end to end.
  for (std::int64_t total : {std::int64_t(1), std::int64_t(15), std::int64_t(210), std::int64_t(606208),
                             std::int64_t(1) << 40}) {
    for (std::int64_t parts : {std::int64_t(1), std::int64_t(6), std::int64_t(396), std::int64_t(528)}) {
      if (parts > total) continue;
      CAPTURE(total, parts);
      CHECK(relax::detail::share_begin(total, parts, 0) == 0);
      CHECK(relax::detail::share_begin(total, parts, parts) == total);
      std::int64_t smallest = total, largest = 0;
      for (std::int64_t p = 0; p < parts; ++p) {
        const std::int64_t size =
            relax::detail::share_begin(total, parts, p + 1) - relax::detail::share_begin(total, parts, p);
        smallest = std::min(smallest, size);
        largest = std::max(largest, size);
      }
      CHECK(smallest == total / parts);
      CHECK(largest - smallest <= 1);
    }
  }
  // 16384^2 at D = 8: 37 strip groups of 16384 rows over 3 blocks on each of 132 SMs.
  CHECK(relax::detail::share_begin(37 * 16384, 396, 1) == 1530);
  CHECK(relax::detail::share_begin(37 * 16384, 396, 2) == 3061);
}
