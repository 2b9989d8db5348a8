#pragma once
//! \file
//! Library-wide configuration: version, the host/device function macro and `relax::dynamic`.

#define RELAX_VERSION_MAJOR 0
#define RELAX_VERSION_MINOR 1
#define RELAX_VERSION_PATCH 0

#if defined(__CUDACC__)
//! Marks a function callable from host and device code; plain C++ when no CUDA compiler is used.
#define RELAX_HOST_DEVICE __host__ __device__
#else
#define RELAX_HOST_DEVICE
#endif

namespace relax {

//! Template value meaning "decided at run time" (a depth D, a check interval M).
inline constexpr int dynamic = -1;

//! The library version as "major.minor.patch".
inline constexpr const char* version_string = "0.1.0";

namespace detail {
//! Always false, but only once `T` is known: lets a primary template `static_assert` readably.
template <class...>
inline constexpr bool dependent_false = false;
}  // namespace detail

}  // namespace relax
