#pragma once
//! \file
//! `is_strategy_v<S>` and `Sweeper<Strategy>`, the customisation point every strategy specialises.
//!
//! A strategy is a tag type carrying its constants. `Sweeper<Strategy>::run(stencil, u, scratch,
//! b, count, stream)` performs `count` Jacobi sweeps of A u = b on `stream`, leaving the iterate
//! in `u` (`scratch` is the strategy's second buffer; both must hold the boundary ring).

#include <relax/config.hpp>

#include <type_traits>

namespace relax {

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

//! Launches sweeps for a strategy. The primary template exists only to say what went wrong.
template <class Strategy>
struct Sweeper {
  static_assert(detail::dependent_false<Strategy>,
                "relax::Sweeper<Strategy>: no specialisation for this Strategy; is its header "
                "included, and is it a strategy (is_strategy_v)?");
};

}  // namespace relax
