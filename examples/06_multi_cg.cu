// CG on several sub-domains: a user's SPD matrix (here the 2D Poisson matrix in CSR, n × n
// unknowns) split by rows into k parts, solved with relax::MultiCG's four variants (Unfused and
// Pipelined, host-controlled; Persistent and PersistentPipelined, CPU-free), each against the known solution x*, and a
// second solve of each to show it repeats bit for bit. The parts go to the GPUs listed (a GPU may
// repeat: several parts on one GPU). Without a GPU it says so and solves with the reference
// backend's split CG (relax::reference::cg_split), the host model of the same parts.
//
//   relax_example_06_multi_cg [n] [devices]     (default 200 and 0,0: two parts on GPU 0)

#include <relax/cpu/split_cg.hpp>
#include <relax/multi/cg.cuh>
#include <relax/relax.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
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

double relative_error(const std::vector<double>& x, const std::vector<double>& exact) {
  double e = 0, s = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    e += (x[k] - exact[k]) * (x[k] - exact[k]);
    s += exact[k] * exact[k];
  }
  return std::sqrt(e / s);
}

bool report(const char* name, const relax::CgReport& r, double error, double bound, bool repeated) {
  std::printf("%-19s %-10s %5lld iterations  |b-Ax|/|b| %.2e  error %.2e  %8.2f ms  %s\n", name,
              relax::to_string(r.status), static_cast<long long>(r.iterations), r.relative_true_residual(), error,
              r.time_ms, repeated ? "repeats bit for bit" : "DIFFERS ON REPEAT");
  return r.converged() && error <= bound && repeated;
}

template <class Variant>
bool gpu_solve(const char* name, const relax::Csr<double>& a, const std::vector<int>& devices,
               const std::vector<double>& b, const std::vector<double>& exact, const relax::CgOptions& opt,
               double bound) {
  relax::MultiCG<relax::CsrPartOperator<double>, Variant> cg(relax::split_csr(a, devices), opt);
  std::vector<double> x(b.size(), 0.0), again(b.size(), 0.0);
  const relax::CgReport r = cg.solve(b, x);
  cg.solve(b, again);
  const bool same = std::memcmp(x.data(), again.data(), x.size() * sizeof(double)) == 0;
  return report(name, r, relative_error(x, exact), bound, same);
}

std::vector<int> parse_devices(const char* text) {
  std::vector<int> out;
  for (const char* p = text; *p;) {
    char* end = nullptr;
    const long d = std::strtol(p, &end, 10);
    relax::detail::require(end != p && d >= 0 && (*end == ',' || *end == '\0'), "devices", text,
                           "a comma-separated list of device indices, e.g. 0,0");
    out.push_back(static_cast<int>(d));
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    // The first argument, if any: unknowns per side (all of it a number in range).
    const std::string text = argc > 1 ? argv[1] : "200";
    char* end = nullptr;
    const long long n = std::strtoll(text.c_str(), &end, 10);
    relax::detail::require(!text.empty() && *end == '\0' && n >= 2 && n <= 4096, "n", text, "2 to 4096 unknowns per side");
    const std::vector<int> devices = parse_devices(argc > 2 ? argv[2] : "0,0");
    const relax::Csr<double> a = poisson_csr(n);
    std::vector<double> exact(static_cast<std::size_t>(a.rows)), b(exact.size());
    for (std::size_t k = 0; k < exact.size(); ++k) exact[k] = std::sin(0.001 * double(k) + 1.0);
    a.multiply(exact.data(), b.data());
    relax::CgOptions opt;
    opt.rel_tol = 1e-10;
    opt.max_iterations = 100000;
    const double bound = std::max(1e-8, 1e-10 * 0.5 * double(n) * double(n));  // κ(A) ≈ 0.4 n²
    std::printf("CG on %zu parts of the 2D Poisson matrix (CSR, %lld x %lld unknowns), rel_tol %g, float64\n",
                devices.size(), static_cast<long long>(n), static_cast<long long>(n), opt.rel_tol);
    bool ok = true;
    if (relax::device_count() == 0) {
      std::printf("no CUDA device is present: solving with the reference backend's split CG (the host model)\n");
      const int k = static_cast<int>(devices.size());
      std::vector<double> x(b.size(), 0.0), again(b.size(), 0.0);
      const relax::CgReport r = relax::reference::cg_split(a, k, b, x, opt);
      relax::reference::cg_split(a, k, b, again, opt);
      ok = report("cg_split", r, relative_error(x, exact), bound,
                  std::memcmp(x.data(), again.data(), x.size() * sizeof(double)) == 0);
    } else {
      std::string list;
      for (int d : devices) list += (list.empty() ? "" : ",") + std::to_string(d);
      std::printf("devices %s: %s\n", list.c_str(), relax::device_info(devices.front()).name.c_str());
      ok &= gpu_solve<relax::Unfused>("Unfused", a, devices, b, exact, opt, bound);
      ok &= gpu_solve<relax::Pipelined>("Pipelined", a, devices, b, exact, opt, bound);
      ok &= gpu_solve<relax::Persistent>("Persistent", a, devices, b, exact, opt, bound);
      ok &= gpu_solve<relax::PersistentPipelined>("PersistentPipelined", a, devices, b, exact, opt, bound);
    }
    std::printf("%s\n", ok ? "all solves converged to the known solution and repeated bit for bit" : "FAILED");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
