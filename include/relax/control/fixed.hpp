#pragma once
//! \file
//! Convergence controllers decide how many sweeps run before the next check of
//! ρ = ‖b − A u‖∞ / ‖b‖∞ (see `relax::SolveOptions`); the solver stops at the first check with
//! ρ < tol, or at the sweep cap.
//!
//! A controller is a copyable type with `void validate() const` (throwing
//! `relax::invalid_argument` on bad settings) and `std::int64_t sweeps_before_check() const`.

#include <relax/core/error.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

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
  std::int64_t sweeps_before_check() const { return check_interval; }
};

namespace detail {
template <class C, class = void>
struct is_controller : std::false_type {};
template <class C>
struct is_controller<C, std::void_t<decltype(std::declval<const C&>().validate()),
                                    decltype(std::declval<const C&>().sweeps_before_check())>>
    : std::is_convertible<decltype(std::declval<const C&>().sweeps_before_check()), std::int64_t> {};
}  // namespace detail

//! True when `C` is a convergence controller.
template <class C>
inline constexpr bool is_controller_v = detail::is_controller<C>::value;

}  // namespace relax
