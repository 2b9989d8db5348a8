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

//! Calls `f(k, i, j)` for every point of `g`, ring included (k = 0 in 2D).
template <class T, class F>
void for_each_point(const HostGrid<T>& g, F&& f) {
  const GridLayout& l = g.layout();
  const std::int64_t rows = l.ny() + 2 * l.halo, cols = l.nx() + 2 * l.halo;
  for (std::int64_t k = 0; k < l.planes(); ++k)
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) f(k, i, j);
}

//! Fills every point, ring included, with values in [lo, hi) drawn from `seed`.
template <class T>
void fill_random(HostGrid<T>& g, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  const GridLayout& l = g.layout();
  const std::int64_t rows = l.ny() + 2 * l.halo, cols = l.nx() + 2 * l.halo;
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < l.planes() * rows; ++r)
    for (std::int64_t j = 0; j < cols; ++j)
      g.storage()[l.offset(r / rows, r % rows, j)] =
          static_cast<T>(lo + (hi - lo) * hash_unit(seed, r, j));
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
  for_each_point(a, [&](std::int64_t k, std::int64_t i, std::int64_t j) {
    const std::int64_t at = a.layout().offset(k, i, j);
    if (std::memcmp(&a.storage()[at], &b.storage()[at], sizeof(T)) != 0) ++d;
  });
  return d;
}

}  // namespace relax::testing
