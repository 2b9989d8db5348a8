#pragma once
// Test helpers: awkward grid contents and bit-exact comparison.

#include <relax/stencil/grid.hpp>

#include <cstdint>
#include <cstring>
#include <random>

namespace relax::testing {

//! Fills every point, ring included, with values in [lo, hi) drawn from `seed`.
template <class T>
void fill_random(HostGrid<T>& g, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (std::int64_t i = 0; i <= g.n() + 1; ++i)
    for (std::int64_t j = 0; j <= g.n() + 1; ++j) g(i, j) = static_cast<T>(dist(rng));
}

//! True when the two grids hold the same bits everywhere, padding included.
template <class T>
bool same_bits(const HostGrid<T>& a, const HostGrid<T>& b) {
  return a.layout() == b.layout() &&
         std::memcmp(a.storage().data(), b.storage().data(), a.storage().size() * sizeof(T)) == 0;
}

//! The number of interior points whose bits differ (for failure messages).
template <class T>
std::int64_t count_differences(const HostGrid<T>& a, const HostGrid<T>& b) {
  std::int64_t d = 0;
  for (std::int64_t i = 0; i <= a.n() + 1; ++i)
    for (std::int64_t j = 0; j <= a.n() + 1; ++j)
      if (std::memcmp(&a(i, j), &b(i, j), sizeof(T)) != 0) ++d;
  return d;
}

}  // namespace relax::testing
