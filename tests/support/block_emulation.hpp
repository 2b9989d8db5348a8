#pragma once
// One CUDA thread block run on the CPU, for testing block-level agents (`relax/agent/`) in the
// host tests, where no GPU is: every thread a fiber (ucontext), switched where threads of a block
// meet or wait:
// - `__syncthreads()`: all threads of the block that have not returned;
// - `__shfl_up_sync` / `__shfl_down_sync` (full mask, width 32): the 32 lanes of a warp, each
//   given the value of the lane `delta` below (above) it, or its own where there is none, as on
//   the GPU;
// - asynchronous copies (`agent/async_copy.cuh` compiled by a host compiler calls the hooks at the
//   end of this file): a copy is only recorded when it starts, and carried out when its thread
//   waits for its group (`wait_copies<N>` completes all but the N newest groups), so a read of a
//   copy's destination before the wait that covers it sees the old bytes. A copy whose addresses
//   are not aligned to its size is an error, as it is a fault on the GPU.
// Between those points a thread runs alone. The threads run in one of two orders (`Order`): all
// warps a shuffle at a time in lockstep, or each warp alone up to its next barrier, the last warp
// first. A missing barrier (a warp reading shared memory another warp has not written yet, or
// overwriting what another has not read) gives wrong bits in the second order. What is left to
// the device tests and compute-sanitizer: the hardware's own orders (a race that neither of these
// two orders exposes), and memory ordering between blocks.
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

//! How the emulated threads take turns between their meeting points (see the file comment).
enum class Order { lockstep, warps_apart };

//! The block run by `emulate_block`, and the fiber running now.
class EmulatedBlock {
 public:
  enum class State { runnable, at_shuffle, at_barrier, done };
  struct Copy {
    void* dst;
    const void* src;
    int bytes;
    bool read;  // false: zeros
  };
  struct Thread {
    ucontext_t context{};
    std::unique_ptr<char[]> stack;
    int lane = 0, warp = 0;
    State state = State::runnable;
    int offset = 0;            // of the shuffle it waits at: −delta (up) or +delta (down)
    std::uint64_t value = 0;   // what it gives the shuffle (the bits of a value of up to 8 bytes)
    std::uint64_t result = 0;  // what the shuffle gives it
    std::size_t bytes = 0;     // the size of that value
    std::vector<Copy> open;                // copies started since the last commit
    std::vector<std::vector<Copy>> groups;  // committed groups not yet waited for, oldest first
  };

  static EmulatedBlock*& current() {
    static thread_local EmulatedBlock* block = nullptr;
    return block;
  }
  Thread& running() { return threads_[running_]; }

  //! Runs `body(lane, warp)` on `warps` warps of 32 threads until every thread returns.
  //! \throws std::logic_error when the threads can go no further (a barrier or a shuffle that not
  //! all of them reach), when the lanes of a warp meet at different shuffles, or when a copy was
  //! misaligned.
  void run(int warps, Order order, const std::function<void(int lane, int warp)>& body) {
    body_ = &body;
    error_.clear();
    threads_.resize(static_cast<std::size_t>(warps) * 32);  // stacks kept from an earlier run
    for (std::size_t t = 0; t < threads_.size(); ++t) prepare(threads_[t], static_cast<int>(t));
    EmulatedBlock* const outer = current();
    current() = this;
    struct Restore {
      EmulatedBlock* outer;
      ~Restore() { current() = outer; }
    } restore{outer};
    for (;;) {
      bool moved = false;
      if (order == Order::lockstep) {
        moved = pass(0, threads_.size());
        for (std::size_t w = 0; w * 32 < threads_.size(); ++w) moved = exchange(w) || moved;
      } else {
        for (std::size_t w = threads_.size() / 32; w-- > 0;)
          while (pass(w * 32, w * 32 + 32)) {
            moved = true;
            if (!exchange(w)) break;
          }
      }
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
      if (!moved) throw std::logic_error("emulated block: threads wait at barriers or shuffles that not all of them reach");
    }
    if (!error_.empty()) throw std::logic_error("emulated block: " + error_);
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

  //! Called by a thread: start copying `bytes` from `src` to `dst` (zeros where `read` is false).
  void copy(void* dst, const void* src, int bytes, bool read) {
    const auto misaligned = [&](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % bytes != 0; };
    if (error_.empty() && (misaligned(dst) || (read && misaligned(src))))
      error_ = "a " + std::to_string(bytes) + "-byte copy with an address not aligned to its size";
    running().open.push_back({dst, src, bytes, read});
  }
  //! Called by a thread: close its group of copies.
  void commit() {
    Thread& th = running();
    th.groups.push_back(std::move(th.open));
    th.open.clear();
  }
  //! Called by a thread: complete all but its `pending` newest groups of copies.
  void wait(int pending) {
    Thread& th = running();
    while (th.groups.size() > static_cast<std::size_t>(pending)) {
      for (const Copy& c : th.groups.front()) complete(c);
      th.groups.erase(th.groups.begin());
    }
  }

 private:
  static void complete(const Copy& c) {
    if (c.read) std::memcpy(c.dst, c.src, static_cast<std::size_t>(c.bytes));
    else std::memset(c.dst, 0, static_cast<std::size_t>(c.bytes));
  }
  // A fiber for thread t, to start at `entry` (a function of its own: getcontext returns twice).
  __attribute__((noinline)) void prepare(Thread& th, int t) {
    th.lane = t % 32;
    th.warp = t / 32;
    th.state = State::runnable;
    th.open.clear();
    th.groups.clear();
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
    Thread& done = block.running();
    for (const Copy& c : done.open) complete(c);  // copies never waited for still land
    for (const auto& group : done.groups)
      for (const Copy& c : group) complete(c);
    done.state = State::done;
  }
  // Runs each runnable thread of [begin, end) to its next meeting point; true if any ran.
  bool pass(std::size_t begin, std::size_t end) {
    pass_end_ = end;
    bool any = false;
    for (running_ = begin; running_ < end; ++running_) {
      if (threads_[running_].state != State::runnable) continue;
      swapcontext(&scheduler_, &threads_[running_].context);  // back here: `running_` handed back
      any = true;
    }
    return any;
  }
  // Leaves the running thread for the next runnable one of the pass (one switch rather than two
  // through the scheduler), or for the scheduler at the pass's end.
  void suspend() {
    const std::size_t me = running_;
    std::size_t next = me + 1;
    while (next < pass_end_ && threads_[next].state != State::runnable) ++next;
    if (next >= pass_end_) {
      swapcontext(&threads_[me].context, &scheduler_);
      return;
    }
    running_ = next;
    swapcontext(&threads_[me].context, &threads_[next].context);
  }
  // Completes warp w's shuffle if all its lanes wait at it; true if it did.
  bool exchange(std::size_t w) {
    Thread* lanes = &threads_[w * 32];
    int at = 0, running = 0;
    for (int l = 0; l < 32; ++l) {
      at += lanes[l].state == State::at_shuffle;
      running += lanes[l].state == State::runnable;
    }
    if (at == 0) return false;
    if (at < 32) {
      if (running == 0)  // no lane left that may yet reach the shuffle
        throw std::logic_error("emulated block: warp " + std::to_string(w) + " has lanes at a shuffle and lanes elsewhere");
      return false;
    }
    for (int l = 0; l < 32; ++l)
      if (lanes[l].offset != lanes[0].offset || lanes[l].bytes != lanes[0].bytes)
        throw std::logic_error("emulated block: the lanes of warp " + std::to_string(w) + " meet at different shuffles");
    for (int l = 0; l < 32; ++l) {
      const int from = l + lanes[l].offset;
      lanes[l].result = from >= 0 && from < 32 ? lanes[from].value : lanes[l].value;
    }
    for (int l = 0; l < 32; ++l) lanes[l].state = State::runnable;
    return true;
  }

  static constexpr std::size_t stack_bytes = 256 * 1024;
  std::vector<Thread> threads_;
  std::size_t running_ = 0, pass_end_ = 0;
  ucontext_t scheduler_{};
  const std::function<void(int, int)>* body_ = nullptr;
  std::string error_;  // the first misaligned copy
};

//! Runs `body(lane, warp)` as one thread block of `warps` warps, the threads taking turns in
//! `order` (see the file comment); the threads' stacks are kept for the next block.
inline void emulate_block(int warps, Order order, const std::function<void(int lane, int warp)>& body) {
  static thread_local EmulatedBlock block;
  block.run(warps, order, body);
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

// The asynchronous copies of `agent/async_copy.cuh` compiled by a host compiler.
namespace relax::detail {
inline void emulated_copy(void* dst, const void* src, int bytes, bool read) {
  relax::testing::EmulatedBlock::current()->copy(dst, src, bytes, read);
}
inline void emulated_commit_copies() { relax::testing::EmulatedBlock::current()->commit(); }
inline void emulated_wait_copies(int pending) { relax::testing::EmulatedBlock::current()->wait(pending); }
}  // namespace relax::detail
