#pragma once
// Random vectors and the relative error of a solution: shared by the CG tests.

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace relax::testing {

//! `n` values uniform in [−1, 1), reproducible from `seed`.
template <class T>
std::vector<T> random_vector(std::int64_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

//! ‖x − exact‖₂ / ‖exact‖₂, in double.
template <class T, class U>
double relative_error(const std::vector<T>& x, const std::vector<U>& exact) {
  double e = 0, s = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const double d = double(x[k]) - double(exact[k]);
    e += d * d;
    s += double(exact[k]) * double(exact[k]);
  }
  return std::sqrt(e / s);
}

}  // namespace relax::testing
