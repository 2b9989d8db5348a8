#pragma once
//! \file
//! `Auto`: the strategy that chooses a strategy. It picks `Sync`, `TemporalBlock<D, ColumnStream>`,
//! `BlockAsync<D>` or the streamed device loop `DeviceLoop<TemporalBlock<D, ColumnStream>>` from
//! features known before the run: the working set (u, u' and b) relative to the L2 size of the
//! device it runs on (queried, not hard-coded) and the coupling r. The rule is a depth-2 decision
//! tree trained on this project's measurements on the H200 (`benchmarks/train_selector.py`,
//! generated into `relax/strategy/auto_tree.hpp`, which names its data and reports its
//! leave-one-out accuracy). Where the grid fits on chip a rule runs the on-chip device loop
//! instead (`auto_device_loop` in auto.cuh, which also says where the streamed loop runs).
//!
//! The coupling is what every stencil has: its Jacobi contraction q, the update of a point whose
//! neighbours are all 1 and whose b is 0 (for `Stencil5`, q = 4r / (1 + 4r)), turned back into
//! the r of a `Stencil5` with the same q, r = q / (2·rank·(1 − q)), evaluated on the host at
//! point (0, 0). A stencil whose update cannot run on the host with its own data (it reads a
//! coefficient field in device memory) says its coupling instead: a member
//! `double host_coupling() const`, which `equivalent_coupling` returns without calling `update`.
//! The tree was trained on 2D runs only: for 3D stencils `Auto` runs `Sync` until it is trained
//! on 3D measurements, and does not evaluate the stencil (`auto_select_for`).

#include <relax/core/error.hpp>
#include <relax/core/family.hpp>
#include <relax/domain/grid.hpp>
#include <relax/stencil/traits.hpp>
#include <relax/strategy/auto_tree.hpp>
#include <relax/strategy/traits.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace relax {

//! Picks the strategy and D from (working set / L2, r), the same for every batch of a solver;
//! see the file comment.
struct Auto {
  static constexpr bool exact = false;              //!< the choice may be BlockAsync
  static constexpr bool picks_device_loop = true;  //!< per grid (`picks_device_loop_v`, `auto_device_loop`)
};

template <>
struct is_strategy<Auto> : std::true_type {};

inline std::string to_string(const FamilyChoice& c) {
  switch (c.family) {
    case Family::sync: return "Sync";
    case Family::temporal: {
      const std::string inner = "TemporalBlock<" + std::to_string(c.depth) + ", ColumnStream>";
      return c.device_loop ? "DeviceLoop<" + inner + ">" : inner;
    }
    case Family::blockasync: return "BlockAsync<" + std::to_string(c.depth) + ">";
  }
  return "unknown";
}

namespace detail {
template <class S, class = void>
struct has_host_coupling : std::false_type {};
template <class S>
struct has_host_coupling<S, std::void_t<decltype(static_cast<double>(std::declval<const S&>().host_coupling()))>>
    : std::true_type {};
}  // namespace detail

//! The coupling r of the `Stencil5` whose Jacobi contraction equals stencil `s`'s at point `at`
//! (see the file comment); +inf where the contraction is 1 or more. For a stencil with
//! `host_coupling()`, that value (its update is not called on the host).
//! \throws relax::invalid_argument when `host_coupling()` is not a number > 0 (+inf allowed).
template <class S>
double equivalent_coupling(const S& s, Point at = {}) {
  static_assert(is_stencil_v<S>, "relax::equivalent_coupling: S is not a stencil (is_stencil_v)");
  if constexpr (detail::has_host_coupling<S>::value) {
    const double r = static_cast<double>(s.host_coupling());
    detail::require(r > 0.0, "host_coupling()", r, "a coupling r > 0 (+inf for a contraction of 1 or more)");
    return r;
  } else {
    using T = typename S::value_type;
    neighbours_t<S> ones;
    ones.c = ones.n = ones.s = ones.e = ones.w = T(1);
    if constexpr (S::rank == 3) ones.up = ones.down = T(1);
    const double q = static_cast<double>(s.update(ones, at, T(0)));
    if (!(q < 1.0)) return std::numeric_limits<double>::infinity();
    return q / (2.0 * S::rank * (1.0 - q));
  }
}

//! What `Auto` picks for a box `e` of `element_bytes`-byte values with coupling `r` on a device
//! with `l2_bytes` of L2.
inline FamilyChoice auto_select(const Extents& e, double r, std::size_t element_bytes, std::size_t l2_bytes) {
  detail::require(l2_bytes > 0, "l2_bytes", l2_bytes, "the L2 size of a device, > 0 bytes");
  e.validate();
  if (e.rank == 3) return {Family::sync, 1};
  const double working_set = 3.0 * static_cast<double>(e.points()) * static_cast<double>(element_bytes);
  return auto_choice(working_set / static_cast<double>(l2_bytes), r);
}

//! What `Auto` picks for stencil `s` on a box `e` of `T` values: `auto_select` at
//! `equivalent_coupling(s)`; in 3D, where `auto_select` runs `Sync` at any coupling, without
//! evaluating the stencil.
template <class S, class T = typename S::value_type>
FamilyChoice auto_select_for(const S& s, const Extents& e, std::size_t l2_bytes) {
  detail::require(e.rank == S::rank, "the box", e.to_text(), "a box of the stencil's rank");
  const double r = S::rank == 3 ? 1.0 : equivalent_coupling(s);  // 3D: not read
  return auto_select(e, r, sizeof(T), l2_bytes);
}

//! `auto_select` for an `n × n` square.
inline FamilyChoice auto_select(std::int64_t n, double r, std::size_t element_bytes, std::size_t l2_bytes) {
  detail::require(n >= 1, "n", n, "at least 1 interior point per side");
  return auto_select(Extents(n, n), r, element_bytes, l2_bytes);
}

}  // namespace relax
