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
// Where NCCL's device API is found, the CPU-free variants over it too (one rank, a communicator
// made for the GPU): multi_cg_iter/<cpufree | cpufree_pipelined>/nccl/k:<k>/<operator>, read
// against the PeerStore rows of the same k (the same kernels, the memory in NCCL's windows).
//
// Counters: ms_per_iter, iterations. The figures `mcg_virtual2_overhead_pct_*` (k = 2 against
// k = 1, per iteration) and `mcg_nccl_one_rank_over_peer_store_pct_*` come from these rows
// (benchmarks/multi_cg_report.py).
#include "multi_cg.hpp"

#include <relax/multi/cg.cuh>
#if RELAX_BENCH_NCCL_DEVICE
#include <relax/multi/cg_nccl.cuh>
#endif
#include <relax/solver/cg.cuh>
#include <relax/sparse/device_csr.cuh>
#include <relax/stencil/operator.cuh>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using namespace relax::bench;

// range(0): operator (0 poisson2d, 1 poisson3d, 2 + i: likes[i]); range(1): side; range(2):
// parts (0: the single-domain CG); range(3): 1 fixed iterations, 0 to 1e-8.
template <class Variant, class Comm = relax::detail::split_default_comm<Variant>>
void multi_cg(benchmark::State& state) {
  const int op = static_cast<int>(state.range(0));
  const std::int64_t side = state.range(1);
  const int parts = static_cast<int>(state.range(2));
  const bool fixed = state.range(3) != 0;
  const relax::CgOptions options = options_for(fixed);
  const std::vector<int> devices(static_cast<std::size_t>(std::max(parts, 1)), 0);
  auto split_solve = [&](auto split) {
    relax::MultiCG<typename decltype(split)::part_type, Variant, Comm> cg(std::move(split), options);
    time_split_solves(state, cg, fixed);
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
#if RELAX_BENCH_NCCL_DEVICE
  // Over NCCL's device API, one rank: per iteration on the 4096² Poisson slabs and the 10⁶-row stand-in.
  auto nccl_rows = [&ops](const char* variant, auto run) {
    for (const Op& op : {ops[0], ops[2]})
      for (int parts : {1, 2})
        benchmark::RegisterBenchmark(
            (std::string("multi_cg_iter/") + variant + "/nccl/k:" + std::to_string(parts) + "/" + op.name).c_str(), run)
            ->Args({op.op, op.side, parts, 1})
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond)
            ->Iterations(5);
  };
  nccl_rows("cpufree", multi_cg<relax::Persistent, relax::Nccl>);
  nccl_rows("cpufree_pipelined", multi_cg<relax::PersistentPipelined, relax::Nccl>);
#endif
  return 0;
}();

}  // namespace
