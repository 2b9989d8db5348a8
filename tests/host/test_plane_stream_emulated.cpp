// The 3D plane stream's block-level agent (`agent/plane_stream.cuh`) run on the CPU: each tile
// streamed by one emulated thread block (tests/support/block_emulation.hpp), down all planes or
// in pieces as stream-K cuts them. D steps equal D synchronous sweeps of the reference bit for
// bit, on awkward boxes, with the tiles folded or whole, the steps checked or split, and the
// copies and stores tested or lean (`tuning::plane_stream_lean_io`), in float and double. The
// device tests run the same agent on the GPU; this runs it where CI runs, every form of it
// whatever the tuning switches say.
#include "../support/block_emulation.hpp"  // first: the device built-ins the agent calls

#include <catch2/catch.hpp>

#include "../support/grids.hpp"

#include <relax/agent/plane_stream.cuh>
#include <relax/reference/jacobi.hpp>
#include <relax/stencil/stencil7.hpp>

#include <cstdint>
#include <vector>

namespace {

using relax::Extents;
using relax::HostGrid;
using namespace relax::detail;

template <class T>
T* origin(HostGrid<T>& g) {
  return g.storage().data() + g.layout().lead;
}
template <class T>
const T* origin(const HostGrid<T>& g) {
  return g.storage().data() + g.layout().lead;
}

// D reference sweeps of u.
template <class T>
HostGrid<T> reference_sweeps(const relax::Stencil7<T>& s, const HostGrid<T>& u, const HostGrid<T>& b, int d) {
  HostGrid<T> a = u, c = u;
  for (int k = 0; k < d; ++k) {
    relax::reference::sweep(s, a, c, b);
    std::swap(a, c);
  }
  return a;
}

// D steps of every tile of u's box, each tile's planes cut into `pieces` consecutive pieces of
// unequal length, each piece one emulated block (the agent's form given by the template flags).
template <int D, bool Split, bool Folded, bool Lean, class T>
HostGrid<T> stream_emulated(const relax::Stencil7<T>& s, const HostGrid<T>& u, const HostGrid<T>& b, int pieces) {
  HostGrid<T> out = u;  // the ring as u's: the agent stores interior points only
  const Shape g = shape_of(u.layout());
  const PlaneTiling tiling =
      Folded ? plane_stream_tiling<D, T>(g)
             : plane_tiling(g.nx, g.ny, Lane<T>::width, plane_columns_kept<D, T>, plane_rows_kept<D>,
                            plane_ghost_columns<D, T>, D, false);
  std::vector<Lane<T>> shared(plane_stream_shared_bytes<T>(D) / sizeof(Lane<T>));
  for (std::int64_t t = 0; t < tiling.tiles; ++t) {
    const PlaneTile tile = plane_tile(tiling, t);
    for (int p = 0; p < pieces; ++p) {
      // Piece p of `pieces`, the first ones shorter: [1 + nz p² / pieces², 1 + nz (p + 1)² / pieces²).
      const std::int64_t z0 = 1 + g.nz * p * p / (pieces * pieces);
      const std::int64_t z1 = 1 + g.nz * (p + 1) * (p + 1) / (pieces * pieces);
      if (z1 <= z0) continue;
      relax::testing::emulate_block(plane_stream_warps, [&](int lane, int warp) {
        stream_planes<D, Split, Folded, Lean>(s, origin(u), origin(out), origin(b), g, tile, z0, z1, lane, warp,
                                              shared.data());
      });
    }
  }
  return out;
}

template <int D, bool Split, bool Folded, bool Lean, class T>
void check_box(const Extents& e, int pieces) {
  INFO("box " << e.nx << " x " << e.ny << " x " << e.nz << ", D " << D << ", " << sizeof(T) * 8 << "-bit, split "
              << Split << ", folded " << Folded << ", lean " << Lean << ", pieces " << pieces);
  const relax::Stencil7<T> s(0.7);
  HostGrid<T> u(e), b(e);
  relax::testing::fill_random(u, 11, 0.0, 100.0);  // ring included: the boundary values
  relax::testing::fill_random(b, 12, -1.0, 1.0);
  const HostGrid<T> want = reference_sweeps(s, u, b, D);
  const HostGrid<T> got = stream_emulated<D, Split, Folded, Lean>(s, u, b, pieces);
  INFO("differing points " << relax::testing::count_differences(got, want));
  CHECK(relax::testing::same_bits(got, want));
}

template <int D, class T>
void check_forms(const Extents& e, int pieces) {
  check_box<D, true, true, false, T>(e, pieces);  // the launched kernels' agent, tested copies
  check_box<D, true, true, true, T>(e, pieces);   // and lean
}

}  // namespace

TEST_CASE("the 3D plane stream's agent, emulated on the CPU, equals D reference sweeps bit for bit",
          "[plane_stream][emulated]") {
  // Partial tiles on every axis; folded tiles of six segments (130 x 200), of 16-lane segments
  // (176 x 60), four segments filling the warp (144 x 100); a plane of one column and of one
  // point; enough planes for the split steps (k − D ≥ 1 and k ≤ nz) at every depth.
  const Extents boxes[] = {Extents(33, 17, 5),  Extents(130, 200, 3), Extents(176, 60, 4), Extents(144, 100, 2),
                           Extents(1, 300, 3),  Extents(5, 17, 23),   Extents(1, 1, 11),   Extents(70, 33, 13)};
  for (const Extents& e : boxes) {
    check_forms<1, float>(e, 1);
    check_forms<2, float>(e, 2);
    check_forms<3, float>(e, 3);
    check_forms<4, float>(e, 2);
  }
  check_forms<4, double>(Extents(70, 33, 13), 2);
  check_forms<3, double>(Extents(57, 25, 9), 1);
}

TEST_CASE("the emulated 3D agent's other forms: checked steps, and the persistent loops' whole tiles",
          "[plane_stream][emulated]") {
  for (const Extents& e : {Extents(33, 17, 13), Extents(130, 50, 11)}) {
    check_box<4, false, true, false, float>(e, 2);  // every step checked
    check_box<4, false, true, true, float>(e, 2);
    check_box<4, false, false, false, float>(e, 1);  // as `stream_group` / `stream_item` call it
    check_box<2, false, false, false, double>(e, 3);
  }
}
