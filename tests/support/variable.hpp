#pragma once
// User stencils with a variable coefficient: 2D and 3D diffusion whose coupling at each point is
// read from a field by the point's global index (`relax::Point`). The field lives where the stencil
// runs: a host array for the reference backend, a device array for the GPU.

#include <relax/config.hpp>
#include <relax/core/arith.hpp>
#include <relax/domain/grid.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace relax::testing {

struct VariableDiffusion5 {
  using value_type = float;
  static constexpr int rank = 2;
  static constexpr int radius = 1;
  const float* coupling = nullptr;  // nx · ny values, row-major by global index
  std::int64_t nx = 0;
  double typical_coupling = 1.0;  // what Auto is told (host_coupling): the field may be on the device

  RELAX_HOST_DEVICE float r(Point at) const { return coupling[at.y * nx + at.x]; }
  double host_coupling() const { return typical_coupling; }

  template <class U>
  RELAX_HOST_DEVICE float update(const U& u, Point at, float b) const {
    using namespace relax::arith;
    const float c = r(at);
    const float sum = add(add(u(0, -1), u(0, 1)), add(u(1, 0), u(-1, 0)));
    return div(add(b, mul(c, sum)), add(1.0f, mul(4.0f, c)));
  }
  template <class U>
  RELAX_HOST_DEVICE float residual(const U& u, Point at, float b) const {
    using namespace relax::arith;
    const float c0 = u(0, 0);
    const float diffs = add(add(sub(u(0, -1), c0), sub(u(0, 1), c0)), add(sub(u(1, 0), c0), sub(u(-1, 0), c0)));
    return add(sub(b, c0), mul(r(at), diffs));
  }
};

// No host_coupling: Auto runs Sync in 3D without evaluating it on the host (where a device field
// cannot be read).
struct VariableDiffusion7 {
  using value_type = float;
  static constexpr int rank = 3;
  static constexpr int radius = 1;
  const float* coupling = nullptr;  // nx · ny · nz values, x fastest, by global index
  std::int64_t nx = 0, ny = 0;

  RELAX_HOST_DEVICE float r(Point at) const { return coupling[(at.z * ny + at.y) * nx + at.x]; }

  template <class U>
  RELAX_HOST_DEVICE float update(const U& u, Point at, float b) const {
    using namespace relax::arith;
    const float c = r(at);
    const float sum = add(add(add(u(0, -1, 0), u(0, 1, 0)), add(u(1, 0, 0), u(-1, 0, 0))),
                          add(u(0, 0, -1), u(0, 0, 1)));
    return div(add(b, mul(c, sum)), add(1.0f, mul(6.0f, c)));
  }
  template <class U>
  RELAX_HOST_DEVICE float residual(const U& u, Point at, float b) const {
    using namespace relax::arith;
    const float c0 = u(0, 0, 0);
    const float diffs = add(add(add(sub(u(0, -1, 0), c0), sub(u(0, 1, 0), c0)),
                                add(sub(u(1, 0, 0), c0), sub(u(-1, 0, 0), c0))),
                            add(sub(u(0, 0, -1), c0), sub(u(0, 0, 1), c0)));
    return add(sub(b, c0), mul(r(at), diffs));
  }
};

//! Couplings between 0.5 and 20 that vary along every axis, so a wrong index shows in the bits
//! (x fastest, then y, then z).
inline std::vector<float> variable_couplings(std::int64_t nx, std::int64_t ny, std::int64_t nz = 1) {
  std::vector<float> c(static_cast<std::size_t>(nx * ny * nz));
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x)
        c[static_cast<std::size_t>((z * ny + y) * nx + x)] = static_cast<float>(
            0.5 + 19.5 * (0.5 + 0.5 * std::sin(0.37 * x + 1.3 * std::cos(0.21 * y) + 0.53 * z)));
  return c;
}

}  // namespace relax::testing
