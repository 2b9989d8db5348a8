#pragma once
//! \file
//! `Adaptive`: the strategy whose family and depth a controller chooses at run time, batch by
//! batch: exact temporal blocking (`TemporalBlock<D, ColumnStream>`) or block-asynchronous Jacobi
//! (`BlockAsync<D>`). `relax::Feedback` measures both and runs the faster (see
//! `relax/control/feedback.hpp`): `Solver<Stencil5<float>, Adaptive, Feedback>`.
//!
//! The controller must choose the family (`chooses_family_v`); with any other the solver does
//! not compile.

#include <relax/config.hpp>
#include <relax/strategy/traits.hpp>

#include <type_traits>

namespace relax {

struct Adaptive {
  static constexpr int depth = dynamic;  //!< chosen at run time, with the family
  static constexpr bool exact = false;   //!< asynchronous batches are not
  static constexpr int max_depth = 8;    //!< TemporalBlock<D, ColumnStream>'s deepest D (2D)
  static constexpr bool chosen_family = true;  //!< runs `Batch::family` (`runs_chosen_family_v`)
};

template <>
struct is_strategy<Adaptive> : std::true_type {};

}  // namespace relax
