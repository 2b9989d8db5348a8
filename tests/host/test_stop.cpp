// The stop criterion (control/stop.hpp): the order of its decisions and its math, on the host.
// tests/device/test_stop.cu runs the same sequences through the device evaluation.
#include <catch2/catch.hpp>

#include "../support/stop_sequences.hpp"

#include <relax/control/stop.hpp>

#include <limits>

using relax::StopCriterion;
using relax::StopReason;

TEST_CASE("stop criterion: non-finite first, then converged, then the cap", "[stop]") {
  const StopCriterion c{1e-5, 0.0, 100};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(c.decide(1.0, 10.0, 5) == StopReason::go_on);
  CHECK(c.decide(nan, 10.0, 5) == StopReason::non_finite);
  CHECK(c.decide(inf, 10.0, 100) == StopReason::non_finite);
  CHECK(c.decide(9.9e-5, 10.0, 5) == StopReason::converged);   // ρ = 9.9e-6 < 1e-5
  CHECK(c.decide(1e-4, 10.0, 5) == StopReason::go_on);         // ρ = 1e-5: strict
  CHECK(c.decide(9.9e-5, 10.0, 100) == StopReason::converged); // converged beats the cap
  CHECK(c.decide(1.0, 10.0, 100) == StopReason::cap);
  CHECK(c.decide(1.0, 0.0, 5) == StopReason::go_on);           // ‖b‖ = 0: ρ = ‖r‖
  CHECK(c.decide(1e-6, 0.0, 5) == StopReason::converged);
  // A norm of b that overflowed (or is NaN) is a breakdown, not ρ = 0 (converged) or s = 1.
  CHECK(c.decide(1e153, inf, 5) == StopReason::non_finite);
  CHECK(c.decide(1e-6, nan, 5) == StopReason::non_finite);
  // A subnormal ‖b‖: ρ = ‖r‖ / ‖b‖ overflows; a finite ‖r‖ then goes on (or meets the cap).
  CHECK(c.decide(1.0, 1e-310, 5) == StopReason::go_on);
  CHECK(c.decide(1.0, 1e-310, 100) == StopReason::cap);
}

TEST_CASE("stop criterion: absolute tolerance, and a norm already divided by the scale", "[stop]") {
  const StopCriterion abs_only{0.0, 1e-3, 10};
  CHECK(abs_only.decide(1e-3, 1e6, 1) == StopReason::converged);  // ‖r‖ ≤ abs_tol
  CHECK(abs_only.decide(2e-3, 1e6, 1) == StopReason::go_on);
  const StopCriterion c{1e-5, 0.0, 10};
  CHECK(c.decide_relative(9e-6, 4.0, 3) == StopReason::converged);
  CHECK(c.decide_relative(2e-5, 4.0, 10) == StopReason::cap);
  // ρ finite but ‖r‖ = ρ · s overflowing: not a breakdown.
  CHECK(c.decide_relative(1e10, 1e300, 3) == StopReason::go_on);
  CHECK(c.decide_relative(std::numeric_limits<double>::infinity(), 4.0, 3) == StopReason::non_finite);
  CHECK(StopCriterion::relative(3.0, 0.0) == 3.0);
  CHECK(StopCriterion::relative(3.0, 4.0) == 0.75);
}

TEST_CASE("stop criterion: settings are validated with the caller's names", "[stop][validation]") {
  CHECK_THROWS_WITH((StopCriterion{0.0, 0.0, 10}.validate("tol")), Catch::Contains("invalid tol"));
  CHECK_THROWS_WITH((StopCriterion{1e-5, 0.0, 0}.validate("tol", "abs", "max_sweeps")),
                    Catch::Contains("invalid max_sweeps = 0"));
  CHECK_THROWS_AS((StopCriterion{-1.0, 0.0, 1}.validate()), relax::invalid_argument);
  CHECK_NOTHROW((StopCriterion{1e-8, 0.0, 1}.validate()));
}

TEST_CASE("stop criterion: the host decisions of the shared sequences", "[stop]") {
  for (const auto& seq : relax::testing::stop_sequences()) {
    INFO(seq.name);
    const auto got = relax::testing::host_decisions(seq);
    CHECK(got == seq.expected);
  }
}
