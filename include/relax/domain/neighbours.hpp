#pragma once
//! \file
//! `Neighbours<T, Rank>`: a point and its nearest neighbours along each axis, as a stencil reads
//! them (`u(dx, dy)` in 2D, `u(dx, dy, dz)` in 3D). The grid's geometry gathers them
//! (domain/shape.hpp, domain/tile.hpp); the orientation of the offsets is in domain/grid.hpp.

#include <relax/config.hpp>

namespace relax {

template <class T, int Rank>
struct Neighbours;

//! A point and its four neighbours in 2D; `u(dx, dy)` for |dx| + |dy| ≤ 1.
template <class T>
struct Neighbours<T, 2> {
  T c, n, s, e, w;  //!< centre, north (dy = −1), south, east (dx = +1), west
  RELAX_HOST_DEVICE T operator()(int dx, int dy) const {
    return dy < 0 ? n : dy > 0 ? s : dx > 0 ? e : dx < 0 ? w : c;
  }
};

//! A point and its six neighbours in 3D; `u(dx, dy, dz)` for |dx| + |dy| + |dz| ≤ 1.
template <class T>
struct Neighbours<T, 3> {
  T c, n, s, e, w, up, down;  //!< up: dz = −1 (towards plane 0), down: dz = +1
  RELAX_HOST_DEVICE T operator()(int dx, int dy, int dz) const {
    return dz < 0 ? up : dz > 0 ? down : dy < 0 ? n : dy > 0 ? s : dx > 0 ? e : dx < 0 ? w : c;
  }
};

}  // namespace relax
