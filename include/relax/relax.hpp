#pragma once
//! \file
//! The umbrella header. Host-only parts (the reference backend, problems, policies, reports)
//! compile with any C++17 compiler; the GPU parts are included when compiling as CUDA.

#include <relax/config.hpp>
#include <relax/control/feedback.hpp>
#include <relax/control/fixed.hpp>
#include <relax/control/ladder.hpp>
#include <relax/control/stop.hpp>
#include <relax/core/arith.hpp>
#include <relax/control/cg_report.hpp>
#include <relax/control/controller.hpp>
#include <relax/core/error.hpp>
#include <relax/core/family.hpp>
#include <relax/control/report.hpp>
#include <relax/domain/grid.hpp>
#include <relax/problem/diffusion.hpp>
#include <relax/reference/cg.hpp>
#include <relax/reference/diffusion.hpp>
#include <relax/reference/jacobi.hpp>
#include <relax/reference/tiled.hpp>
#include <relax/sparse/csr.hpp>
#include <relax/sparse/matrix_market.hpp>
#include <relax/stencil/operator.hpp>
#include <relax/stencil/poisson.hpp>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>
#include <relax/stencil/traits.hpp>
#include <relax/strategy/adaptive.hpp>
#include <relax/strategy/auto.hpp>
#include <relax/strategy/device_loop.hpp>
#include <relax/strategy/sync.hpp>
#include <relax/strategy/tiled.hpp>

#if defined(__CUDACC__)
#include <relax/core/buffer.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/core/device.hpp>
#include <relax/core/stream.hpp>
#include <relax/domain/device_grid.hpp>
#include <relax/primitives/blas1.cuh>
#include <relax/primitives/dot.cuh>
#include <relax/primitives/grid_barrier.cuh>
#include <relax/primitives/max_norm.cuh>
#include <relax/solver/cg.cuh>
#include <relax/solver/diffusion.cuh>
#include <relax/solver/solver.cuh>
#include <relax/sparse/device_csr.cuh>
#include <relax/stencil/operator.cuh>
#include <relax/strategy/adaptive.cuh>
#include <relax/strategy/auto.cuh>
#include <relax/strategy/column_stream.cuh>
#include <relax/strategy/device_loop.cuh>
#include <relax/strategy/residual.cuh>
#include <relax/strategy/sync.cuh>
#include <relax/strategy/tiled.cuh>
#endif
