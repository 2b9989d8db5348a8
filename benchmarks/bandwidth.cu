// Memory ceilings measured in the same run as the kernels they are compared with: a device-to-
// device copy (cudaMemcpyAsync, bytes read + written) and a read-only streaming kernel.
#include "bench_support.hpp"

#include <relax/core/buffer.hpp>
#include <relax/core/cuda_check.hpp>

#include <string>

namespace {

using relax::bench::counter;
using relax::bench::time_ms;

__global__ void fill_kernel(float4* data, std::int64_t count) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < count;
       k += stride)
    data[k] = make_float4(k * 1e-9f, 1.0f, -1.0f, 0.5f);
}

// Reads every element once; one sum per block is written so the loads cannot be dropped.
__global__ void read_kernel(const float4* __restrict__ data, std::int64_t count, float* sums) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  float acc = 0.0f;
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < count;
       k += stride) {
    const float4 v = data[k];
    acc += (v.x + v.y) + (v.z + v.w);
  }
  if (acc == 12345.678f) sums[blockIdx.x] = acc;  // practically never taken; keeps the loads live
}

void copy(benchmark::State& state) {
  const std::size_t bytes = static_cast<std::size_t>(state.range(0)) << 20;
  const std::int64_t count = static_cast<std::int64_t>(bytes / sizeof(float4));
  relax::DeviceBuffer<float4> src(count), dst(count);
  relax::Stream stream;
  fill_kernel<<<1024, 256, 0, stream>>>(src.data(), count);
  RELAX_CUDA_CHECK_LAUNCH();
  double total_ms = 0;
  for (auto _ : state) {
    const double ms = time_ms(stream, [&] {
      RELAX_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, stream));
    });
    state.SetIterationTime(ms * 1e-3);
    total_ms += ms;
  }
  counter(state, "GBps", 2.0 * bytes * state.iterations() / (total_ms * 1e6));
  float4 last{};
  RELAX_CUDA_CHECK(cudaMemcpy(&last, dst.data() + count - 1, sizeof(last), cudaMemcpyDeviceToHost));
  if (last.y != 1.0f) state.SkipWithError("copy: destination does not hold the source");
}

void read(benchmark::State& state) {
  const std::size_t bytes = static_cast<std::size_t>(state.range(0)) << 20;
  const std::int64_t count = static_cast<std::int64_t>(bytes / sizeof(float4));
  relax::DeviceBuffer<float4> src(count);
  relax::DeviceBuffer<float> sums(132 * 8);
  relax::Stream stream;
  fill_kernel<<<1024, 256, 0, stream>>>(src.data(), count);
  RELAX_CUDA_CHECK_LAUNCH();
  int sms = 0;
  RELAX_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  double total_ms = 0;
  for (auto _ : state) {
    const double ms = time_ms(stream, [&] {
      read_kernel<<<sms * 8, 256, 0, stream>>>(src.data(), count, sums.data());
      RELAX_CUDA_CHECK_LAUNCH();
    });
    state.SetIterationTime(ms * 1e-3);
    total_ms += ms;
  }
  counter(state, "GBps", double(bytes) * state.iterations() / (total_ms * 1e6));
}

// MiB per buffer: 16 MiB stays in the 60 MiB L2; 1-4 GiB measures HBM.
const int registered = [] {
  for (int mib : {16, 1024, 2048, 4096}) {
    benchmark::RegisterBenchmark(("copy/memcpy/MiB:" + std::to_string(mib)).c_str(), copy)
        ->Arg(mib)->UseManualTime()->Unit(benchmark::kMillisecond)->Repetitions(5)
        ->ReportAggregatesOnly(true);
    benchmark::RegisterBenchmark(("read/MiB:" + std::to_string(mib)).c_str(), read)
        ->Arg(mib)->UseManualTime()->Unit(benchmark::kMillisecond)->Repetitions(5)
        ->ReportAggregatesOnly(true);
  }
  return 0;
}();

}  // namespace
