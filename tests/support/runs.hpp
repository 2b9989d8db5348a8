#pragma once
// Test helpers: diffusion parameters in one call, and the comparison of two runs that must agree
// step for step and bit for bit.

#include "grids.hpp"

#include <catch2/catch.hpp>
#include <relax/control/report.hpp>
#include <relax/problem/diffusion.hpp>

namespace relax::testing {

inline DiffusionParams diffusion_params(std::int64_t n, double r, Source src, int steps = 10) {
  DiffusionParams p;
  p.n = n;
  p.r = r;
  p.source = src;
  p.steps = steps;
  return p;
}

//! Two solves that must agree: status, sweeps, checks, ρ, ‖b‖ and ρ at every recorded check.
inline void check_same_report(const SolveReport& got, const SolveReport& want) {
  CHECK(got.status == want.status);
  CHECK(got.sweeps == want.sweeps);
  CHECK(got.checks == want.checks);
  CHECK(got.rho == want.rho);
  CHECK(got.rhs_norm == want.rhs_norm);
  REQUIRE(got.history.size() == want.history.size());
  for (std::size_t c = 0; c < got.history.size(); ++c) {
    CHECK(got.history[c].sweeps == want.history[c].sweeps);
    CHECK(got.history[c].rho == want.history[c].rho);
  }
}

//! Same statuses, sweeps, checks and ρ for every step, and the same final state bit for bit.
template <class T>
void check_same_run(const RunReport& got, const HostGrid<T>& got_u, const RunReport& want,
                    const HostGrid<T>& want_u) {
  REQUIRE(got.steps.size() == want.steps.size());
  for (std::size_t k = 0; k < got.steps.size(); ++k) {
    INFO("step " << k + 1);
    CHECK(got.steps[k].status == want.steps[k].status);
    CHECK(got.steps[k].sweeps == want.steps[k].sweeps);
    CHECK(got.steps[k].checks == want.steps[k].checks);
    CHECK(got.steps[k].rho == want.steps[k].rho);
    CHECK(got.steps[k].rhs_norm == want.steps[k].rhs_norm);
  }
  INFO("differing points: " << count_differences(got_u, want_u));
  CHECK(same_bits(got_u, want_u));
}

}  // namespace relax::testing
