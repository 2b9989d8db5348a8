#pragma once
//! \file
//! `Ladder`: the source study's G-asc and G-desc controllers. D steps through {1, 2, 4, 8} (up for
//! ascending, down for descending) as ρ first falls below 1e-2, 1e-3 and 1e-4. The steps are
//! latched: a level once reached is kept for the rest of the solve even if ρ rises again, so D
//! cannot oscillate. Each solve (time step) starts again at the first level. A device loop
//! (`DeviceLoop<TemporalBlock<D, OnChip>>`, `DeviceLoop<TemporalBlock<D, ColumnStream>>`) runs
//! the same rule on the device (`LadderRule`); its depths must not exceed the loop's D.

#include <relax/config.hpp>
#include <relax/control/fixed.hpp>
#include <relax/core/error.hpp>

#include <array>
#include <cstdint>
#include <string>

namespace relax {

//! The ladder's rule in the form a kernel takes (`Ladder::rule`): the level ρ has reached, and the
//! depth of a level. `Ladder` decides through it, so the host loop and a device loop
//! (`DeviceLoopPlan::ladder`) take the same decision on the same ρ.
struct LadderRule {
  double thresholds[3] = {1e-2, 1e-3, 1e-4};
  int depths[4] = {1, 2, 4, 8};
  bool descending = false;

  //! The level after a check of `rho` at `level`: every threshold ρ has fallen below is passed,
  //! and a level is never left (a NaN passes none).
  RELAX_HOST_DEVICE int advance(int level, double rho) const {
    while (level < 3 && rho < thresholds[level]) ++level;
    return level;
  }
  //! D at `level` (0 to 3).
  RELAX_HOST_DEVICE int depth(int level) const { return descending ? depths[3 - level] : depths[level]; }
};

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
  int depth() const { return rule().depth(static_cast<int>(level_)); }
  //! Moves to the level of every threshold ρ has now fallen below; never back.
  void observe(const CheckSample& s) { level_ = static_cast<std::size_t>(rule().advance(static_cast<int>(level_), s.rho)); }
  //! The rule as a device loop takes it.
  LadderRule rule() const {
    LadderRule r;
    for (std::size_t k = 0; k < thresholds.size(); ++k) r.thresholds[k] = thresholds[k];
    for (std::size_t k = 0; k < depths.size(); ++k) r.depths[k] = depths[k];
    r.descending = direction == Direction::descending;
    return r;
  }
  //! Ladder steps on ρ alone, so the solver need not time its batches.
  bool times_batch() const { return false; }
  //! How many thresholds ρ has crossed in this solve.
  std::size_t level() const { return level_; }

 private:
  std::size_t level_ = 0;
};

}  // namespace relax
