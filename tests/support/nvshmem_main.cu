// Runs the NVSHMEM tests as one PE of however many the launcher started (one process alone
// without a launcher; under `mpirun -np k`, PE = the rank, on GPU local rank mod the GPUs), or
// exits with 77 (CTest's SKIP_RETURN_CODE) when no GPU is present.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <relax/core/device.hpp>
#include <relax/multi/nvshmem.cuh>

#include <cstdio>

int main(int argc, char** argv) {
  const int gpus = relax::device_count();
  if (gpus == 0) {
    std::printf("no CUDA device is present: NVSHMEM tests skipped\n");
    return 77;
  }
  const relax::NvshmemRuntime runtime(relax::NvshmemRuntime::FromEnvironment{});
  const relax::DeviceInfo info = relax::device_info(runtime.device());
  std::printf("PE %d of %d on device %d: %s, %d SMs\n", runtime.pe(), runtime.pes(), runtime.device(),
              info.name.c_str(), info.sm_count);
  return Catch::Session().run(argc, argv);
}
