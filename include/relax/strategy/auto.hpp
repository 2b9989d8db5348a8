#pragma once
//! \file
//! `Auto`: the strategy that chooses a strategy. Before each batch of sweeps it picks `Sync`,
//! `TemporalBlock<D, ColumnStream>` or `BlockAsync<D>` from features known before the run: the
//! working set (u, u' and b) relative to the L2 size of the device it runs on (queried, not
//! hard-coded) and the coupling r of the stencil. The rule is a depth-2 decision tree trained on
//! this project's measurements on the H200 (`benchmarks/train_selector.py`, generated into
//! `relax/strategy/auto_tree.hpp`, which names its data and reports its leave-one-out accuracy).
//!
//! The features need the stencil's coupling, so `Auto` takes stencils with a member `r`
//! (`Stencil5<T>`); the tree knows nothing about other operators.

#include <relax/core/error.hpp>
#include <relax/strategy/auto_tree.hpp>
#include <relax/strategy/traits.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace relax {

//! Picks the strategy and D from (working set / L2, r), the same for every batch of a solver;
//! see the file comment.
struct Auto {
  static constexpr bool exact = false;  //!< the choice may be BlockAsync
};

template <>
struct is_strategy<Auto> : std::true_type {};

inline std::string to_string(const AutoChoice& c) {
  switch (c.family) {
    case AutoFamily::sync: return "Sync";
    case AutoFamily::temporal: return "TemporalBlock<" + std::to_string(c.depth) + ", ColumnStream>";
    case AutoFamily::blockasync: return "BlockAsync<" + std::to_string(c.depth) + ">";
  }
  return "unknown";
}

//! What `Auto` picks for an `n × n` grid of `element_bytes`-byte values with coupling `r` on a
//! device with `l2_bytes` of L2.
inline AutoChoice auto_select(std::int64_t n, double r, std::size_t element_bytes, std::size_t l2_bytes) {
  detail::require(l2_bytes > 0, "l2_bytes", l2_bytes, "the L2 size of a device, > 0 bytes");
  const double points = static_cast<double>(n) * static_cast<double>(n);
  const double working_set = 3.0 * points * static_cast<double>(element_bytes);
  return auto_choice(working_set / static_cast<double>(l2_bytes), r);
}

namespace detail {
template <class S, class = void>
struct has_coupling : std::false_type {};
template <class S>
struct has_coupling<S, std::void_t<decltype(std::declval<const S&>().r)>> : std::true_type {};
}  // namespace detail

}  // namespace relax
