#pragma once
//! \file
//! Max-norm reductions shared by Jacobi and CG: a block-level step built on `cub::BlockReduce`
//! that folds a block's maximum into one device word, and `MaxNormSlot`, the host side that
//! clears that word and reads it back.
//!
//! Values are reduced as the bit patterns of |x| (`relax::arith::abs_bits`): a max over them is
//! exact and independent of the order of reduction, so it equals the host reference's bit for
//! bit, and NaN propagates.

#include <relax/core/buffer.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/core/stream.hpp>
#include <relax/core/arith.hpp>
#include <relax/primitives/reduce.cuh>

#include <cub/block/block_reduce.cuh>
#include <cstdint>
#include <cuda/atomic>
#include <cuda/functional>

namespace relax {

//! Every thread of a `BlockX × BlockY` block calls this with its partial max; the block's max is
//! folded into `*target` with one atomic. Uses shared memory: a second call in the same kernel
//! needs a `__syncthreads()` between the two (the device loop's grid barrier starts with one).
template <int BlockX, int BlockY, class Bits>
__device__ void block_max_into(Bits partial, Bits* target) {
  using Reduce = cub::BlockReduce<Bits, BlockX, cub::BLOCK_REDUCE_WARP_REDUCTIONS, BlockY>;
  __shared__ typename Reduce::TempStorage storage;
  const Bits block_max = Reduce(storage).Reduce(partial, cuda::maximum<Bits>{});
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    cuda::atomic_ref<Bits, cuda::thread_scope_device> ref(*target);
    ref.fetch_max(block_max, cuda::memory_order_relaxed);
  }
}

//! One device word that kernels fold a max-norm into, with its pinned host mirror.
template <class T>
class MaxNormSlot {
 public:
  using bits_type = arith::bits_t<T>;

  MaxNormSlot() : device_(1), host_(1) {}

  //! Sets the word to 0 (the bits of +0.0), ordered on `stream`.
  void reset(cudaStream_t stream) {
    RELAX_CUDA_CHECK(cudaMemsetAsync(device_.data(), 0, sizeof(bits_type), stream));
  }
  //! Where kernels fold their maxima.
  bits_type* target() { return device_.data(); }
  //! Queues the copy of the max-norm to the host on `stream`; `wait()` returns it. Work queued on
  //! `stream` afterwards runs on while the host waits.
  void request(cudaStream_t stream) {
    RELAX_CUDA_CHECK(cudaMemcpyAsync(host_.data(), device_.data(), sizeof(bits_type),
                                     cudaMemcpyDeviceToHost, stream));
    arrived_.record(stream);
  }
  //! Waits for the copy queued by the last `request` and returns the max-norm.
  T wait() const {
    arrived_.synchronize();
    return arith::from_bits<T>(host_.data()[0]);
  }
  //! Waits for `stream`'s work up to now and returns the max-norm.
  T read(cudaStream_t stream) {
    request(stream);
    return wait();
  }

 private:
  DeviceBuffer<bits_type> device_;
  PinnedBuffer<bits_type> host_;
  Event arrived_;
};

namespace detail {
//! Folds max |x[k]| (as `abs_bits`) into *out, which starts at 0. Launch: blocks of `dot_block` threads.
template <class T>
__global__ void __launch_bounds__(dot_block)
    max_abs_kernel(std::int64_t n, const T* __restrict__ x, arith::bits_t<T>* out) {
  arith::bits_t<T> largest = 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    const arith::bits_t<T> v = arith::abs_bits(x[k]);
    largest = v > largest ? v : largest;
  }
  block_max_into<dot_block, 1>(largest, out);
}

}  // namespace detail

//! max |x[k]| over the device vector `x` of `n` values (exact: a max of bit patterns), through
//! `slot`; the host waits for `stream`.
template <class T>
T max_abs(std::int64_t n, const T* x, MaxNormSlot<T>& slot, cudaStream_t stream) {
  slot.reset(stream);
  detail::max_abs_kernel<<<detail::dot_blocks, detail::dot_block, 0, stream>>>(n, x, slot.target());
  RELAX_CUDA_CHECK_LAUNCH();
  return slot.read(stream);
}

}  // namespace relax
