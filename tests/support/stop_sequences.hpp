#pragma once
// Sequences of residual norms with the decisions a stop criterion must take on them, shared by
// the host test and the device test so both evaluations are held to the same answers.

#include <relax/control/stop.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace relax::testing {

struct StopSequence {
  std::string name;
  StopCriterion criterion;
  double rhs_norm = 1.0;
  std::vector<double> norms;          //!< the norm measured at check k, after (k + 1) · step counts
  std::int64_t step = 8;
  std::vector<StopReason> expected;   //!< the decision at each check, up to the first stop
};

inline std::vector<StopSequence> stop_sequences() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  using R = StopReason;
  return {
      {"converges at the third check", {1e-5, 0.0, 1000}, 10.0, {1.0, 1e-3, 9.99e-5, 1e-9}, 8,
       {R::go_on, R::go_on, R::converged}},
      {"reaches the cap", {1e-5, 0.0, 24}, 10.0, {1.0, 0.5, 0.25, 0.1}, 8, {R::go_on, R::go_on, R::cap}},
      {"breaks down", {1e-5, 0.0, 1000}, 1.0, {1.0, inf, 1.0}, 4, {R::go_on, R::non_finite}},
      {"NaN at the cap", {1e-5, 0.0, 8}, 1.0, {nan}, 8, {R::non_finite}},
      {"zero right-hand side", {1e-5, 0.0, 1000}, 0.0, {1e-3, 1e-6}, 1, {R::go_on, R::converged}},
      {"absolute tolerance", {1e-12, 1e-4, 1000}, 1e6, {1.0, 1e-4}, 1, {R::go_on, R::converged}},
      {"equal to the tolerance goes on", {0.5, 0.0, 3}, 2.0, {1.0, 1.0, 0.99}, 1,
       {R::go_on, R::go_on, R::converged}},
      // ‖b‖ overflowed its type: ρ would be 0 and read as converged.
      {"infinite norm of b", {1e-5, 0.0, 1000}, inf, {1.0}, 1, {R::non_finite}},
      {"NaN norm of b", {1e-5, 0.0, 1000}, nan, {1e-9}, 1, {R::non_finite}},
      // A subnormal ‖b‖: ρ overflows to infinity, which is not converged and not a breakdown.
      {"subnormal norm of b", {1e-5, 0.0, 3}, 1e-310, {1.0, 2.0, 3.0}, 1,
       {R::go_on, R::go_on, R::cap}},
      {"subnormal norm of b, absolute tolerance", {1e-5, 1e-300, 1000}, 1e-310, {1.0, 1e-301}, 1,
       {R::go_on, R::converged}},
  };
}

//! The decisions of the host evaluation, check by check, up to the first stop.
inline std::vector<StopReason> host_decisions(const StopSequence& s) {
  std::vector<StopReason> out;
  for (std::size_t k = 0; k < s.norms.size(); ++k) {
    out.push_back(s.criterion.decide(s.norms[k], s.rhs_norm, static_cast<std::int64_t>(k + 1) * s.step));
    if (out.back() != StopReason::go_on) break;
  }
  return out;
}

}  // namespace relax::testing
