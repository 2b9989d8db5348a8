#pragma once
// Shared by the tests of CG on several parts (MultiCG with each Comm policy): a smooth right-hand
// side, and the check that two solves report the same outcome, bit for bit.

#include <catch2/catch.hpp>

#include <relax/control/cg_report.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace relax::testing {

//! sin(0.37 k) + 0.25: smooth, nonzero, no symmetry a split could hide behind.
template <class T = double>
std::vector<T> wavy(std::int64_t n) {
  std::vector<T> v(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) v[static_cast<std::size_t>(k)] = static_cast<T>(std::sin(0.37 * double(k)) + 0.25);
  return v;
}

//! `got` reports what `want` reports: status, iterations, both residuals, the switch.
inline void check_same_report(const CgReport& got, const CgReport& want) {
  CHECK(got.status == want.status);
  CHECK(got.iterations == want.iterations);
  CHECK(got.residual_norm == want.residual_norm);
  CHECK(got.true_residual_norm == want.true_residual_norm);
  CHECK(got.switched_at == want.switched_at);
}

}  // namespace relax::testing
