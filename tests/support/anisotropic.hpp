#pragma once
// A user-style stencil shared by the host and device tests: anisotropic diffusion,
// A = (1 + 2rx + 2ry) I − rx (E + W) − ry (N + S), written in relax::arith operations.

#include <relax/config.hpp>
#include <relax/core/arith.hpp>

namespace relax::testing {

struct Anisotropic5 {
  using value_type = float;
  static constexpr int radius = 1;
  float rx = 1.0f, ry = 0.25f, inv_diag = 1.0f / 3.5f;

  Anisotropic5() = default;
  Anisotropic5(float x, float y) : rx(x), ry(y), inv_diag(1.0f / (1.0f + 2.0f * x + 2.0f * y)) {}

  RELAX_HOST_DEVICE float update(float b, float n, float s, float e, float w) const {
    using namespace relax::arith;
    return mul(add(b, add(mul(ry, add(n, s)), mul(rx, add(e, w)))), inv_diag);
  }
  RELAX_HOST_DEVICE float residual(float b, float c, float n, float s, float e, float w) const {
    using namespace relax::arith;
    return add(sub(b, c), add(mul(ry, add(sub(n, c), sub(s, c))), mul(rx, add(sub(e, c), sub(w, c)))));
  }
};

}  // namespace relax::testing
