// Fuzz test of the CSR checks, built with AddressSanitizer and UndefinedBehaviorSanitizer: random
// CSR structures (valid ones, and ones broken at random: row offsets out of order or past the
// end, columns far out of range, negative, repeated or unsorted, arrays of the wrong length,
// non-finite values) go straight to `Csr::validate`, `require_square_symmetric` and the
// reference CG. Each must either pass or raise relax::invalid_argument, never crash, read out of
// bounds or throw anything else; a valid symmetric matrix must pass. Bounded in time.
#include <relax/cpu/cg.hpp>
#include <relax/sparse/csr.hpp>

#include <chrono>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

namespace {

// A random square matrix with a symmetric pattern and values (diagonally dominant, so SPD).
relax::Csr<double> valid_csr(std::mt19937_64& rng) {
  const int n = 1 + static_cast<int>(rng() % 8);
  std::vector<std::vector<double>> dense(n, std::vector<double>(n, 0.0));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < i; ++j)
      if (rng() % 3 == 0) dense[i][j] = dense[j][i] = -static_cast<double>(1 + rng() % 9);
  relax::Csr<double> a;
  a.rows = a.cols = n;
  a.row_ptr.push_back(0);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      if (i == j || dense[i][j] != 0.0) {
        a.col_idx.push_back(j);
        a.values.push_back(i == j ? 100.0 : dense[i][j]);
      }
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  return a;
}

std::int64_t wild(std::mt19937_64& rng) {
  static const std::int64_t values[] = {-1, 0, 1, 2, 7, 8, 9, 1000, 1 << 20, std::numeric_limits<std::int32_t>::max(),
                                        std::numeric_limits<std::int32_t>::min(), -1000000};
  return values[rng() % (sizeof(values) / sizeof(values[0]))];
}

void break_csr(relax::Csr<double>& a, std::mt19937_64& rng) {
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 9) {
      case 0: if (!a.col_idx.empty()) a.col_idx[rng() % a.col_idx.size()] = static_cast<std::int32_t>(wild(rng)); break;
      case 1: a.row_ptr[rng() % a.row_ptr.size()] = wild(rng); break;
      case 2: if (!a.col_idx.empty()) {  // an off-by-one column (wrapping at the int32 limits)
        auto& c = a.col_idx[rng() % a.col_idx.size()];
        c = static_cast<std::int32_t>(static_cast<std::int64_t>(c) + (rng() % 2 ? 1 : -1));
      } break;
      case 3: if (a.row_ptr.size() > 1) a.row_ptr.pop_back(); else a.row_ptr.push_back(3); break;
      case 4: if (!a.values.empty()) a.values.pop_back(); break;
      case 5: if (!a.values.empty()) a.values[rng() % a.values.size()] = std::numeric_limits<double>::quiet_NaN(); break;
      case 6: a.rows += (rng() % 2 ? 1 : -1); break;
      case 7: a.cols = wild(rng); break;
      default: if (!a.values.empty()) a.values[rng() % a.values.size()] *= 1.0 + 1e-12; break;  // asymmetry
    }
  }
}

}  // namespace

int main() {
  const auto start = std::chrono::steady_clock::now();
  const auto budget = std::chrono::seconds(4);
  std::mt19937_64 rng(20261201);
  long accepted = 0, rejected = 0, runs = 0;
  for (; runs < 200000 && std::chrono::steady_clock::now() - start < budget; ++runs) {
    relax::Csr<double> a = valid_csr(rng);
    const bool keep_valid = runs % 10 == 0;
    if (!keep_valid) break_csr(a, rng);
    try {
      a.validate();
      relax::require_square_symmetric(a, "A", relax::CsrSymmetry{runs % 2 ? 1e-9 : 0.0});
      std::vector<double> b(static_cast<std::size_t>(a.rows), 1.0), x(b.size(), 0.0);
      relax::CgOptions opt;
      opt.max_iterations = 50;
      relax::reference::cg(a, b, x, opt);
      ++accepted;
    } catch (const relax::invalid_argument&) {
      if (keep_valid) {
        std::printf("FAILED: a valid symmetric CSR was rejected (run %ld)\n", runs);
        return 1;
      }
      ++rejected;
    } catch (const std::exception& e) {
      std::printf("FAILED: unexpected exception %s (run %ld)\n", e.what(), runs);
      return 1;
    }
  }
  std::printf("%ld CSRs: %ld accepted, %ld rejected with relax::invalid_argument\n", runs, accepted, rejected);
  return 0;
}
