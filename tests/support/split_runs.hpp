#pragma once
// A solve on the slabs of a box against the single-domain solve, for the multi-sub-domain tests
// of every Comm policy (the test includes the policy's header).
#include <catch2/catch.hpp>

#include "grids.hpp"
#include "runs.hpp"

#include <relax/multi/distributed.cuh>
#include <relax/solver/solver.cuh>

#include <cstdint>
#include <type_traits>
#include <vector>

namespace relax::testing {

// The single-domain solve with `Whole` against the split with `Strategy` and `Comm`, slab s on
// `devices[s]`: the same report (sweeps, checks, ρ, history) and the same bits in every point.
template <class Strategy, class Comm = relax::HostCopy, class Whole = Strategy, class S>
void check_split_equals_whole(const relax::Extents& e, const S& s, const std::vector<int>& devices, int m = 8,
                              std::int64_t max_sweeps = 400, const Comm& comm = {}) {
  using T = typename S::value_type;
  INFO("box " << e.to_text() << ", " << devices.size() << " sub-domains, M = " << m);
  relax::HostGrid<T> u(e), b(e);
  fill_random(u, 11 + e.nx, 0.0, 10.0);
  fill_random(b, 13 + e.ny);
  relax::SolveOptions options;
  options.max_sweeps = max_sweeps;
  options.record_history = true;
  relax::Solver<S, Whole, relax::Fixed> whole(e, s, relax::Fixed(m), options);
  relax::DeviceGrid<T> du = relax::to_device(u, whole.stream());
  const relax::DeviceGrid<T> db = relax::to_device(b, whole.stream());
  const relax::SolveReport want = whole.solve(du, db);
  const relax::HostGrid<T> want_u = relax::to_host(du, whole.stream());

  auto split = [&] {
    if constexpr (std::is_same_v<Comm, relax::PeerStore>)
      return relax::MultiSolver<S, Strategy, Comm>(e, devices, s, relax::Fixed(m), options, comm);
    else
      return relax::MultiSolver<S, Strategy, Comm>(e, devices, s, relax::Fixed(m), options);
  }();
  auto su = split.make_grid();
  auto sb = split.make_grid();
  su.scatter(u);
  sb.scatter(b);
  const relax::SolveReport got = split.solve(su, sb);
  relax::HostGrid<T> got_u = u;  // the ring stays the boundary values
  su.gather(got_u);
  check_same_report(got, want);
  CHECK(same_bits(got_u, want_u));
}

}  // namespace relax::testing
