#pragma once
// The real SPD matrices of tests/data/suitesparse (see PROVENANCE.md there) and the system every
// real-matrix test solves on them: b = A·1, x₀ = 0, to ‖b − A x‖₂ / ‖b‖₂ < 1e-8.

#include <relax/control/cg_report.hpp>
#include <relax/sparse/csr.hpp>
#include <relax/sparse/matrix_market.hpp>

#include <string>
#include <vector>

namespace relax::testing {

inline const std::vector<std::string>& real_spd_matrices() {
  static const std::vector<std::string> names = {"bcsstk01", "bcsstk03", "nos4",     "nos3",    "gr_30_30",
                                                 "662_bus",  "1138_bus", "plat362", "bcsstk14", "nos7"};
  return names;
}

// Reads tests/data/suitesparse/<name>.mtx from `data_dir`.
inline relax::Csr<double> read_real_matrix(const std::string& data_dir, const std::string& name) {
  return relax::read_matrix_market<double>(data_dir + "/suitesparse/" + name + ".mtx");
}

// Converged, or stopped honestly: the recurrence met 1e-8 and the report says the true residual did
// not, which stays within 10 times the tolerance (nos7, condition 2.4e9: standard CG ends at 3.4e-8
// after its restarts).
inline bool converged_or_honest_gap(const relax::CgReport& r) {
  return r.converged() ||
         (r.status == relax::CgStatus::residual_gap && r.relative_true_residual() < 10 * 1e-8);
}

// b = A·1.
inline std::vector<double> ones_rhs(const relax::Csr<double>& a) {
  const std::vector<double> ones(static_cast<std::size_t>(a.rows), 1.0);
  std::vector<double> b(ones.size());
  a.multiply(ones.data(), b.data());
  return b;
}

// The options of the real-matrix runs: 1e-8, a cap well above standard CG's counts, and restarts
// from the true residual (which the ill-conditioned ones need to meet it).
inline relax::CgOptions real_matrix_options() {
  relax::CgOptions opt;
  opt.rel_tol = 1e-8;
  opt.max_iterations = 200000;
  opt.restarts = 5;
  return opt;
}

}  // namespace relax::testing
