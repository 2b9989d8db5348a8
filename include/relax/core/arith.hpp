#pragma once
//! \file
//! The floating-point operations every stencil is written in. On the device they are the
//! round-to-nearest intrinsics, which the compiler never contracts into fused multiply-adds; on the
//! host they are the plain IEEE operations (relax compiles its users' host code with
//! `-ffp-contract=off`, see CMakeLists.txt). Together they make host and device compute the same
//! bits for the same expression.

#include <relax/config.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace relax::arith {

#if defined(__CUDA_ARCH__)
RELAX_HOST_DEVICE inline float add(float a, float b) { return __fadd_rn(a, b); }
RELAX_HOST_DEVICE inline float sub(float a, float b) { return __fsub_rn(a, b); }
RELAX_HOST_DEVICE inline float mul(float a, float b) { return __fmul_rn(a, b); }
RELAX_HOST_DEVICE inline float div(float a, float b) { return __fdiv_rn(a, b); }
RELAX_HOST_DEVICE inline double add(double a, double b) { return __dadd_rn(a, b); }
RELAX_HOST_DEVICE inline double sub(double a, double b) { return __dsub_rn(a, b); }
RELAX_HOST_DEVICE inline double mul(double a, double b) { return __dmul_rn(a, b); }
RELAX_HOST_DEVICE inline double div(double a, double b) { return __ddiv_rn(a, b); }
#else
template <class T>
inline T add(T a, T b) { return a + b; }
template <class T>
inline T sub(T a, T b) { return a - b; }
template <class T>
inline T mul(T a, T b) { return a * b; }
template <class T>
inline T div(T a, T b) { return a / b; }
#endif

//! The unsigned integer type with the width of `T`.
template <class T>
using bits_t = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

//! The bit pattern of |x|. For non-negative floats, integer order is numeric order, and a NaN
//! (sign cleared) compares above +inf; so a max over these bits is exact, independent of
//! reduction order, and propagates NaN, which a floating-point max does not do reliably.
template <class T>
RELAX_HOST_DEVICE inline bits_t<T> abs_bits(T x) {
  static_assert(std::is_floating_point_v<T>, "abs_bits: T must be float or double");
  bits_t<T> b;
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4) {
    b = __float_as_uint(x);
  } else {
    b = static_cast<bits_t<T>>(__double_as_longlong(x));
  }
#else
  std::memcpy(&b, &x, sizeof(T));
#endif
  constexpr bits_t<T> sign = bits_t<T>(1) << (8 * sizeof(T) - 1);
  return b & ~sign;
}

//! The value whose bit pattern is `b` (the inverse of `abs_bits` on non-negative values).
template <class T>
RELAX_HOST_DEVICE inline T from_bits(bits_t<T> b) {
  T x;
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4) {
    x = __uint_as_float(b);
  } else {
    x = __longlong_as_double(static_cast<long long>(b));
  }
#else
  std::memcpy(&x, &b, sizeof(T));
#endif
  return x;
}

}  // namespace relax::arith
