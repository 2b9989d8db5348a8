#pragma once
// Test helpers: awkward grid contents and bit-exact comparison.

#include <relax/domain/grid.hpp>

#include <cstdint>
#include <cstring>

namespace relax::testing {

//! A pseudo-random number in [0, 1) from a point and a seed (splitmix64), so grids of billions of
//! points fill in parallel.
inline double hash_unit(std::uint64_t seed, std::int64_t i, std::int64_t j) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(i) * 0xBF58476D1CE4E5B9ull +
                    static_cast<std::uint64_t>(j) * 0x94D049BB133111EBull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

//! Fills every point, ring included, with values in [lo, hi) drawn from `seed`.
template <class T>
void fill_random(HostGrid<T>& g, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  const std::int64_t e = g.n() + 2;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < e; ++i)
    for (std::int64_t j = 0; j < e; ++j) g(i, j) = static_cast<T>(lo + (hi - lo) * hash_unit(seed, i, j));
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
