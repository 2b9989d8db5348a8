// Every CG variant on the real SPD matrices of tests/data/suitesparse (b = A·1, x₀ = 0, to
// 1e-8, restarts from the true residual allowed), and the figures of issue 13 as JSON:
//   cg_real_matrices_total                  matrices run
//   cg_real_matrices_converged              matrices where every variant reports `converged`
//                                           (recurrence and true residual below 1e-8)
//   pipelined_over_standard_iterations_max  the largest Pipelined / Unfused iteration ratio
// with one record per matrix and variant. Usage: relax_cg_real <tests/data folder> <out.json>;
// without a GPU it runs the reference backend's standard and pipelined CG and says so.
#include "json_text.hpp"
#include "real_matrices.hpp"

#include <relax/core/device.hpp>
#include <relax/cpu/cg.hpp>
#include <relax/solver/cg.cuh>
#include <relax/solver/operator_view.hpp>
#include <relax/sparse/device_csr.cuh>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct Run {
  std::string matrix, variant;
  relax::CgReport report;
};

template <class Variant>
relax::CgReport gpu_solve(const relax::CsrOperator<double>& op, const std::vector<double>& b) {
  relax::CG<relax::OperatorView<relax::CsrOperator<double>>, Variant> cg(relax::view(op),
                                                                          relax::testing::real_matrix_options());
  std::vector<double> x(b.size(), 0.0);
  return cg.solve(b, x);
}

std::vector<Run> run_matrix(const std::string& data_dir, const std::string& name, bool gpu) {
  const auto a = relax::testing::read_real_matrix(data_dir, name);
  const auto b = relax::testing::ones_rhs(a);
  std::vector<Run> runs;
  if (!gpu) {
    std::vector<double> x(b.size(), 0.0), y(b.size(), 0.0);
    runs.push_back({name, "reference", relax::reference::cg(a, b, x, relax::testing::real_matrix_options())});
    runs.push_back({name, "reference_pipelined",
                    relax::reference::cg_pipelined(a, b, y, relax::testing::real_matrix_options())});
    return runs;
  }
  const relax::CsrOperator<double> op(a);
  runs.push_back({name, "Unfused", gpu_solve<relax::Unfused>(op, b)});
  runs.push_back({name, "Fused", gpu_solve<relax::Fused>(op, b)});
  runs.push_back({name, "Graph", gpu_solve<relax::Graph>(op, b)});
  runs.push_back({name, "Persistent", gpu_solve<relax::Persistent>(op, b)});
  runs.push_back({name, "Pipelined", gpu_solve<relax::Pipelined>(op, b)});
  runs.push_back({name, "ClusterResident", gpu_solve<relax::ClusterResident>(op, b)});
  return runs;
}

void write_json(const std::string& path, const std::vector<Run>& runs, int converged, int total, double ratio_max,
                bool gpu) {
  std::ofstream out(path);
  if (!out) throw relax::invalid_argument("output path", path, "a writable file");
  using relax::json::number;
  using relax::json::quoted;
  out << "{\n  \"backend\": " << quoted(gpu ? "gpu" : "reference (no GPU present)") << ",\n"
      << "  \"tolerance\": 1e-08,\n  \"cg_real_matrices_converged\": " << converged
      << ",\n  \"cg_real_matrices_total\": " << total
      << ",\n  \"pipelined_over_standard_iterations_max\": " << number(ratio_max) << ",\n  \"runs\": [\n";
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const auto& r = runs[k].report;
    // A residual that is not finite (a breakdown) is written as null: JSON has no NaN.
    out << "    {\"matrix\": " << quoted(runs[k].matrix) << ", \"variant\": " << quoted(runs[k].variant)
        << ", \"status\": " << quoted(relax::to_string(r.status)) << ", \"iterations\": " << r.iterations
        << ", \"recurrence_residual\": " << number(r.relative_residual())
        << ", \"true_residual\": " << number(r.relative_true_residual()) << ", \"restarts\": " << r.restarts
        << ", \"switched_at\": " << r.switched_at << ", \"time_ms\": " << number(r.time_ms) << "}"
        << (k + 1 < runs.size() ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <tests/data folder> <out.json>\n", argv[0]);
    return 2;
  }
  const bool gpu = relax::device_count() > 0;
  if (!gpu) std::printf("no CUDA device: running the reference backend's standard and pipelined CG\n");
  std::vector<Run> all;
  int converged = 0, total = 0;
  double ratio_max = 0.0;
  for (const auto& name : relax::testing::real_spd_matrices()) {
    const auto runs = run_matrix(argv[1], name, gpu);
    ++total;
    converged += std::all_of(runs.begin(), runs.end(), [](const Run& r) { return r.report.converged(); });
    const double ratio = double(runs.back().report.iterations) / double(std::max<std::int64_t>(1, runs.front().report.iterations));
    ratio_max = std::max(ratio_max, ratio);
    for (const auto& r : runs)
      std::printf("%-9s %-20s %-60s %7ld iterations, true residual %.2e\n", r.matrix.c_str(), r.variant.c_str(),
                  relax::to_string(r.report.status), static_cast<long>(r.report.iterations),
                  r.report.relative_true_residual());
    all.insert(all.end(), runs.begin(), runs.end());
  }
  write_json(argv[2], all, converged, total, ratio_max, gpu);
  std::printf("converged on %d of %d matrices; Pipelined / standard iterations at most %.2f\n", converged, total,
              ratio_max);
  return 0;
}
