// CG on k sub-domains of one GPU (issue 16), float64: relax::MultiCG, host-controlled standard
// (Unfused) and pipelined CG and CPU-free standard (Persistent) and pipelined CG
// (PersistentPipelined), k = 1 and k = 2 parts, against the single-domain CG<Operator, Variant>
// of the same variant (row "one_domain"; its Unfused checks every iteration, as the
// host-controlled MultiCG does; the CPU-free pipelined CG has no single-domain variant).
//
//   multi_cg_iter/<variant>/<who>/<operator>   ms per iteration at a fixed iteration count
//                                              (rel_tol 1e-30: every solve runs to the cap)
//   multi_cg_solve/<variant>/<who>/<operator>  time to ‖r‖ ≤ 1e-8 ‖b‖
//
// variant: standard | pipelined | cpufree | cpufree_pipelined; who: one_domain | k:1 | k:2; operator:
//   poisson2d/N:4096      the 5-point Poisson operator on 4096² unknowns, matrix-free slabs
//   poisson3d/N:256       the 7-point one on 256³
//   csr_like/<name>       a generated SPD CSR with the rows and non-zeros per row of a SuiteSparse
//                         matrix of the CPU-free study (`like_matrix` below: a symmetric band of
//                         mesh-like offsets, diagonally dominant); the real matrices are too large
//                         to fetch here, so these are stand-ins, not the matrices themselves.
//
// Counters: ms_per_iter, iterations. The figures `mcg_virtual2_overhead_pct_*` (k = 2 against
// k = 1, per iteration) come from these rows (benchmarks/report.py).
#include <benchmark/benchmark.h>

#include <relax/multi/cg.cuh>
#include <relax/solver/cg.cuh>
#include <relax/sparse/device_csr.cuh>
#include <relax/stencil/operator.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace {

// The stand-in of a SuiteSparse matrix: `rows` rows, about `per_row` entries each. Offsets of a
// 3D mesh of side s = ∛rows (1, s, s², then s ± 1, s² ± 1, s² ± s, ...: the neighbours of a point
// of a 125-point stencil by distance, of a 343-point one past 125 per row), both signs, as many
// as per_row needs; A_ij = −1 / (2 + d)
// for the d-th offset, the diagonal the row's absolute sum times 1 + 1e-4: symmetric positive
// definite, condition number about 2e4 (CG needs about 10^3 iterations to 1e-8, not tens).
relax::Csr<double> like_matrix(std::int64_t rows, std::int64_t per_row) {
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
const Like likes[] = {
    {"ecology2", 999999, 5},       {"hood", 220542, 45},          {"bmwcra_1", 148770, 72},
    {"consph", 83334, 72},         {"thermomech_dM", 204316, 7},  {"tmt_sym", 726713, 7},
    {"crankseg_1", 52804, 201},    {"crankseg_2", 63838, 222},    {"Queen_4147", 4147110, 76},
    {"Bump_2911", 2911419, 44},    {"G3_circuit", 1585478, 5},    {"StocF-1465", 1465137, 15},
    {"Flan_1565", 1564794, 73},    {"audikw_1", 943695, 83},      {"Serena", 1391349, 47},
    {"Geo_1438", 1437960, 42},     {"Hook_1498", 1498023, 40},    {"ldoor", 952203, 45},
};

// Generating and splitting the larger stand-ins takes seconds (Queen_4147's has 3e8 entries):
// the rows of one matrix run one after another, so the last matrix and its splits are kept.
const relax::Csr<double>& cached_like(int which) {
  static int held = -1;
  static relax::Csr<double> a;
  if (held != which) {
    a = relax::Csr<double>{};
    a = like_matrix(likes[which].rows, likes[which].per_row);
    held = which;
  }
  return a;
}
const std::vector<relax::CsrPart<double>>& cached_parts(int which, int parts) {
  static std::map<std::pair<int, int>, std::vector<relax::CsrPart<double>>> cache;
  if (!cache.empty() && cache.begin()->first.first != which) cache.clear();
  auto at = cache.find({which, parts});
  if (at == cache.end()) at = cache.emplace(std::make_pair(which, parts), relax::partition(cached_like(which), parts)).first;
  return at->second;
}

relax::CgOptions options_for(bool fixed) {
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

// range(0): operator (0 poisson2d, 1 poisson3d, 2 + i: likes[i]); range(1): side; range(2):
// parts (0: the single-domain CG); range(3): 1 fixed iterations, 0 to 1e-8.
template <class Variant>
void multi_cg(benchmark::State& state) {
  const int op = static_cast<int>(state.range(0));
  const std::int64_t side = state.range(1);
  const int parts = static_cast<int>(state.range(2));
  const bool fixed = state.range(3) != 0;
  const relax::CgOptions options = options_for(fixed);
  const std::vector<int> devices(static_cast<std::size_t>(std::max(parts, 1)), 0);
  // Each solve on device vectors: one part's slice of b and x (all parts share GPU 0, so the
  // slices of one array serve).
  auto split_solve = [&](auto split) {
    std::vector<std::int64_t> first;
    for (const auto& p : split.layout.parts) first.push_back(p.global_first);
    relax::MultiCG<typename decltype(split)::part_type, Variant> cg(std::move(split), options);
    auto solve = [&](const double* b, double* x) {
      std::vector<const double*> bs;
      std::vector<double*> xs;
      for (const std::int64_t f : first) {
        bs.push_back(b + f);
        xs.push_back(x + f);
      }
      return cg.solve(bs, xs);
    };
    time_solves(state, solve, cg.layout().global_size(), fixed);
  };
  auto single_solve = [&](auto op_value) {
    if constexpr (std::is_same_v<Variant, relax::PersistentPipelined>) {
      state.SkipWithError("no single-domain CPU-free pipelined CG");
    } else {
      const std::int64_t n = op_value.size();
      relax::CG<decltype(op_value), Variant> cg(std::move(op_value), options);
      auto solve = [&](const double* b, double* x) { return cg.solve(b, x, cg.stream()); };
      time_solves(state, solve, n, fixed);
    }
  };
  if (op <= 1) {
    const relax::Extents e = op == 0 ? relax::Extents(side, side) : relax::Extents(side, side, side);
    if (op == 0) {
      using P = relax::Poisson5<double>;
      if (parts == 0) single_solve(relax::StencilOperator<P>(P{}, e));
      else split_solve(relax::split_stencil(P{}, e, devices));
    } else {
      using P = relax::Poisson7<double>;
      if (parts == 0) single_solve(relax::StencilOperator<P>(P{}, e));
      else split_solve(relax::split_stencil(P{}, e, devices));
    }
  } else {
    const relax::Csr<double>& a = cached_like(op - 2);
    if (parts == 0) single_solve(relax::CsrOperator<double>(a));
    else split_solve(relax::split_csr(cached_parts(op - 2, parts), devices));
  }
}

struct Op {
  std::string name;
  int op;
  std::int64_t side;
};

template <class Variant>
void register_row(const char* variant, const Op& op, bool fixed) {
  for (int parts : {0, 1, 2}) {
    if (parts == 0 && std::is_same_v<Variant, relax::PersistentPipelined>) continue;  // no single-domain one
    const std::string who = parts == 0 ? "one_domain" : "k:" + std::to_string(parts);
    const std::string name = std::string(fixed ? "multi_cg_iter/" : "multi_cg_solve/") + variant + "/" + who + "/" + op.name;
    benchmark::RegisterBenchmark(name.c_str(), multi_cg<Variant>)
        ->Args({op.op, op.side, parts, fixed ? 1 : 0})
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(fixed ? 5 : 1);
  }
}

// Operator by operator (the stand-ins are made once per operator and pass), every variant.
const int registered = [] {
  std::vector<Op> ops = {{"poisson2d/N:4096", 0, 4096}, {"poisson3d/N:256", 1, 256}};
  for (int i = 0; i < static_cast<int>(std::size(likes)); ++i) ops.push_back({std::string("csr_like/") + likes[i].name, 2 + i, 0});
  for (const bool fixed : {true, false})
    for (const Op& op : ops) {
      register_row<relax::Unfused>("standard", op, fixed);
      register_row<relax::Pipelined>("pipelined", op, fixed);
      register_row<relax::Persistent>("cpufree", op, fixed);
      register_row<relax::PersistentPipelined>("cpufree_pipelined", op, fixed);
    }
  return 0;
}();

}  // namespace
