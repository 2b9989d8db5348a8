#pragma once
//! \file
//! The slab decomposition of a box for several sub-domains (several GPUs, or several sub-domains
//! on one GPU): the arithmetic only, host code, no CUDA.
//!
//! A box is split along its slowest axis (y in 2D, z in 3D; "rows" below means rows or planes)
//! into k slabs whose sizes differ by at most one. Slab s owns the global interior rows
//! [first, first + count). Its local box is what it sweeps: its own rows and, on each side that
//! has a neighbour, H − 1 more rows taken from the neighbour (H, the halo, is radius × D for
//! a strategy that runs D sweeps between exchanges), with the local boundary ring on that side
//! being the H-th. After each exchange the H rows next to the owned ones are the neighbour's
//! current values; D sweeps later the owned rows equal D sweeps of the whole box bit for bit (the
//! ghost-zone argument: a row d rows into the halo is correct for H − d sweeps), and the next
//! exchange refreshes the halo. On a side without a neighbour the ring is the global boundary.
//!
//! Row indices: global interior rows count from 0; storage row r of a grid with a one-cell ring
//! holds interior row r − 1, so the global grid's storage row of interior row g is g + 1 and a
//! slab's is g − `origin_row` + 1.

#include <relax/core/error.hpp>
#include <relax/domain/grid.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace relax {

//! A half-open range of global interior rows (planes in 3D): [first, first + count).
struct RowRange {
  std::int64_t first = 0;
  std::int64_t count = 0;
  friend bool operator==(const RowRange& a, const RowRange& b) { return a.first == b.first && a.count == b.count; }
};

//! One sub-domain of a `Decomposition`.
struct Slab {
  int index = 0;                  //!< 0 .. k − 1, from the top (row 0) down
  RowRange owned;                 //!< the global rows it owns
  int halo = 1;                   //!< H: rows it receives from each neighbour
  bool has_prev = false;          //!< a neighbour above (towards row 0)
  bool has_next = false;          //!< a neighbour below
  Extents extents;                //!< the local box: owned rows and H − 1 more per neighbour
  std::int64_t origin_row = 0;    //!< global interior row of the local box's first interior row

  //! The local layout of `T` (a one-cell ring), its origin the global index of its first point.
  template <class T>
  GridLayout layout() const {
    GridLayout l = GridLayout::of<T>(extents);
    if (extents.rank == 3) l.origin.z = origin_row;
    else l.origin.y = origin_row;
    return l;
  }
  //! Storage row (plane) of the local grid that holds global interior row `g` (the ring rows
  //! included: g = origin_row − 1 is storage row 0).
  std::int64_t storage_row(std::int64_t g) const { return g - origin_row + 1; }
  //! The rows it receives from the neighbour above (empty without one): the H rows above `owned`.
  RowRange receive_from_prev() const { return has_prev ? RowRange{owned.first - halo, halo} : RowRange{}; }
  //! The rows it receives from the neighbour below: the H rows below `owned`.
  RowRange receive_from_next() const {
    return has_next ? RowRange{owned.first + owned.count, halo} : RowRange{};
  }
  //! The rows it sends to the neighbour above (that neighbour's `receive_from_next`).
  RowRange send_to_prev() const { return has_prev ? RowRange{owned.first, halo} : RowRange{}; }
  //! The rows it sends to the neighbour below (that neighbour's `receive_from_prev`).
  RowRange send_to_next() const {
    return has_next ? RowRange{owned.first + owned.count - halo, halo} : RowRange{};
  }
};

class Decomposition {
 public:
  //! Splits `global` into `parts` slabs along its slowest axis, each receiving `halo` rows from
  //! each neighbour.
  //! \throws relax::invalid_argument naming `parts` or `halo`: parts < 1, halo < 1, or a slab
  //!         thinner than the halo (a neighbour could not send H rows it owns).
  Decomposition(const Extents& global, int parts, int halo) : global_(global) {
    global.validate("global box");
    detail::require(parts >= 1, "parts", parts, "at least 1 sub-domain");
    detail::require(halo >= 1, "halo", halo, "a halo of at least 1 row (radius x D)");
    const std::int64_t n = global.slowest();
    const char* axis = global.rank == 3 ? "planes" : "rows";
    if (parts > 1 && n / parts < halo)
      throw invalid_argument("parts", std::to_string(parts),
                             "a split whose thinnest sub-domain (" + std::to_string(n / parts) + " " + axis +
                                 " of " + std::to_string(n)  + ") is at least as thick as its halo (" +
                                 std::to_string(halo) + " " + axis + "): use fewer sub-domains or a smaller D");
    slabs_.reserve(static_cast<std::size_t>(parts));
    std::int64_t first = 0;
    for (int s = 0; s < parts; ++s) {
      Slab slab;
      slab.index = s;
      slab.owned = {first, n / parts + (s < n % parts ? 1 : 0)};
      slab.halo = halo;
      slab.has_prev = s > 0;
      slab.has_next = s + 1 < parts;
      const std::int64_t before = slab.has_prev ? halo - 1 : 0, after = slab.has_next ? halo - 1 : 0;
      slab.origin_row = first - before;
      slab.extents = global;
      (global.rank == 3 ? slab.extents.nz : slab.extents.ny) = slab.owned.count + before + after;
      first += slab.owned.count;
      slabs_.push_back(slab);
    }
  }

  const Extents& global() const { return global_; }
  int size() const { return static_cast<int>(slabs_.size()); }
  const Slab& operator[](int s) const { return slabs_.at(static_cast<std::size_t>(s)); }
  //! The slab that owns global interior row `g`.
  int owner(std::int64_t g) const {
    detail::require(g >= 0 && g < global_.slowest(), "row", g, "a global interior row of the box");
    const auto at = std::upper_bound(slabs_.begin(), slabs_.end(), g,
                                     [](std::int64_t v, const Slab& s) { return v < s.owned.first; });
    return static_cast<int>(at - slabs_.begin()) - 1;
  }

 private:
  Extents global_;
  std::vector<Slab> slabs_;
};

}  // namespace relax
