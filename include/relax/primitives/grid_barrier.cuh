#pragma once
//! \file
//! A grid-wide barrier for persistent kernels whose every wait is bounded in time.
//!
//! Cooperative groups' `grid.sync()` waits for ever if a block never arrives (blocks that are not
//! co-resident, a block that left the loop early). This barrier keeps one arrival word: every
//! block adds 1 to it except block 0, which adds 2^31 − (blocks − 1), so the word's top bit flips
//! exactly when the last block arrives and its low bits return to 0, ready for the next barrier.
//! Each block waits for the top bit to differ from the one it saw when it arrived. One atomic per
//! block and one word to watch: the first version (an arrival counter reset by the last block,
//! then a separate generation word, the clock and the failure flag read on every spin) took
//! 2.26 µs with one block per SM on the H200, against 0.98 µs for `grid.sync()`
//! (docs/results/h200/bench_barrier_v1.json).
//!
//! A block that waits longer than the time limit raises a shared failure flag, and every block
//! that sees the flag (the clock and the flag are read every `check_period` spins, not before
//! the first: each read is a round trip to L2 on the barrier's path) returns `false`, so a broken
//! barrier ends the kernel with a status the host reports, never with a hang. The state must be
//! zeroed before the launch. The barrier splits into `arrive` and `wait`, so a block can work
//! between its arrival and the moment it needs the others'.
//!
//! Blocks need not agree on the outcome of the barrier that fails: a waiter may time out just as
//! the last block arrives, and blocks that saw the bit flip return `true`. Those blocks then fail
//! at their next wait (the timed-out block never arrives), so every wait still ends; callers must
//! treat the raised flag as the kernel's outcome (the device loop's host side throws whenever it
//! is set).
//!
//! Ordering: a block's writes before `arrive_and_wait` are visible to every block after it (the
//! block barrier gathers them; thread 0 fences at device scope before its arrival and after its
//! wait, so the arrivals form one release sequence that every waiter acquires).

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
  unsigned int arrived = 0;  //!< arrivals; the top bit flips once per completed barrier
  int failed = 0;            //!< 1 once a wait timed out
};

//! Spins of a bounded wait between two reads of the clock and the failure flag.
inline constexpr int check_period = 16;

//! Waits (thread-level) until `done()` holds; false if the wait outlived `timeout_ns` or another
//! wait raised `*failed` first (then it raises it too). `Scope`: of the waiters that share the
//! flag (the system's where they run on several devices).
template <cuda::thread_scope Scope = cuda::thread_scope_device, class Done>
__device__ __forceinline__ bool bounded_wait(Done done, int* failed, std::uint64_t timeout_ns) {
  cuda::atomic_ref<int, Scope> flag(*failed);
  const std::uint64_t start = global_ns();
  for (unsigned spin = 1;; ++spin) {
    if (done()) return true;
    if (spin % check_period == 0) {
      if (flag.load(cuda::memory_order_relaxed) != 0) return false;
      if (global_ns() - start > timeout_ns) {
        flag.store(1, cuda::memory_order_relaxed);
        return false;
      }
    }
  }
}

//! `Scope` and `first_block` let several grids share one barrier (the CPU-free CG on k
//! sub-domains: a kernel per device, all of their blocks): `blocks` counts every block of every
//! grid, `first_block` is the index of this grid's block 0 among them (the block with index 0
//! overall leads), and `Scope` covers them all (the system's for grids on several devices, the
//! state then in memory they all reach).
template <cuda::thread_scope Scope = cuda::thread_scope_device>
struct BasicGridBarrier {
  GridBarrierState* state = nullptr;
  unsigned int blocks = 0;       //!< blocks that must arrive (the grid, unless a test says more)
  std::uint64_t timeout_ns = 0;  //!< the longest a block waits
  unsigned int first_block = 0;  //!< this grid's block 0 among all blocks that share the barrier

  //! Called by every thread of every block. Returns true when all blocks arrived; false when the
  //! barrier failed (this wait or an earlier one timed out).
  __device__ bool arrive_and_wait() const { return wait(arrive()); }

  //! `arrive_and_wait` for a block that counts the rounds of this barrier it has passed (`passed`,
  //! the same in every block; the state zeroed before round 0): the arrival waits for no reply
  //! from L2, since the word's top bit after round g is the parity of g + 1, so the wait starts a
  //! round trip earlier.
  __device__ bool arrive_and_wait_round(unsigned int passed) const {
    (void)arrive();  // its reply unused, so nothing waits for it
    return wait((passed & 1u) == 0 ? 0u : top);  // the word's top bit before round `passed`
  }

  //! The first half of a split barrier (block-level): the block's writes so far are released and
  //! its arrival counted. Returns the token `wait` needs (meaningful in thread 0 only).
  __device__ unsigned int arrive() const {
    __syncthreads();
    unsigned int seen = 0;
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
      const bool first = first_block == 0 && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0;
      cuda::atomic_thread_fence(cuda::memory_order_release, Scope);
      seen = word().fetch_add(first ? top - (blocks - 1u) : 1u, cuda::memory_order_relaxed);
    }
    return seen;
  }

  //! The second half (block-level): waits until every block has arrived since `arrive` returned
  //! `seen`; their writes before arriving are then visible. False when the barrier failed.
  __device__ bool wait(unsigned int seen) const {
    __shared__ int passed;
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
      const auto arrived = word();
      passed = bounded_wait<Scope>([&] { return ((seen ^ arrived.load(cuda::memory_order_relaxed)) & top) != 0; },
                                   &state->failed, timeout_ns);
      cuda::atomic_thread_fence(cuda::memory_order_acquire, Scope);
    }
    __syncthreads();
    return passed != 0;
  }

 private:
  static constexpr unsigned int top = 0x80000000u;
  __device__ cuda::atomic_ref<unsigned int, Scope> word() const {
    return cuda::atomic_ref<unsigned int, Scope>(state->arrived);
  }
};

//! The barrier of one grid on one device.
using GridBarrier = BasicGridBarrier<>;

}  // namespace relax::detail
