// Fuzz test of the Matrix Market reader, built with AddressSanitizer and UndefinedBehaviorSanitizer:
// random mutations of valid files (bytes changed, inserted, deleted, lines repeated or dropped,
// truncation) must either parse into a matrix whose invariants hold or raise relax::parse_error,
// never crash, read out of bounds or throw anything else. Bounded in time and iterations.
#include <relax/sparse/matrix_market.hpp>

#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string valid_file(std::mt19937_64& rng) {
  static const char* fields[] = {"real", "integer", "pattern"};
  const char* field = fields[rng() % 3];
  const bool symmetric = rng() % 2;
  const int n = 1 + static_cast<int>(rng() % 6), m = symmetric ? n : 1 + static_cast<int>(rng() % 6);
  std::vector<std::string> entries;
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= m; ++j) {
      if ((symmetric && j > i) || rng() % 3 == 0) continue;
      std::string e = std::to_string(i) + " " + std::to_string(j);
      if (std::string(field) == "real") e += " " + std::to_string(static_cast<double>(rng() % 2000) / 7.0 - 100);
      if (std::string(field) == "integer") e += " " + std::to_string(static_cast<int>(rng() % 200) - 100);
      entries.push_back(e);
    }
  std::string text = std::string("%%MatrixMarket matrix coordinate ") + field +
                     (symmetric ? " symmetric\n" : " general\n") + "% comment\n\n" +
                     std::to_string(n) + " " + std::to_string(m) + " " + std::to_string(entries.size()) + "\n";
  for (const auto& e : entries) text += e + "\n";
  return text;
}

void mutate(std::string& s, std::mt19937_64& rng) {
  static const char alphabet[] = "0123456789 -+.eE%\n\tabcxyz9999999999999999999";
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int k = 0; k < edits; ++k) {
    const std::size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (rng() % 6) {
      case 0: if (at < s.size()) s[at] = alphabet[rng() % (sizeof(alphabet) - 1)]; break;
      case 1: s.insert(at, 1, alphabet[rng() % (sizeof(alphabet) - 1)]); break;
      case 2: if (at < s.size()) s.erase(at, 1 + rng() % 3); break;
      case 3: s.resize(at); break;
      case 4: {  // repeat a line
        const auto a = s.rfind('\n', at == 0 ? 0 : at - 1), b = s.find('\n', at);
        if (a != std::string::npos && b != std::string::npos) s.insert(b + 1, s.substr(a + 1, b - a));
        break;
      }
      default: if (at < s.size()) s[at] = static_cast<char>(rng() % 256); break;  // any byte
    }
  }
}

}  // namespace

int main() {
  const auto start = std::chrono::steady_clock::now();
  const auto budget = std::chrono::seconds(5);
  std::mt19937_64 rng(20261130);
  long parsed = 0, rejected = 0, runs = 0;
  for (; runs < 200000 && std::chrono::steady_clock::now() - start < budget; ++runs) {
    std::string text = valid_file(rng);
    if (runs % 10 != 0) mutate(text, rng);  // every tenth file stays valid and must parse
    std::istringstream in(text);
    try {
      const auto a = relax::read_matrix_market<double>(in, "fuzz", relax::MatrixMarketLimits{100000});
      a.validate();
      ++parsed;
    } catch (const relax::parse_error&) {
      if (runs % 10 == 0) {
        std::printf("FAILED: a valid file was rejected:\n%s\n", text.c_str());
        return 1;
      }
      ++rejected;
    } catch (const std::exception& e) {
      std::printf("FAILED: unexpected exception %s for input:\n%s\n", e.what(), text.c_str());
      return 1;
    }
  }
  std::printf("%ld inputs: %ld parsed, %ld rejected with a parse error\n", runs, parsed, rejected);
  return 0;
}
