#pragma once
//! \file
//! A grid-wide barrier for persistent kernels whose every wait is bounded in time.
//!
//! Cooperative groups' `grid.sync()` waits for ever if a block never arrives (blocks that are not
//! co-resident, a block that left the loop early). This barrier counts arrivals in a device word
//! and releases a generation counter when the last block arrives; a block that waits longer than
//! the time limit raises a shared failure flag, and every block that sees the flag (waiting, or
//! arriving later) returns `false` at once, so a broken barrier ends the kernel with a status the
//! host reports, never with a hang. The state must be zeroed before the launch.
//!
//! Blocks need not agree on the outcome of the barrier that fails: a waiter may time out just as
//! the last block arrives, and blocks that saw the generation move return `true`. Those blocks
//! then fail at the next barrier (the timed-out block never arrives), so every wait still ends;
//! callers must treat the raised flag as the kernel's outcome (the device loop's host side
//! throws whenever it is set). A barrier whose outcome every block agrees on would make the
//! generation word carry it (a compare-and-swap by the last arriver or by the timed-out waiter).

//!
//! Ordering: a block's writes before `arrive_and_wait` are visible to every block after it (the
//! block barrier gathers them, thread 0 fences and releases at device scope; waiters acquire).

#include <relax/config.hpp>

#include <cuda/atomic>

#include <cstdint>

namespace relax::detail {

//! Nanoseconds of the GPU's global timer.
__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

//! The device words of one barrier (zeroed before the launch).
struct GridBarrierState {
  unsigned int arrived = 0;     //!< blocks arrived at the current barrier
  unsigned int generation = 0;  //!< barriers completed
  int failed = 0;               //!< 1 once a wait timed out
};

struct GridBarrier {
  GridBarrierState* state = nullptr;
  unsigned int blocks = 0;          //!< blocks that must arrive (the grid, unless a test says more)
  std::uint64_t timeout_ns = 0;     //!< the longest a block waits

  //! Called by every thread of every block. Returns true when all blocks arrived; false when the
  //! barrier failed (this wait or an earlier one timed out).
  __device__ bool arrive_and_wait() const {
    __shared__ int passed;
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
      cuda::atomic_ref<unsigned int, cuda::thread_scope_device> arrived(state->arrived);
      cuda::atomic_ref<unsigned int, cuda::thread_scope_device> generation(state->generation);
      cuda::atomic_ref<int, cuda::thread_scope_device> failed(state->failed);
      // The generation cannot move before this block arrives, so read it first.
      const unsigned int current = generation.load(cuda::memory_order_relaxed);
      __threadfence();
      int ok = 1;
      if (arrived.fetch_add(1u, cuda::memory_order_acq_rel) + 1u == blocks) {
        arrived.store(0u, cuda::memory_order_relaxed);
        generation.store(current + 1u, cuda::memory_order_release);
      } else {
        const std::uint64_t start = global_ns();
        while (generation.load(cuda::memory_order_acquire) == current) {
          if (failed.load(cuda::memory_order_relaxed) != 0) {
            ok = 0;
            break;
          }
          if (global_ns() - start > timeout_ns) {
            failed.store(1, cuda::memory_order_relaxed);
            ok = 0;
            break;
          }
        }
      }
      __threadfence();
      passed = ok && failed.load(cuda::memory_order_relaxed) == 0;
    }
    __syncthreads();
    return passed != 0;
  }
};

}  // namespace relax::detail
