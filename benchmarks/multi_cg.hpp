#pragma once
// The pieces of the CG-on-k-sub-domains benchmarks shared by relax_bench_multi_cg (one process)
// and relax_bench_nvshmem (one PE per GPU): the stand-ins of the CPU-free study's matrices, the
// options, and the timing of whole solves.
#include <benchmark/benchmark.h>

#include <relax/core/buffer.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/multi/cg.cuh>
#include <relax/sparse/partition.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace relax::bench {

// The stand-in of a SuiteSparse matrix: `rows` rows, about `per_row` entries each. Offsets of a
// 3D mesh of side s = ∛rows (1, s, s², then s ± 1, s² ± 1, s² ± s, ...: the neighbours of a point
// of a 125-point stencil by distance, of a 343-point one past 125 per row), both signs, as many
// as per_row needs; A_ij = −1 / (2 + d)
// for the d-th offset, the diagonal the row's absolute sum times 1 + 1e-4: symmetric positive
// definite, condition number about 2e4 (CG needs about 10^3 iterations to 1e-8, not tens).
inline relax::Csr<double> like_matrix(std::int64_t rows, std::int64_t per_row) {
  const std::int64_t s = std::max<std::int64_t>(2, std::llround(std::cbrt(static_cast<double>(rows))));
  const int reach = per_row > 125 ? 3 : 2;
  std::vector<std::tuple<int, std::int64_t>> candidates;  // (distance, offset)
  for (int dz = 0; dz <= reach; ++dz)
    for (int dy = -reach; dy <= reach; ++dy)
      for (int dx = -reach; dx <= reach; ++dx) {
        const std::int64_t offset = dz * s * s + dy * s + dx;
        if (offset > 0) candidates.emplace_back(std::abs(dx) + std::abs(dy) + dz, offset);
      }
  std::sort(candidates.begin(), candidates.end());
  const std::size_t pairs = std::min<std::size_t>(candidates.size(), static_cast<std::size_t>((per_row - 1) / 2));
  std::vector<std::int64_t> offsets;
  for (std::size_t i = 0; i < pairs; ++i) offsets.push_back(std::get<1>(candidates[i]));
  std::vector<std::pair<std::int64_t, double>> row;  // (offset, value), both signs
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    row.emplace_back(offsets[i], -1.0 / (2.0 + static_cast<double>(i)));
    row.emplace_back(-offsets[i], -1.0 / (2.0 + static_cast<double>(i)));
  }
  row.emplace_back(0, 0.0);
  std::sort(row.begin(), row.end());
  relax::Csr<double> a;
  a.rows = a.cols = rows;
  a.row_ptr.reserve(static_cast<std::size_t>(rows) + 1);
  a.col_idx.reserve(static_cast<std::size_t>(rows * static_cast<std::int64_t>(row.size())));
  a.values.reserve(a.col_idx.capacity());
  a.row_ptr.push_back(0);
  for (std::int64_t i = 0; i < rows; ++i) {
    double sum = 0.0;
    std::size_t diagonal = 0;
    for (const auto& [offset, value] : row) {
      const std::int64_t c = i + offset;
      if (c < 0 || c >= rows) continue;
      if (offset == 0) diagonal = a.values.size();
      a.col_idx.push_back(static_cast<std::int32_t>(c));
      a.values.push_back(value);
      sum += std::abs(value);
    }
    a.values[diagonal] = sum > 0.0 ? sum * (1.0 + 1e-4) : 1.0;
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  return a;
}

struct Like {
  const char* name;
  std::int64_t rows, per_row;
};
// Rows and non-zeros per row of the study's 18 matrices, in its order (SuiteSparse's figures,
// rounded; an even count becomes the odd one below it: a diagonal and pairs).
inline const Like likes[] = {
    {"ecology2", 999999, 5},       {"hood", 220542, 45},          {"bmwcra_1", 148770, 72},
    {"consph", 83334, 72},         {"thermomech_dM", 204316, 7},  {"tmt_sym", 726713, 7},
    {"crankseg_1", 52804, 201},    {"crankseg_2", 63838, 222},    {"Queen_4147", 4147110, 76},
    {"Bump_2911", 2911419, 44},    {"G3_circuit", 1585478, 5},    {"StocF-1465", 1465137, 15},
    {"Flan_1565", 1564794, 73},    {"audikw_1", 943695, 83},      {"Serena", 1391349, 47},
    {"Geo_1438", 1437960, 42},     {"Hook_1498", 1498023, 40},    {"ldoor", 952203, 45},
};

// Generating and splitting the larger stand-ins takes seconds (Queen_4147's has 3e8 entries):
// the rows of one matrix run one after another, so the last matrix and its splits are kept.
inline const relax::Csr<double>& cached_like(int which) {
  static int held = -1;
  static relax::Csr<double> a;
  if (held != which) {
    a = relax::Csr<double>{};
    a = like_matrix(likes[which].rows, likes[which].per_row);
    held = which;
  }
  return a;
}
inline const std::vector<relax::CsrPart<double>>& cached_parts(int which, int parts) {
  static std::map<std::pair<int, int>, std::vector<relax::CsrPart<double>>> cache;
  if (!cache.empty() && cache.begin()->first.first != which) cache.clear();
  auto at = cache.find({which, parts});
  if (at == cache.end()) at = cache.emplace(std::make_pair(which, parts), relax::partition(cached_like(which), parts)).first;
  return at->second;
}

inline relax::CgOptions options_for(bool fixed) {
  relax::CgOptions o;
  o.rel_tol = fixed ? 1e-30 : 1e-8;
  o.max_iterations = fixed ? 100 : 60000;
  o.check_interval = 1;
  // To 1e-8: checked every iteration, a solve stops at the first recurrence residual below the
  // tolerance, where the true residual may still be just above it (`residual_gap`); at 4096²
  // every variant ended so on the H200 (`bench_multi_cg_solve_65c3567.json`; the single-domain
  // benchmark, checking every 10, converged in 7706 iterations). Restarts from b − A x end it.
  if (!fixed) o.restarts = 2;
  return o;
}

template <class Solver>
void time_solves(benchmark::State& state, Solver& solver, std::int64_t n, bool fixed) {
  std::vector<double> b(static_cast<std::size_t>(n), 1.0);
  relax::DeviceBuffer<double> db(b.size()), dx(b.size());
  RELAX_CUDA_CHECK(cudaMemcpy(db.data(), b.data(), db.bytes(), cudaMemcpyHostToDevice));
  relax::CgReport last;
  for (auto _ : state) {
    RELAX_CUDA_CHECK(cudaMemset(dx.data(), 0, dx.bytes()));
    RELAX_CUDA_CHECK(cudaDeviceSynchronize());
    last = solver(db.data(), dx.data());
    state.SetIterationTime(last.time_ms / 1e3);
    if (!fixed && !last.converged()) {
      state.SkipWithError(("did not converge to 1e-8: " + std::string(relax::to_string(last.status)) + " after " +
                           std::to_string(last.iterations) + " iterations, true residual " +
                           std::to_string(last.relative_true_residual()))
                              .c_str());
      break;
    }
  }
  state.counters["iterations"] = static_cast<double>(last.iterations);
  state.counters["ms_per_iter"] = last.time_ms / static_cast<double>(std::max<std::int64_t>(1, last.iterations));
}

//! Times `cg` (a MultiCG) on device vectors: each held part's slice of one b and one x on its
//! GPU (all held parts share one GPU here).
template <class Cg>
void time_split_solves(benchmark::State& state, Cg& cg, bool fixed) {
  const relax::SplitLayout& layout = cg.layout();
  auto solve = [&](const double* b, double* x) {
    std::vector<const double*> bs;
    std::vector<double*> xs;
    for (int i = 0; i < cg.size(); ++i) {
      const std::int64_t f = layout.parts[static_cast<std::size_t>(cg.first_held() + i)].global_first;
      bs.push_back(b + f);
      xs.push_back(x + f);
    }
    return cg.solve(bs, xs);
  };
  time_solves(state, solve, layout.global_size(), fixed);
}

}  // namespace relax::bench
