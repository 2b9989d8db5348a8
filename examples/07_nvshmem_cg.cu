// CG with one process per GPU (NVSHMEM PEs): every process keeps its rank's two slabs of the 2D
// Poisson operator on 200 × 200 unknowns (relax::split_stencil_of_rank; a CSR matrix splits the
// same way with relax::split_csr_of_rank) on its GPU, and solves A x = A·1 with relax::MultiCG over
// relax::Nvshmem, host-controlled (Pipelined: halos put into the readers' symmetric inboxes, the
// parts' sums all-gathered) and CPU-free (Persistent: one cooperative kernel per PE, the halos
// and partial sums stored into the other PEs' memory through NVSHMEM's mapping; one node). Each
// process checks the entries of x it holds against the known solution, 1, and that a second solve
// repeats them bit for bit.
//
//   build/examples/relax_example_07_nvshmem_cg              # one process (one PE)
//   mpirun -np 2 build/examples/relax_example_07_nvshmem_cg # one process per GPU
//
// Built where CMake finds NVSHMEM (relax::nvshmem, relocatable device code). Without a GPU it
// says so and exits with 77 (skipped).

#include <relax/multi/cg_nvshmem.cuh>
#include <relax/relax.hpp>
#include <relax/stencil/poisson.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

using Op = relax::StencilSlabOperator<relax::Poisson5<double>>;

// Solves twice with `Variant` over NVSHMEM on this PE's parts; prints and checks this PE's
// entries of x (global [begin, end)) against 1, and that the second solve gives the same bits.
template <class Variant>
bool solve(const char* name, const relax::Extents& e, const std::vector<double>& b, const relax::NvshmemRuntime& runtime) {
  const int parts = 2 * runtime.pes();
  auto split = relax::split_stencil_of_rank(relax::Poisson5<double>{}, e, parts, runtime.pes(), runtime.pe(),
                                            runtime.device());
  const relax::PartLayout& first = split.layout.parts[static_cast<std::size_t>(split.first_held)];
  const relax::PartLayout& last = split.layout.parts[static_cast<std::size_t>(split.first_held + split.size() - 1)];
  const std::size_t begin = static_cast<std::size_t>(first.global_first);
  const std::size_t end = static_cast<std::size_t>(last.global_first + last.owned);
  relax::CgOptions options;
  options.rel_tol = 1e-10;
  relax::MultiCG<Op, Variant, relax::Nvshmem> cg(std::move(split), options);
  std::vector<double> x(b.size(), 0.0), again(b.size(), 0.0);
  const relax::CgReport r = cg.solve(b, x);
  (void)cg.solve(b, again);
  double error = 0.0;
  for (std::size_t k = begin; k < end; ++k) error = std::max(error, std::abs(x[k] - 1.0));
  const bool repeated = std::memcmp(x.data() + begin, again.data() + begin, (end - begin) * sizeof(double)) == 0;
  std::printf("PE %d of %d, %-12s %-10s %5lld iterations  |b-Ax|/|b| %.2e  max error %.2e  %s\n", runtime.pe(),
              runtime.pes(), name, relax::to_string(r.status), static_cast<long long>(r.iterations),
              r.relative_true_residual(), error, repeated ? "repeats bit for bit" : "DIFFERS ON REPEAT");
  return r.converged() && error < 1e-4 && repeated;  // κ(A) ≈ 1.6e4 times the tolerance bounds it at 1.6e-6
}

}  // namespace

int main() {
  if (relax::device_count() == 0) {
    std::printf("no CUDA device is present: this example needs one GPU per process\n");
    return 77;
  }
  // NVSHMEM first (before any solver): from the launcher when one started us, else alone.
  const relax::NvshmemRuntime runtime(relax::NvshmemRuntime::FromEnvironment{});
  const std::int64_t n = 200;
  const relax::Extents e(n, n);
  std::vector<double> b;  // b = A · 1: 4 less the neighbours inside the box, the sides on its edge
  for (std::int64_t y = 0; y < n; ++y)
    for (std::int64_t x = 0; x < n; ++x) b.push_back(4.0 - (x > 0) - (x + 1 < n) - (y > 0) - (y + 1 < n));
  bool ok = solve<relax::Pipelined>("Pipelined", e, b, runtime);
  ok = solve<relax::Persistent>("Persistent", e, b, runtime) && ok;
  std::printf("%s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
