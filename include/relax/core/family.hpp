#pragma once
//! \file
//! `Family` and `FamilyChoice`: the kinds of sweep schedule, as a strategy tag names its own and
//! as a controller or `relax::Auto` chooses one (shared by `control/` and `strategy/`).

namespace relax {

//! Synchronous sweeps (`Sync`), exact temporal blocking (`TemporalBlock<D, ...>`) and
//! block-asynchronous Jacobi (`BlockAsync<D>`).
enum class Family { sync, temporal, blockasync };

inline const char* to_string(Family f) {
  switch (f) {
    case Family::sync: return "sync";
    case Family::temporal: return "temporal";
    case Family::blockasync: return "blockasync";
  }
  return "unknown";
}

//! A family and its depth D, as a controller chooses them for `relax::Adaptive` and the decision
//! tree for `relax::Auto` (depth 1 for `Family::sync`). `device_loop`: the decision tree's choice
//! of the streamed device loop, the whole solve in one cooperative kernel
//! (`DeviceLoop<TemporalBlock<D, ColumnStream>>`, `Family::temporal` only); its iterates are those
//! of the launched `TemporalBlock<D, ColumnStream>`, which runs where a batch is asked for.
struct FamilyChoice {
  Family family = Family::temporal;
  int depth = 1;
  bool device_loop = false;
};

}  // namespace relax
