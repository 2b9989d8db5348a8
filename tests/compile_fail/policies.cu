// Compiled once per CASE by the test suite; each case must fail to compile with the message the
// test names (tests/CMakeLists.txt). Nothing here is meant to build.
#include <relax/control/ladder.hpp>
#include <relax/solver/solver.cuh>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>
#include <relax/strategy/adaptive.cuh>
#include <relax/strategy/auto.cuh>
#include <relax/strategy/device_loop.cuh>
#include <relax/strategy/sync.cuh>
#include <relax/strategy/tiled.cuh>

#if CASE == 1
using Bad = relax::Solver<relax::Stencil5<float>, relax::Sync, relax::Ladder>;  // no D to set
#elif CASE == 2
using Bad = relax::Solver<relax::Stencil5<float>, relax::BlockAsync<relax::dynamic>, relax::Fixed>;
#elif CASE == 3
using Bad = relax::Solver<int, relax::Sync, relax::Fixed>;  // not a stencil
#elif CASE == 4
using Bad = relax::TemporalBlock<0>;
#elif CASE == 5
using Bad = relax::TemporalBlock<16, relax::Tile<32, 8>>;  // halo wider than the tile
#elif CASE == 6
using Bad = relax::TemporalBlock<9, relax::ColumnStream>;  // the streaming kernels run D = 1..8
#elif CASE == 7
using Bad = relax::Solver<relax::Stencil5<float>, relax::Adaptive, relax::Ladder>;  // Ladder picks no family
#elif CASE == 8
using Bad = relax::DeviceLoop<relax::TemporalBlock<4>>;  // shared-memory temporal tiles: not built
#elif CASE == 9
using Bad = relax::DeviceLoop<relax::TemporalBlock<relax::dynamic, relax::OnChip>>;  // D is fixed on chip
#elif CASE == 10
using Bad = relax::Solver<relax::Stencil5<float>, relax::DeviceLoop<relax::Sync>, relax::Ladder>;  // no D on the device
#elif CASE == 11
using Bad = relax::Solver<relax::Stencil7<float>, relax::DeviceLoop<relax::TemporalBlock<4, relax::InRegisters>>, relax::Fixed>;  // 2D only
#endif
static_assert(sizeof(Bad) > 0);  // instantiates Bad
