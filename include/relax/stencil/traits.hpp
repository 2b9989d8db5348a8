#pragma once
//! \file
//! `is_stencil_v<S>`: what a stencil policy must provide to work with every strategy.
//!
//! A stencil is a copyable type with
//! - `value_type` (float or double) and `static constexpr int radius` (1 for a five-point stencil);
//! - `value_type update(b, n, s, e, w) const` — the Jacobi update of one point;
//! - `value_type residual(b, c, n, s, e, w) const` — (b − A u) at one point;
//! both `RELAX_HOST_DEVICE` and written in `relax::arith` operations so backends agree bit for bit.

#include <type_traits>
#include <utility>

namespace relax {

namespace detail {
template <class S, class = void>
struct is_stencil : std::false_type {};

template <class S>
struct is_stencil<
    S, std::void_t<typename S::value_type, decltype(S::radius),
                   decltype(std::declval<const S&>().update(
                       std::declval<typename S::value_type>(), std::declval<typename S::value_type>(),
                       std::declval<typename S::value_type>(), std::declval<typename S::value_type>(),
                       std::declval<typename S::value_type>())),
                   decltype(std::declval<const S&>().residual(
                       std::declval<typename S::value_type>(), std::declval<typename S::value_type>(),
                       std::declval<typename S::value_type>(), std::declval<typename S::value_type>(),
                       std::declval<typename S::value_type>(),
                       std::declval<typename S::value_type>()))>>
    : std::bool_constant<std::is_floating_point_v<typename S::value_type> &&
                         std::is_copy_constructible_v<S>> {};
}  // namespace detail

//! True when `S` meets the stencil requirements above.
template <class S>
inline constexpr bool is_stencil_v = detail::is_stencil<S>::value;

}  // namespace relax
