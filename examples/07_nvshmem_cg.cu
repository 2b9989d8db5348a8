// CG with one process per GPU (NVSHMEM PEs): every process builds the same SPD matrix (the 2D
// Poisson matrix on 200 × 200 unknowns, in CSR), keeps its rank's two parts of a split by rows
// (relax::split_csr_of_rank) on its GPU, and solves A x = A·1 with relax::MultiCG over
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

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

// The 5-point Laplacian on n × n unknowns (4 on the diagonal, −1 to each neighbour) in CSR.
relax::Csr<double> poisson_csr(std::int64_t n) {
  relax::Csr<double> a;
  a.rows = a.cols = n * n;
  a.row_ptr.push_back(0);
  for (std::int64_t y = 0; y < n; ++y)
    for (std::int64_t x = 0; x < n; ++x) {
      const std::int64_t k = y * n + x;
      auto put = [&](std::int64_t c, double v) {
        a.col_idx.push_back(static_cast<std::int32_t>(c));
        a.values.push_back(v);
      };
      if (y > 0) put(k - n, -1.0);
      if (x > 0) put(k - 1, -1.0);
      put(k, 4.0);
      if (x + 1 < n) put(k + 1, -1.0);
      if (y + 1 < n) put(k + n, -1.0);
      a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
    }
  return a;
}

// Solves twice with `Variant` over NVSHMEM on this PE's parts; prints and checks this PE's
// entries of x (global [begin, end)) against 1, and that the second solve gives the same bits.
template <class Variant>
bool solve(const char* name, const relax::Csr<double>& a, const std::vector<double>& b,
           const relax::NvshmemRuntime& runtime) {
  const int parts = 2 * runtime.pes();
  auto split = relax::split_csr_of_rank(a, parts, runtime.pes(), runtime.pe(), runtime.device());
  const relax::PartLayout& first = split.layout.parts[static_cast<std::size_t>(split.first_held)];
  const relax::PartLayout& last = split.layout.parts[static_cast<std::size_t>(split.first_held + split.size() - 1)];
  const std::size_t begin = static_cast<std::size_t>(first.global_first);
  const std::size_t end = static_cast<std::size_t>(last.global_first + last.owned);
  relax::CgOptions options;
  options.rel_tol = 1e-10;
  relax::MultiCG<relax::CsrPartOperator<double>, Variant, relax::Nvshmem> cg(std::move(split), options);
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
  const relax::Csr<double> a = poisson_csr(200);
  std::vector<double> b(static_cast<std::size_t>(a.rows), 0.0);  // b = A · 1
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t k = a.row_ptr[static_cast<std::size_t>(i)]; k < a.row_ptr[static_cast<std::size_t>(i) + 1]; ++k)
      b[static_cast<std::size_t>(i)] += a.values[static_cast<std::size_t>(k)];
  bool ok = solve<relax::Pipelined>("Pipelined", a, b, runtime);
  ok = solve<relax::Persistent>("Persistent", a, b, runtime) && ok;
  std::printf("%s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
