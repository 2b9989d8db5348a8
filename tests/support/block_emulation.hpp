#pragma once
// One CUDA thread block run on the CPU, for testing block-level agents (`relax/agent/`) in the
// host tests, where no GPU is: every thread a fiber (ucontext), switched at the points where
// threads of a block meet:
// - `__syncthreads()`: all threads of the block that have not returned;
// - `__shfl_up_sync` / `__shfl_down_sync` (full mask, width 32): the 32 lanes of a warp, each
//   given the value of the lane `delta` below (above) it, or its own where there is none, as on
//   the GPU.
// Between those points a thread runs alone, the threads one after another in a fixed order. So
// this checks the agent's arithmetic and addressing, what passes through shared memory across
// its barriers, and its shuffles (lanes of a warp at different shuffles, or threads at a barrier
// not all of them reach, are errors here). It does not check ordering: a read of another
// thread's shared memory with no barrier between may happen to see the value here, and
// asynchronous copies complete when they start (`agent/async_copy.cuh` compiled by a host
// compiler). Those are for the device tests and compute-sanitizer's racecheck and synccheck.
//
// Include this before any relax header: it declares the device built-ins those headers call.

#if defined(__CUDACC__)
#error "block_emulation.hpp is for host compilers: nvcc runs the real thing"
#endif

// CCCL's headers, compiled by a host compiler, define `__device__` and `__forceinline__` for it
// (CUDA's host_defines.h), which the agents' headers need first.
#include <relax/domain/grid.hpp>

#include <ucontext.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace relax::testing {

//! The block run by `emulate_block`, and the fiber running now.
class EmulatedBlock {
 public:
  enum class State { runnable, at_shuffle, at_barrier, done };
  struct Thread {
    ucontext_t context{};
    std::unique_ptr<char[]> stack;
    int lane = 0, warp = 0;
    State state = State::runnable;
    int offset = 0;            // of the shuffle it waits at: −delta (up) or +delta (down)
    std::uint64_t value = 0;   // what it gives the shuffle (the bits of a value of up to 8 bytes)
    std::uint64_t result = 0;  // what the shuffle gives it
    std::size_t bytes = 0;     // the size of that value
  };

  static EmulatedBlock*& current() {
    static thread_local EmulatedBlock* block = nullptr;
    return block;
  }
  Thread& running() { return threads_[running_]; }

  //! Runs `body(lane, warp)` on `warps` warps of 32 threads until every thread returns.
  //! \throws std::logic_error when the threads can go no further (a barrier or a shuffle that not
  //! all of them reach) or when the lanes of a warp meet at different shuffles.
  void run(int warps, const std::function<void(int lane, int warp)>& body) {
    body_ = &body;
    threads_.resize(static_cast<std::size_t>(warps) * 32);  // stacks kept from an earlier run
    for (std::size_t t = 0; t < threads_.size(); ++t) prepare(threads_[t], static_cast<int>(t));
    EmulatedBlock* const outer = current();
    current() = this;
    for (;;) {
      bool moved = false;
      // A pass: each runnable thread runs to its next meeting point (the threads hand over to one
      // another; `running_` is the last to hand back).
      for (running_ = 0; running_ < threads_.size(); ++running_) {
        if (threads_[running_].state != State::runnable) continue;
        swapcontext(&scheduler_, &threads_[running_].context);
        moved = true;
      }
      moved = exchange() || moved;
      std::size_t live = 0, waiting = 0;
      for (const Thread& th : threads_) {
        live += th.state != State::done;
        waiting += th.state == State::at_barrier;
      }
      if (live == 0) break;
      if (waiting == live) {
        for (Thread& th : threads_)
          if (th.state == State::at_barrier) th.state = State::runnable;
        moved = true;
      }
      if (!moved) {
        current() = outer;
        throw std::logic_error("emulated block: threads wait at barriers or shuffles that not all of them reach");
      }
    }
    current() = outer;
  }

  //! Called by a thread: wait for the block's other threads.
  void barrier() {
    running().state = State::at_barrier;
    suspend();
  }

  //! Called by a thread: give `value` to its warp's shuffle of offset `offset` and return what
  //! the lane `offset` away gave (its own value where that lane is outside the warp).
  template <class V>
  V shuffle(V value, int offset) {
    static_assert(sizeof(V) <= sizeof(std::uint64_t), "emulated shuffles carry up to 8 bytes");
    Thread& th = running();
    th.value = 0;
    std::memcpy(&th.value, &value, sizeof(V));
    th.bytes = sizeof(V);
    th.offset = offset;
    th.state = State::at_shuffle;
    suspend();
    V out;
    std::memcpy(&out, &running().result, sizeof(V));
    return out;
  }

 private:
  // A fiber for thread t, to start at `entry` (a function of its own: getcontext returns twice).
  __attribute__((noinline)) void prepare(Thread& th, int t) {
    th.lane = t % 32;
    th.warp = t / 32;
    th.state = State::runnable;
    if (!th.stack) th.stack.reset(new char[stack_bytes]);  // not zeroed: a stack needs no clearing
    if (getcontext(&th.context) != 0) throw std::runtime_error("emulated block: getcontext failed");
    th.context.uc_stack.ss_sp = th.stack.get();
    th.context.uc_stack.ss_size = stack_bytes;
    th.context.uc_link = &scheduler_;
    makecontext(&th.context, &EmulatedBlock::entry, 0);
  }
  static void entry() {
    EmulatedBlock& block = *current();
    Thread& th = block.running();
    (*block.body_)(th.lane, th.warp);
    block.running().state = State::done;
  }
  // Leaves the running thread for the next runnable one in the scheduler's pass (one switch
  // rather than two through the scheduler), or for the scheduler at the pass's end.
  void suspend() {
    const std::size_t me = running_;
    std::size_t next = me + 1;
    while (next < threads_.size() && threads_[next].state != State::runnable) ++next;
    if (next == threads_.size()) {
      swapcontext(&threads_[me].context, &scheduler_);
      return;
    }
    running_ = next;
    swapcontext(&threads_[me].context, &threads_[next].context);
  }
  // Completes the shuffles at which every lane of a warp waits; true if any did.
  bool exchange() {
    bool any = false;
    for (std::size_t w = 0; w * 32 < threads_.size(); ++w) {
      Thread* lanes = &threads_[w * 32];
      int at = 0;
      for (int l = 0; l < 32; ++l) at += lanes[l].state == State::at_shuffle;
      if (at == 0) continue;
      if (at < 32) {
        bool others_wait = true;  // a lane still running may yet reach the shuffle
        for (int l = 0; l < 32; ++l) others_wait = others_wait && lanes[l].state != State::runnable;
        if (others_wait)
          throw std::logic_error("emulated block: warp " + std::to_string(w) + " has lanes at a shuffle and lanes elsewhere");
        continue;
      }
      for (int l = 0; l < 32; ++l)
        if (lanes[l].offset != lanes[0].offset || lanes[l].bytes != lanes[0].bytes)
          throw std::logic_error("emulated block: the lanes of warp " + std::to_string(w) + " meet at different shuffles");
      for (int l = 0; l < 32; ++l) {
        const int from = l + lanes[l].offset;
        lanes[l].result = from >= 0 && from < 32 ? lanes[from].value : lanes[l].value;
      }
      for (int l = 0; l < 32; ++l) lanes[l].state = State::runnable;
      any = true;
    }
    return any;
  }

  static constexpr std::size_t stack_bytes = 256 * 1024;
  std::vector<Thread> threads_;
  std::size_t running_ = 0;
  ucontext_t scheduler_{};
  const std::function<void(int, int)>* body_ = nullptr;
};

//! Runs `body(lane, warp)` as one thread block of `warps` warps (see the file comment); the
//! threads' stacks are kept for the next block.
inline void emulate_block(int warps, const std::function<void(int lane, int warp)>& body) {
  static thread_local EmulatedBlock block;
  block.run(warps, body);
}

}  // namespace relax::testing

// The device built-ins the agents call, for the block being emulated.
inline void __syncthreads() { relax::testing::EmulatedBlock::current()->barrier(); }
template <class V>
V __shfl_up_sync(unsigned /*mask: full*/, V value, unsigned delta) {
  return relax::testing::EmulatedBlock::current()->shuffle(value, -static_cast<int>(delta));
}
template <class V>
V __shfl_down_sync(unsigned /*mask: full*/, V value, unsigned delta) {
  return relax::testing::EmulatedBlock::current()->shuffle(value, static_cast<int>(delta));
}
