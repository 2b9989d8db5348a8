#pragma once
//! \file
//! Asynchronous copies from global into shared memory (`cp.async`, sm_80 and later), for agents
//! that stage data a thread reads back itself: no register holds the data in flight. 16-byte
//! copies go through L2 only (`.cg`), and one that must not read memory fills its bytes with
//! zeros instead; 4- and 8-byte copies go through L1. Only the calling thread may read what it
//! staged, after `wait_copies`; sharing it with other threads needs a barrier on top.

#include <relax/config.hpp>

namespace relax::detail {

#if defined(__CUDACC__)

//! Starts copying the 16 bytes at `src` (global, 16-byte aligned) to `dst` (shared, 16-byte
//! aligned); when `read` is false `src` is not read and `dst` receives zeros.
__device__ __forceinline__ void copy_async_16(void* dst, const void* src, bool read) {
  const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const unsigned bytes = read ? 16u : 0u;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(src), "r"(bytes) : "memory");
}

//! Starts copying the 4 or 8 bytes (`Bytes`) at `src` (global, aligned to them) to `dst` (shared,
//! likewise), through L1 (`.ca`: the only form for fewer than 16 bytes; reads of memory that
//! other SMs write need the L1 invalidated since, as a device-scope acquire fence does).
template <int Bytes>
__device__ __forceinline__ void copy_async(void* dst, const void* src) {
  static_assert(Bytes == 4 || Bytes == 8, "relax: copy_async copies 4 or 8 bytes (copy_async_16: 16)");
  const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(to), "l"(src), "n"(Bytes) : "memory");
}

//! Closes the calling thread's current group of asynchronous copies.
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

//! Waits until at most `Pending` of the calling thread's most recent groups are still in flight.
template <int Pending>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

#else

// Compiled by a host compiler: the agents run in the host tests' emulation of a thread block
// (tests/support/block_emulation.hpp), which defines these hooks (a copy lands when its thread
// waits for it); a program that includes an agent without it does not link.
void emulated_copy(void* dst, const void* src, int bytes, bool read);
void emulated_commit_copies();
void emulated_wait_copies(int pending);
inline void copy_async_16(void* dst, const void* src, bool read) { emulated_copy(dst, src, 16, read); }
template <int Bytes>
inline void copy_async(void* dst, const void* src) {
  static_assert(Bytes == 4 || Bytes == 8, "relax: copy_async copies 4 or 8 bytes (copy_async_16: 16)");
  emulated_copy(dst, src, Bytes, true);
}
inline void commit_copies() { emulated_commit_copies(); }
template <int Pending>
inline void wait_copies() {
  emulated_wait_copies(Pending);
}

#endif

}  // namespace relax::detail
