#pragma once
//! \file
//! `Ladder`: the source study's G-asc and G-desc controllers. D steps through {1, 2, 4, 8} (up for
//! ascending, down for descending) as ρ first falls below 1e-2, 1e-3 and 1e-4. The steps are
//! latched: a level once reached is kept for the rest of the solve even if ρ rises again, so D
//! cannot oscillate. Each solve (time step) starts again at the first level.

#include <relax/control/fixed.hpp>
#include <relax/core/error.hpp>

#include <array>
#include <cstdint>
#include <string>

namespace relax {

struct Ladder {
  enum class Direction { ascending, descending };

  Direction direction = Direction::ascending;
  int check_interval = 8;                               //!< M
  std::array<double, 3> thresholds = {1e-2, 1e-3, 1e-4};  //!< strictly decreasing, > 0
  std::array<int, 4> depths = {1, 2, 4, 8};               //!< the ascending order of D

  Ladder() = default;
  explicit Ladder(Direction d, int m = 8) : direction(d), check_interval(m) { validate(); }

  void validate() const {
    Fixed(check_interval).validate();
    for (std::size_t k = 0; k < thresholds.size(); ++k)
      detail::require(thresholds[k] > 0 && (k == 0 || thresholds[k] < thresholds[k - 1]),
                      "thresholds", thresholds[k], "positive, strictly decreasing thresholds");
    for (int d : depths) detail::require(d >= 1, "depths", d, "depths >= 1");
  }
  //! Starts a solve at the first level. \throws relax::invalid_argument if a depth is deeper than
  //! the strategy runs (`SolveContext::max_depth`, e.g. a 3D tile whose ghost zone outgrows
  //! shared memory).
  void begin_solve(const SolveContext& context = {}) {
    level_ = 0;
    if (context.max_depth > 0)
      for (int d : depths)
        detail::require(d <= context.max_depth, "Ladder::depths", d,
                        ("depths no deeper than the strategy runs here (D <= " +
                         std::to_string(context.max_depth) + ")").c_str());
  }
  std::int64_t sweeps_before_check() const { return check_interval; }
  int depth() const {
    return direction == Direction::ascending ? depths[level_] : depths[depths.size() - 1 - level_];
  }
  //! Moves to the level of every threshold ρ has now fallen below; never back.
  void observe(const CheckSample& s) {
    while (level_ < thresholds.size() && s.rho < thresholds[level_]) ++level_;
  }
  //! Ladder steps on ρ alone, so the solver need not time its batches.
  bool times_batch() const { return false; }
  //! How many thresholds ρ has crossed in this solve.
  std::size_t level() const { return level_; }

 private:
  std::size_t level_ = 0;
};

}  // namespace relax
