#pragma once
//! \file
//! `Fixed`: the controller that checks every M sweeps (the concept is in `controller.hpp`).

#include <relax/control/controller.hpp>
#include <relax/core/error.hpp>

#include <cstdint>

namespace relax {

//! Checks every `check_interval` (M) sweeps, for the whole solve. The sweep count of a converged
//! solve is therefore a multiple of M (or the cap).
struct Fixed {
  int check_interval = 8;  //!< M, sweeps between two convergence checks; >= 1

  Fixed() = default;
  explicit Fixed(int m) : check_interval(m) { validate(); }

  void validate() const {
    detail::require(check_interval >= 1, "check_interval", check_interval,
                    "at least 1 sweep between checks");
  }
  void begin_solve() {}
  std::int64_t sweeps_before_check() const { return check_interval; }
  void observe(const CheckSample&) {}
};

}  // namespace relax
