#pragma once
// Solves on the slabs of a box against the single-domain solve, for the multi-sub-domain tests
// of every Comm policy (the test includes the policy's header).
#include <catch2/catch.hpp>

#include "grids.hpp"
#include "runs.hpp"

#include <relax/multi/distributed.cuh>
#include <relax/solver/solver.cuh>

#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

namespace relax::testing {

// A multi-sub-domain solver, given `comm` where its Comm policy takes settings.
template <class S, class Strategy, class Comm>
relax::MultiSolver<S, Strategy, Comm> make_split(const relax::Extents& e, const std::vector<int>& devices, const S& s,
                                                 relax::Fixed controller, const relax::SolveOptions& options,
                                                 const Comm& comm) {
  using Split = relax::MultiSolver<S, Strategy, Comm>;
  if constexpr (std::is_constructible_v<Split, relax::Extents, std::vector<int>, S, relax::Fixed, relax::SolveOptions, Comm>)
    return Split(e, devices, s, controller, options, comm);
  else
    return Split(e, devices, s, controller, options);
}

// `got`'s owned rows put into a copy of `initial` where it holds them all, else (a process that
// holds some slabs) into a copy of `want`: then only the held rows are compared.
template <class T>
relax::HostGrid<T> gathered(const relax::DistributedGrid<T>& got, const relax::HostGrid<T>& initial,
                            const relax::HostGrid<T>& want) {
  relax::HostGrid<T> out = got.held() == got.size() ? initial : want;  // the ring stays the boundary values
  got.gather(out);
  return out;
}

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

  auto split = make_split<S, Strategy>(e, devices, s, relax::Fixed(m), options, comm);
  auto su = split.make_grid();
  auto sb = split.make_grid();
  su.scatter(u);
  sb.scatter(b);
  const relax::SolveReport got = split.solve(su, sb);
  check_same_report(got, want);
  CHECK(same_bits(gathered(su, u, want_u), want_u));
}

// `solves` solves of 1 to 3 sweeps, a check after every sweep, on the sub-domains of `devices`
// with each of `comms`, each against the same chain of single-domain Sync solves.
template <class Strategy, class Comm, class S>
void check_short_solves(const relax::Extents& e, const S& s, int solves, const std::vector<int>& devices,
                        const std::vector<Comm>& comms) {
  using T = typename S::value_type;
  INFO("box " << e.to_text() << ", " << devices.size() << " sub-domains");
  relax::HostGrid<T> u(e), b(e);
  fill_random(u, 5, 0.0, 10.0);
  fill_random(b, 6);
  for (std::size_t c = 0; c < comms.size(); ++c) {
    INFO("Comm setting " << c);
    using Whole = relax::Solver<S, relax::Sync, relax::Fixed>;
    using Split = relax::MultiSolver<S, Strategy, Comm>;
    std::vector<std::unique_ptr<Whole>> whole;
    std::vector<std::unique_ptr<Split>> split;
    for (int sweeps = 1; sweeps <= 3; ++sweeps) {  // solvers of 1, 2 and 3 sweeps on the same grids
      relax::SolveOptions options;
      options.tol = 1e-30;
      options.max_sweeps = sweeps;
      whole.push_back(std::make_unique<Whole>(e, s, relax::Fixed(1), options));
      split.push_back(std::make_unique<Split>(make_split<S, Strategy>(e, devices, s, relax::Fixed(1), options, comms[c])));
    }
    relax::DeviceGrid<T> du = relax::to_device(u, whole[0]->stream());
    const relax::DeviceGrid<T> db = relax::to_device(b, whole[0]->stream());
    auto su = split[0]->make_grid();
    auto sb = split[0]->make_grid();
    su.scatter(u);
    sb.scatter(b);
    for (int k = 0; k < solves; ++k) {
      const relax::SolveReport want = whole[static_cast<std::size_t>(k % 3)]->solve(du, db);
      const relax::SolveReport got = split[static_cast<std::size_t>(k % 3)]->solve(su, sb);
      check_same_report(got, want);
      REQUIRE(got.sweeps == k % 3 + 1);
    }
    const relax::HostGrid<T> want_u = relax::to_host(du, whole[0]->stream());
    CHECK(same_bits(gathered(su, u, want_u), want_u));
  }
}

}  // namespace relax::testing
