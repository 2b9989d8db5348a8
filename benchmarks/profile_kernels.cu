// One launch of each Jacobi kernel (2D and 3D) and the kernels of CG's launched variants (Unfused,
// Fused, Pipelined) at sizes beyond the L2, for Nsight Compute: `benchmarks/run_h200.sh profile` runs this under
// `ncu --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum` and
// `benchmarks/profile_report.py` turns the counters into DRAM bytes per point and sweep against
// the traffic model (12 B for Sync, about 12 / D for exact temporal blocking).
//
// usage: relax_profile_kernels MANIFEST.json
// The manifest lists, in launch order, each profiled case: its label, a regex of its kernel's
// name, the points a launch updates and the sweeps it performs, and the modelled bytes per point
// and sweep. Kernels launched to set up the data (fills, copies) match no case; nor do those between
// cases that no case names (a CG solve's b·b, A x before the start, its closing true residual).
#include <relax/solver/cg.cuh>
#include <relax/solver/solver.cuh>
#include <relax/stencil/operator.cuh>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct Case {
  std::string label, kernel;
  double points = 0, sweeps = 0, model_bytes = 0;
};

template <class T>
__global__ void fill_kernel(T* g, std::int64_t size) {
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < size;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    g[k] = static_cast<T>((k * 2654435761u) % 1000u) * T(1e-3);
}

template <class T>
relax::DeviceGrid<T> filled(const relax::Extents& e) {
  relax::DeviceGrid<T> g(e);
  fill_kernel<<<1024, 256>>>(g.data(), g.layout().size());
  RELAX_CUDA_CHECK_LAUNCH();
  return g;
}

// One launch of `Strategy` at depth `d` (d sweeps) on a fresh cube of side n.
template <class S, class Strategy>
Case launch_once(const char* label, const char* kernel, std::int64_t n, int d, double model) {
  const relax::Extents e = relax::Extents::cube(n, S::rank);
  auto u = filled<float>(e), b = filled<float>(e), scratch = filled<float>(e);
  relax::Sweeper<Strategy>::run(S(10.0), u, scratch, b, {d, d}, nullptr);
  RELAX_CUDA_CHECK(cudaDeviceSynchronize());
  return {label, kernel, static_cast<double>(e.points()), static_cast<double>(d), model};
}

Case residual_once(std::int64_t n) {
  const relax::Extents e(n, n);
  auto u = filled<float>(e), b = filled<float>(e);
  relax::MaxNormSlot<float> slot;
  (void)relax::residual_norm(relax::Stencil5<float>(10.0), u, b, slot, nullptr);
  return {"residual_N16384", "residual_max_kernel", static_cast<double>(e.points()), 1, 8};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: relax_profile_kernels MANIFEST.json\n");
    return 1;
  }
  using S2 = relax::Stencil5<float>;
  using S3 = relax::Stencil7<float>;
  std::vector<Case> cases;
  cases.push_back(launch_once<S2, relax::Sync>("sync_N16384", "sync_sweep_kernel", 16384, 1, 12));
  cases.push_back(launch_once<S2, relax::TemporalBlock<8, relax::ColumnStream>>(
      "temporal8_N16384", "column_stream_kernel", 16384, 8, 12.0 / 8));
  cases.push_back(launch_once<S2, relax::TemporalBlock<4, relax::Tile<32, 16>>>(
      "temporal4_tile32x16_N16384", "tiled_sweeps_kernel", 16384, 4, 12.0 / 4));
  cases.push_back(launch_once<S2, relax::BlockAsync<4>>("blockasync4_N16384", "tiled_sweeps_kernel", 16384, 4,
                                                        12.0 / 4));
  cases.push_back(residual_once(16384));
  cases.push_back(launch_once<S3, relax::Sync>("sync3d_N512", "sync_sweep_kernel", 512, 1, 12));
  cases.push_back(launch_once<S3, relax::TemporalBlock<2, relax::Tile<32, 8, 4>>>(
      "temporal3d2_tile32x8x4_N512", "tiled_sweeps_kernel", 512, 2, 12.0 / 2));
  cases.push_back(launch_once<S3, relax::BlockAsync<2, relax::Tile<32, 8, 4>>>(
      "blockasync3d2_tile32x8x4_N512", "tiled_sweeps_kernel", 512, 2, 12.0 / 2));
  // The launch picks its schedule's kernel (segments, stream-K, weighted shares, heads and tails,
  // steals); at 512³ on an H200, heads and tails then steals.
  cases.push_back(launch_once<S3, relax::TemporalBlock<4, relax::ColumnStream>>(
      "temporal3d4_stream_N512", "plane_stream_([a-z]_)?kernel", 512, 4, 12.0 / 4));
  // The 2D streamed device loop, one launch of 16 sweeps with a check every 8: two passes of
  // depth 8 (12 / 8 B per point and sweep each) and two residual folds (u and b: 8 B).
  {
    const relax::Extents e(16384, 16384);
    relax::SolveOptions options;
    options.tol = 1e-30;
    options.max_sweeps = 16;
    relax::Solver<S2, relax::DeviceLoop<relax::TemporalBlock<8, relax::ColumnStream>>, relax::Fixed> solver(
        e, S2(10.0), relax::Fixed(8), options);
    auto u = filled<float>(e), b = filled<float>(e);
    (void)solver.solve(u, b);
    RELAX_CUDA_CHECK(cudaDeviceSynchronize());
    cases.push_back({"device_loop_stream8_N16384", "persistent_stream_kernel", static_cast<double>(e.points()), 16,
                     (2 * 12.0 + 2 * 8.0) / 16});
  }
  // Each kernel of Unfused CG, float64, on 4096² unknowns, in launch order: the start (r = p =
  // b − A x; then r·r), and one iteration (q = A p, p·q, x += α p, r −= α q, r·r, p = r + β p).
  // The model counts each vector read or written once, 8 B (A p: p read, q written; a dot of r
  // with itself reads r once).
  {
    const std::int64_t n = 4096;
    relax::CgOptions o;
    o.max_iterations = 1;
    relax::CG<relax::Poisson5Operator<double>, relax::Unfused> cg(relax::Poisson5Operator<double>(n), o);
    std::vector<double> b(static_cast<std::size_t>(n * n), 1.0), x(b.size(), 0.0);
    (void)cg.solve(b, x);
    const double unknowns = double(n) * n;
    cases.push_back({"cg_start_f64_N4096", "cg_start", unknowns, 1, 32});
    cases.push_back({"cg_dot_rr0_f64_N4096", "dot_kernel", unknowns, 1, 8});
    cases.push_back({"cg_poisson5_f64_N4096", "stencil_apply_kernel", unknowns, 1, 16});
    cases.push_back({"cg_dot_pq_f64_N4096", "dot_kernel", unknowns, 1, 16});
    cases.push_back({"cg_axpy_x_f64_N4096", "cg_axpy", unknowns, 1, 24});
    cases.push_back({"cg_axpy_r_f64_N4096", "cg_axpy", unknowns, 1, 24});
    cases.push_back({"cg_dot_rr_f64_N4096", "dot_kernel", unknowns, 1, 8});
    cases.push_back({"cg_xpay_f64_N4096", "cg_xpay", unknowns, 1, 24});
  }
  // Fused and Pipelined, two iterations each, in launch order; the second is the steady one.
  // Fused: the direction kernel reads r and p, writes p' and A p' (32 B), and from the second
  // iteration also does the last one's x += α p (x read and written: 48 B); the update reads A p
  // and r and writes r (24 B). Pipelined: the reduction reads r and w and writes A w (24 B); the
  // update writes z, s, p, x, r and w from A w, w, r and x (80 B the first time) and the old z, s
  // and p (104 B after).
  {
    const std::int64_t n = 4096;
    relax::CgOptions o;
    o.max_iterations = 2;
    std::vector<double> b(static_cast<std::size_t>(n * n), 1.0), x(b.size(), 0.0);
    const double unknowns = double(n) * n;
    relax::CG<relax::Poisson5Operator<double>, relax::Fused> fused(relax::Poisson5Operator<double>(n), o);
    (void)fused.solve(b, x);
    cases.push_back({"cg_fused_direction_first_f64_N4096", "cg_fused_direction", unknowns, 1, 32});
    cases.push_back({"cg_fused_update_first_f64_N4096", "cg_fused_update", unknowns, 1, 24});
    cases.push_back({"cg_fused_direction_f64_N4096", "cg_fused_direction", unknowns, 1, 48});
    cases.push_back({"cg_fused_update_f64_N4096", "cg_fused_update", unknowns, 1, 24});
    std::fill(x.begin(), x.end(), 0.0);
    relax::CG<relax::Poisson5Operator<double>, relax::Pipelined> pipelined(relax::Poisson5Operator<double>(n), o);
    (void)pipelined.solve(b, x);
    cases.push_back({"cg_pipelined_reduce_first_f64_N4096", "cg_pipelined_reduce", unknowns, 1, 24});
    cases.push_back({"cg_pipelined_update_first_f64_N4096", "cg_pipelined_update", unknowns, 1, 80});
    cases.push_back({"cg_pipelined_reduce_f64_N4096", "cg_pipelined_reduce", unknowns, 1, 24});
    cases.push_back({"cg_pipelined_update_f64_N4096", "cg_pipelined_update", unknowns, 1, 104});
  }
  std::ofstream out(argv[1]);
  out << "[\n";
  for (std::size_t k = 0; k < cases.size(); ++k)
    out << "  {\"label\": \"" << cases[k].label << "\", \"kernel\": \"" << cases[k].kernel
        << "\", \"points\": " << cases[k].points << ", \"sweeps\": " << cases[k].sweeps
        << ", \"model_bytes_per_point_sweep\": " << cases[k].model_bytes << "}"
        << (k + 1 < cases.size() ? ",\n" : "\n");
  out << "]\n";
  std::printf("relax_profile_kernels: %zu cases written to %s\n", cases.size(), argv[1]);
  return 0;
}
