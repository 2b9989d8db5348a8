#pragma once
// What the studies of benchmarks/studies/ share: one pseudo-random fill of a grid's storage (the
// same values in every study, so their bit comparisons start alike) and the mean time of a launch.
#include <relax/core/cuda_check.hpp>

#include <cstdint>

namespace study {

// p[i] for i < n: a hash of i and `seed`, scaled to [0, 10).
__global__ void fill(float* p, std::int64_t n, unsigned seed) {
  for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
       i += (std::int64_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    p[i] = (h & 0xffff) / 6553.6f;
  }
}

// The mean time in ms of `reps` calls of `f` (each queues GPU work on the default stream), after
// one call as a warm-up.
template <class F>
float time_ms(int reps, F&& f) {
  f();
  RELAX_CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t a, e;
  RELAX_CUDA_CHECK(cudaEventCreate(&a));
  RELAX_CUDA_CHECK(cudaEventCreate(&e));
  RELAX_CUDA_CHECK(cudaEventRecord(a));
  for (int i = 0; i < reps; ++i) f();
  RELAX_CUDA_CHECK(cudaEventRecord(e));
  RELAX_CUDA_CHECK(cudaEventSynchronize(e));
  float ms = 0;
  RELAX_CUDA_CHECK(cudaEventElapsedTime(&ms, a, e));
  RELAX_CUDA_CHECK(cudaEventDestroy(a));
  RELAX_CUDA_CHECK(cudaEventDestroy(e));
  return ms / reps;
}

}  // namespace study
