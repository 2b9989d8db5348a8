#pragma once
//! \file
//! How a batch of sweeps splits into launches of a tiled strategy: launches of depth D and one
//! shallower launch for the remainder, so a check every M sweeps always falls on a launch boundary.
//! Shared by the GPU strategies and their host emulation so both split the same way.

#include <algorithm>
#include <cstdint>

namespace relax::detail {

//! Calls `launch(d)` for consecutive launches of depth d = `depth` (the last one shallower) that
//! together make `count` sweeps.
template <class Launch>
void for_each_launch(std::int64_t count, int depth, Launch&& launch) {
  for (std::int64_t done = 0; done < count;) {
    const int d = static_cast<int>(std::min<std::int64_t>(depth, count - done));
    launch(d);
    done += d;
  }
}

}  // namespace relax::detail
