// Not a program: every kernel that runs the 3D plane stream (`agent/plane_stream.cuh`), instantiated
// for reading its SASS on a machine without a GPU. Compile to a cubin only:
//   nvcc -std=c++17 -O3 -arch=sm_90 -cubin -Iinclude -Xptxas -v benchmarks/sass_plane_stream.cu -o ps.cubin
//   nvdisasm -c ps.cubin > ps.sass
// then compare two builds (`cmp`), or count a kernel's steps with benchmarks/sass_steps.py.
// docs/results/sass/plane_stream_split_switch.txt used it to show that the library's kernels are
// the same instruction for instruction with `tuning::plane_stream_split` off as before the switch
// (the kernels then took the tile count across, not the tiling, see that file); the switch is on
// for the launched kernels since 2026-12-05, and that file lists their registers and spills.
#include <relax/multi/peer_store.cuh>
#include <relax/stencil/stencil7.hpp>
#include <relax/strategy/column_stream.cuh>
#include <relax/strategy/device_loop.cuh>

#include "../tests/support/variable.hpp"  // a user stencil that reads a coefficient field

#include <cstdint>

#define RELAX_PLANE_STREAM_KERNELS(D, T)                                                                         \
  template __global__ void relax::detail::plane_stream_kernel<D, relax::Stencil7<T>, T>(                        \
      relax::Stencil7<T>, const T*, T*, const T*, relax::detail::Shape, relax::detail::PlaneTiling, std::int64_t); \
  template __global__ void relax::detail::plane_stream_k_kernel<D, relax::Stencil7<T>, T>(                      \
      relax::Stencil7<T>, const T*, T*, const T*, relax::detail::Shape, relax::detail::PlaneTiling, std::int64_t); \
  template __global__ void relax::detail::plane_stream_w_kernel<D, relax::Stencil7<T>, T>(                      \
      relax::Stencil7<T>, const T*, T*, const T*, relax::detail::Shape, relax::detail::PlaneTiling,              \
      const relax::detail::PlaneShareTable);                                                                    \
  template __global__ void relax::detail::plane_stream_h_kernel<D, relax::Stencil7<T>, T>(                      \
      relax::Stencil7<T>, const T*, T*, const T*, relax::detail::Shape, relax::detail::PlaneTiling,              \
      const relax::detail::PlaneHeadsTable);
RELAX_PLANE_STREAM_KERNELS(1, float)
RELAX_PLANE_STREAM_KERNELS(2, float)
RELAX_PLANE_STREAM_KERNELS(3, float)
RELAX_PLANE_STREAM_KERNELS(4, float)
RELAX_PLANE_STREAM_KERNELS(2, double)
RELAX_PLANE_STREAM_KERNELS(4, double)
template __global__ void relax::detail::plane_stream_k_kernel<4, relax::testing::VariableDiffusion7, float>(
    relax::testing::VariableDiffusion7, const float*, float*, const float*, relax::detail::Shape,
    relax::detail::PlaneTiling, std::int64_t);

// The streamed device loop in 3D (depths 1 to 4 in one kernel), without and with the ladder.
#define RELAX_STREAMED_LOOP_KERNEL(Laddered, T)                                                                  \
  template __global__ void relax::detail::persistent_stream_kernel<3, 4, Laddered, relax::Stencil7<T>, T>(       \
      relax::Stencil7<T>, T*, T*, const T*, relax::detail::Shape, std::int64_t, relax::detail::DeviceLoopPlan,   \
      relax::detail::DeviceLoopState<T>*, relax::detail::DeviceLoopStepReport<T>*, relax::arith::bits_t<T>*);
RELAX_STREAMED_LOOP_KERNEL(false, float)
RELAX_STREAMED_LOOP_KERNEL(true, double)

// PeerStore's streamed kernel in 3D (sub-domains on one device).
template __global__ void relax::detail::peer_stream_kernel<3, 4, cuda::thread_scope_device, relax::Stencil7<float>, float>(
    relax::Stencil7<float>, relax::detail::PeerLaunch<float>, relax::detail::Shape, relax::detail::DeviceLoopPlan,
    relax::detail::DeviceLoopState<float>*, relax::detail::DeviceLoopStepReport<float>*, relax::arith::bits_t<float>*);
