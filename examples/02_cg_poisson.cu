// Conjugate Gradient on the 2D Poisson problem: builds b = A x* for a known x*, solves A x = b
// with every GPU variant of relax::CG on the matrix-free operator, and checks each solution
// against x*. Without a GPU it says so and solves with the reference backend's CG instead.
//
//   relax_example_02_cg_poisson [n]      (n × n unknowns, default 256)

#include <relax/relax.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

double relative_error(const std::vector<double>& x, const std::vector<double>& exact) {
  double e = 0, s = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    e += (x[k] - exact[k]) * (x[k] - exact[k]);
    s += exact[k] * exact[k];
  }
  return std::sqrt(e / s);
}

// Prints one solve and returns whether it converged to x* within `bound`.
bool report(const char* name, const relax::CgReport& r, double error, double bound) {
  std::printf("%-12s %-10s %6lld iterations  |r|/|b| %.2e  error %.2e  %8.2f ms\n", name,
              relax::to_string(r.status), static_cast<long long>(r.iterations), r.relative_residual(),
              error, r.time_ms);
  return r.converged() && error <= bound;
}

template <class Variant>
bool gpu_solve(const char* name, std::int64_t n, const std::vector<double>& b,
               const std::vector<double>& exact, const relax::CgOptions& opt, double bound) {
  relax::CG<relax::Poisson5Operator<double>, Variant> cg(relax::Poisson5Operator<double>(n), opt);
  std::vector<double> x(b.size(), 0.0);
  const relax::CgReport r = cg.solve(b, x);
  return report(name, r, relative_error(x, exact), bound);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    // The first argument, if any: unknowns per side (all of it a number in range).
    const std::string text = argc > 1 ? argv[1] : "256";
    char* end = nullptr;
    const long long n = std::strtoll(text.c_str(), &end, 10);
    relax::detail::require(!text.empty() && *end == '\0' && n >= 1 && n <= 8192, "n", text, "1 to 8192 unknowns per side");
    const relax::reference::Poisson5<double> a(n);
    std::vector<double> exact(static_cast<std::size_t>(a.size())), b(exact.size());
    for (std::size_t k = 0; k < exact.size(); ++k) exact[k] = std::sin(0.001 * double(k) + 1.0);
    a.apply(exact.data(), b.data());
    relax::CgOptions opt;
    opt.rel_tol = 1e-10;
    opt.max_iterations = 100000;
    opt.check_interval = 10;
    // κ(A) ≈ 0.4 n², so the error may be about κ times the relative residual.
    const double bound = std::max(1e-8, 1e-10 * 0.5 * double(n) * double(n));
    std::printf("CG on the 2D Poisson problem, %lld x %lld unknowns, rel_tol %g, float64\n",
                static_cast<long long>(n), static_cast<long long>(n), opt.rel_tol);
    bool ok = true;
    if (relax::device_count() == 0) {
      std::printf("no CUDA device is present: solving with the reference backend's CG (OpenMP)\n");
      std::vector<double> x(b.size(), 0.0);
      const relax::CgReport r = relax::reference::cg(a, b, x, opt, relax::reference::Exec::openmp());
      ok = report("reference", r, relative_error(x, exact), bound);
    } else {
      std::printf("device: %s\n", relax::device_info(0).name.c_str());
      ok &= gpu_solve<relax::Unfused>("Unfused", n, b, exact, opt, bound);
      ok &= gpu_solve<relax::Fused>("Fused", n, b, exact, opt, bound);
      ok &= gpu_solve<relax::Graph>("Graph", n, b, exact, opt, bound);
      ok &= gpu_solve<relax::Persistent>("Persistent", n, b, exact, opt, bound);
      ok &= gpu_solve<relax::Pipelined>("Pipelined", n, b, exact, opt, bound);
    }
    std::printf("%s\n", ok ? "all solves converged to the known solution" : "FAILED");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
