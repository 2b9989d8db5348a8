#pragma once
// What the studies of benchmarks/studies/ share: one pseudo-random fill of a grid's storage (the
// same values in every study, so their bit comparisons start alike) and the mean time of a launch.
#include <relax/core/cuda_check.hpp>
#include <relax/domain/device_grid.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

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

// A float box for a bit comparison: u and b filled (seeds 1 and 2), `ref` a copy of u for the
// kernel compared against, `got` one for the kernel under study (`reset` copies u into it again).
struct Box {
  relax::DeviceGrid<float> u, b, ref, got;
  explicit Box(const relax::Extents& e) : u(e), b(e), ref(e), got(e) {
    fill<<<1024, 256>>>(u.data(), total(), 1);
    fill<<<1024, 256>>>(b.data(), total(), 2);
    RELAX_CUDA_CHECK_LAUNCH();
    RELAX_CUDA_CHECK(cudaMemcpy(ref.data(), u.data(), bytes(), cudaMemcpyDeviceToDevice));
    reset();
  }
  std::int64_t total() const { return u.layout().size(); }
  std::size_t bytes() const { return static_cast<std::size_t>(total()) * sizeof(float); }
  void reset() { RELAX_CUDA_CHECK(cudaMemcpy(got.data(), u.data(), bytes(), cudaMemcpyDeviceToDevice)); }
  // Points of the whole storage (ring and padding included) whose bits differ between ref and got.
  std::int64_t differing() const {
    std::vector<float> want(total()), have(total());
    RELAX_CUDA_CHECK(cudaMemcpy(want.data(), ref.data(), bytes(), cudaMemcpyDeviceToHost));
    RELAX_CUDA_CHECK(cudaMemcpy(have.data(), got.data(), bytes(), cudaMemcpyDeviceToHost));
    std::int64_t count = 0;
    for (std::int64_t i = 0; i < total(); ++i) count += std::memcmp(&want[i], &have[i], sizeof(float)) != 0;
    return count;
  }
};

}  // namespace study
