#pragma once
//! \file
//! `Family` and `FamilyChoice`: what a controller chooses for `relax::Adaptive` (shared by the
//! controllers in `control/` and the sweeper in `strategy/`).

namespace relax {

//! The two families `relax::Adaptive` runs: exact temporal blocking
//! (`TemporalBlock<D, ColumnStream>`) and block-asynchronous Jacobi (`BlockAsync<D>`).
enum class Family { temporal, blockasync };

//! A family and its depth D, as a controller chooses them for `relax::Adaptive`.
struct FamilyChoice {
  Family family = Family::temporal;
  int depth = 1;
};

}  // namespace relax
