// Must fail to compile (tests/CMakeLists.txt): only the tiled sweepers are included, so the
// streaming TemporalBlock has no sweeper and reaches the primary template's message instead of
// compiling into the shared-memory tile sweeper with a 0 x 0 tile.
#include <relax/stencil/stencil5.hpp>
#include <relax/strategy/tiled.cuh>

void sweep(const relax::Stencil5<float>& s, relax::DeviceGrid<float>& u) {
  relax::Sweeper<relax::TemporalBlock<4, relax::ColumnStream>>::run(s, u, u, u, {4}, nullptr);
}
