// Host code of a CUDA-only project: the reference backend's Jacobi sweep of Stencil5<float> must
// give the bits of the same update computed in operations that cannot be fused (each result
// rounded through a volatile), which holds only if relax::relax stopped the host compiler from
// contracting r * sum + b into a fused multiply-add. And relax::reference_openmp must really
// compile the reference backend's OpenMP path in (the host pass sees _OPENMP).
#include <relax/reference/jacobi.hpp>
#include <relax/stencil/stencil5.hpp>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

using Grid = relax::HostGrid<float>;

//! Stencil5's update, u' = (b + r ((n + s) + (e + w))) / (1 + 4r), one rounding per operation.
float unfused_update(const relax::Stencil5<float>& st, float b, float n, float s, float e, float w) {
  volatile float ns = n + s;
  volatile float ew = e + w;
  volatile float sum = ns + ew;
  volatile float coupled = st.r * sum;
  volatile float numerator = b + coupled;
  return numerator * st.inv_diag;
}

//! The same update with the one contraction a host compiler would make: fma(r, sum, b).
float fused_update(const relax::Stencil5<float>& st, float b, float n, float s, float e, float w) {
  volatile float sum = (n + s) + (e + w);
  volatile float numerator = std::fma(st.r, static_cast<float>(sum), b);
  return numerator * st.inv_diag;
}

//! Values in [-1, 1) from a fixed linear congruential sequence, ring included.
void fill(Grid& g, std::uint32_t seed) {
  for (std::int64_t i = 0; i <= g.extents().ny + 1; ++i)
    for (std::int64_t j = 0; j <= g.extents().nx + 1; ++j) {
      seed = seed * 1664525u + 1013904223u;
      g(i, j) = static_cast<float>(seed >> 8) / static_cast<float>(1u << 23) - 1.0f;
    }
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

//! Points where the library's sweep differs from the unfused update; also counts the points
//! where a fused update would differ, which shows the data can tell the two apart.
bool check_sweep_is_unfused() {
  const std::int64_t n = 97;
  const relax::Stencil5<float> st(3.7);
  Grid u(n), b(n), out(n);
  fill(u, 1);
  fill(b, 2);
  relax::reference::sweep(st, u, out, b, relax::reference::Exec::openmp());
  std::int64_t differ = 0, fused_differ = 0;
  for (std::int64_t i = 1; i <= n; ++i)
    for (std::int64_t j = 1; j <= n; ++j) {
      const float args[] = {b(i, j), u(i - 1, j), u(i + 1, j), u(i, j + 1), u(i, j - 1)};
      const float want = unfused_update(st, args[0], args[1], args[2], args[3], args[4]);
      if (!same_bits(out(i, j), want)) ++differ;
      if (!same_bits(fused_update(st, args[0], args[1], args[2], args[3], args[4]), want)) ++fused_differ;
    }
  std::printf("host sweep: %lld of %lld points differ from the unfused update (%lld would if fused)\n",
              static_cast<long long>(differ), static_cast<long long>(n * n),
              static_cast<long long>(fused_differ));
  return differ == 0 && fused_differ > 0;
}

//! The reference backend resolves more than one thread, and a parallel region really has two.
bool check_openmp() {
#if defined(_OPENMP)
  const int resolved = relax::reference::Exec::openmp(2).resolved_threads();
  std::atomic<int> team{0};
#pragma omp parallel num_threads(2)
  team.fetch_add(1);
  std::printf("OpenMP %d: Exec::openmp(2) resolves %d threads, a parallel region ran %d\n",
              _OPENMP, resolved, team.load());
  return resolved == 2 && team.load() == 2;
#else
  std::printf("OpenMP: _OPENMP is not defined in the host pass (reference backend serial)\n");
  return false;
#endif
}

}  // namespace

int main() {
  const bool unfused = check_sweep_is_unfused();
  const bool openmp = check_openmp();
  return unfused && openmp ? 0 : 1;
}
