#pragma once
// A user-style stencil shared by the host and device tests: anisotropic diffusion,
// A = (1 + 2rx + 2ry) I − rx (E + W) − ry (N + S), written in relax::arith operations.

#include <relax/config.hpp>
#include <relax/core/arith.hpp>
#include <relax/domain/grid.hpp>

namespace relax::testing {

struct Anisotropic5 {
  using value_type = float;
  static constexpr int rank = 2;
  static constexpr int radius = 1;
  float rx = 1.0f, ry = 0.25f, inv_diag = 1.0f / 3.5f;

  Anisotropic5() = default;
  Anisotropic5(float x, float y) : rx(x), ry(y), inv_diag(1.0f / (1.0f + 2.0f * x + 2.0f * y)) {}

  template <class U>
  RELAX_HOST_DEVICE float update(const U& u, relax::Point, float b) const {
    using namespace relax::arith;
    return mul(add(b, add(mul(ry, add(u(0, -1), u(0, 1))), mul(rx, add(u(1, 0), u(-1, 0))))), inv_diag);
  }
  template <class U>
  RELAX_HOST_DEVICE float residual(const U& u, relax::Point, float b) const {
    using namespace relax::arith;
    const float c = u(0, 0);
    return add(sub(b, c), add(mul(ry, add(sub(u(0, -1), c), sub(u(0, 1), c))),
                              mul(rx, add(sub(u(1, 0), c), sub(u(-1, 0), c)))));
  }
};

}  // namespace relax::testing
