#pragma once
//! \file
//! `is_strategy_v<S>`, `Batch` and `Sweeper<Strategy>`, the customisation point every strategy
//! specialises.
//!
//! A strategy is a tag type carrying its constants. `Sweeper<Strategy>::run(stencil, u, scratch,
//! b, batch, stream)` performs `batch.sweeps` Jacobi sweeps of A u = b on `stream`, leaving the
//! iterate in `u` (`scratch` is the strategy's second buffer; both must hold the boundary ring).
//! The batch carries the depth and the family a controller chose; each sweeper reads what it
//! needs of it, so the solver never asks which strategy it drives.

#include <relax/config.hpp>
#include <relax/core/family.hpp>

#include <cstdint>
#include <type_traits>

namespace relax {

//! One batch of sweeps as the solver hands it to a strategy: how many sweeps, at which depth D
//! (for strategies whose D is `relax::dynamic`; others run their own), in which family (for
//! strategies that run the family a controller chooses, `relax::Adaptive`).
struct Batch {
  std::int64_t sweeps = 0;
  int depth = 1;
  Family family = Family::sync;
};

//! Specialised by each strategy header to `std::true_type`.
template <class S>
struct is_strategy : std::false_type {};

//! True when `S` is a sweep strategy (`Sync`, and later `BlockAsync<D>`, `TemporalBlock<D>`).
template <class S>
inline constexpr bool is_strategy_v = is_strategy<S>::value;

namespace detail {
template <class S, class = void>
struct has_dynamic_depth : std::false_type {};
template <class S>
struct has_dynamic_depth<S, std::void_t<decltype(S::depth)>> : std::bool_constant<S::depth == dynamic> {};
}  // namespace detail

//! True when the strategy's depth D is chosen at run time (`BlockAsync<relax::dynamic>`).
template <class S>
inline constexpr bool has_dynamic_depth_v = detail::has_dynamic_depth<S>::value;

namespace detail {
template <class S, class = void>
struct fixed_depth : std::integral_constant<int, 1> {};
template <class S>
struct fixed_depth<S, std::void_t<decltype(S::depth)>>
    : std::integral_constant<int, S::depth == dynamic ? 1 : S::depth> {};
}  // namespace detail

//! The depth D a strategy runs when no controller chooses one: its tag's D, or 1.
template <class S>
inline constexpr int fixed_depth_v = detail::fixed_depth<S>::value;

namespace detail {
template <class S, class = void>
struct is_exact_strategy : std::false_type {};
template <class S>
struct is_exact_strategy<S, std::void_t<decltype(S::exact)>> : std::bool_constant<S::exact> {};
}  // namespace detail

//! True when the strategy's iterates are those of synchronous Jacobi whatever its depth (`Sync`,
//! `TemporalBlock<D>`); false for `BlockAsync<D>` and for strategies that do not say.
template <class S>
inline constexpr bool is_exact_strategy_v = detail::is_exact_strategy<S>::value;

namespace detail {
template <class S, class = void>
struct max_depth_of : std::integral_constant<int, 0> {};
template <class S>
struct max_depth_of<S, std::void_t<decltype(S::max_depth)>> : std::integral_constant<int, S::max_depth> {};
}  // namespace detail

//! The deepest D a strategy with a run-time depth can run (`TemporalBlock<dynamic,
//! ColumnStream>`: 8; a tiled `TemporalBlock`: the tile's shorter side); 0 where there is no limit.
template <class S>
inline constexpr int max_depth_v = detail::max_depth_of<S>::value;

namespace detail {
template <class S, class = void>
struct runs_chosen_family : std::false_type {};
template <class S>
struct runs_chosen_family<S, std::void_t<decltype(S::chosen_family)>> : std::bool_constant<S::chosen_family> {};
template <class S, class = void>
struct family_of : std::integral_constant<Family, Family::sync> {};
template <class S>
struct family_of<S, std::void_t<decltype(S::family)>> : std::integral_constant<Family, S::family> {};
}  // namespace detail

//! True when the strategy runs the family a controller chooses in each batch (`relax::Adaptive`).
template <class S>
inline constexpr bool runs_chosen_family_v = detail::runs_chosen_family<S>::value;

//! The family of a strategy's batches (`Family::sync` for strategies that do not say).
template <class S>
inline constexpr Family family_v = detail::family_of<S>::value;

namespace detail {
template <class S, class = void>
struct runs_on_device : std::false_type {};
template <class S>
struct runs_on_device<S, std::void_t<decltype(S::device_loop)>> : std::bool_constant<S::device_loop> {};
}  // namespace detail

//! True when the strategy runs a solve's whole loop on the device (`relax::DeviceLoop`): the
//! solver launches once per solve instead of once per batch.
template <class S>
inline constexpr bool runs_on_device_v = detail::runs_on_device<S>::value;

namespace detail {
template <class S, class = void>
struct picks_device_loop : std::false_type {};
template <class S>
struct picks_device_loop<S, std::void_t<decltype(S::picks_device_loop)>> : std::bool_constant<S::picks_device_loop> {};
}  // namespace detail

//! True when the strategy picks, for each grid, a device loop to run every solve as, or none
//! (`relax::Auto`). The solver then runs Auto's choice (`auto_device_loop`, `AutoLoop`, with
//! `AutoOnChip` as the on-chip loop): only `Auto` declares it.
template <class S>
inline constexpr bool picks_device_loop_v = detail::picks_device_loop<S>::value;

//! Launches sweeps for a strategy. The primary template exists only to say what went wrong.
template <class Strategy>
struct Sweeper {
  static_assert(detail::dependent_false<Strategy>,
                "relax::Sweeper<Strategy>: no specialisation for this Strategy; is its header "
                "included, and is it a strategy (is_strategy_v)?");
};

}  // namespace relax
