#pragma once
//! \file
//! Boxes of grid points, the storage layout of a structured grid and its views.
//!
//! A box has `nx × ny` interior points (rank 2) or `nx × ny × nz` (rank 3), each extent ≥ 1, and
//! a ring of boundary values `halo` cells wide around them (1 for the Jacobi solvers). A point is
//! addressed as (i, j) in 2D and (k, i, j) in 3D: k the plane (z), i the row (y), j the column
//! (x), with 0 ≤ j < nx + 2·halo and so on; the interior is `halo ≤ j < nx + halo`.
//!
//! Orientation: x grows from west to east along a row; y grows from the top edge (row 0, north)
//! down to the bottom (south); z grows from the top face (plane 0) down. A stencil's neighbour at
//! offset (dx, dy, dz) is the point (k + dz, i + dy, j + dx): north is dy = −1, south dy = +1,
//! east dx = +1, west dx = −1, up (towards plane 0) dz = −1, down dz = +1.
//!
//! In storage each row is padded so that the first interior point of every row starts a 128-byte
//! line: coalesced warps then touch whole lines, and strategies can use aligned vector loads.
//! Planes follow each other without extra padding. All offsets are 64-bit, so grids of more than
//! 2³¹ points work; a box whose storage would not fit in 64-bit byte offsets is rejected.

#include <relax/config.hpp>
#include <relax/core/error.hpp>

#include <cuda/std/mdspan>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace relax {

//! The interior extents of a box: `nx × ny` (rank 2) or `nx × ny × nz` (rank 3).
struct Extents {
  std::int64_t nx = 1;  //!< points along x (a row)
  std::int64_t ny = 1;  //!< points along y (rows)
  std::int64_t nz = 1;  //!< points along z (planes); 1 in 2D
  int rank = 2;         //!< 2 or 3

  Extents() = default;
  //! A 2D box of `nx × ny` points.
  Extents(std::int64_t x, std::int64_t y) : nx(x), ny(y), nz(1), rank(2) {}
  //! A 3D box of `nx × ny × nz` points.
  Extents(std::int64_t x, std::int64_t y, std::int64_t z) : nx(x), ny(y), nz(z), rank(3) {}
  //! The `n × n` square, or the `n × n × n` cube for `rank` 3.
  static Extents cube(std::int64_t n, int rank = 2) { return rank == 3 ? Extents(n, n, n) : Extents(n, n); }

  //! Interior points, nx · ny · nz.
  std::int64_t points() const { return nx * ny * nz; }
  //! The extent along the slowest axis: ny in 2D, nz in 3D (where slabs split a box).
  std::int64_t slowest() const { return rank == 3 ? nz : ny; }
  //! "nx x ny" or "nx x ny x nz".
  std::string to_text() const {
    std::string t = std::to_string(nx) + " x " + std::to_string(ny);
    return rank == 3 ? t + " x " + std::to_string(nz) : t;
  }

  //! \throws relax::invalid_argument naming `what` unless rank is 2 or 3 and every extent ≥ 1.
  //! The message is built only on failure: solvers validate boxes in every batch.
  void validate(const char* what = "extents") const {
    detail::require(rank == 2 || rank == 3, what, rank, "rank 2 or 3");
    if (!(nx >= 1 && ny >= 1 && nz >= 1 && (rank == 3 || nz == 1)))
      throw invalid_argument(what, to_text(), "at least 1 interior point along every axis");
  }

  friend bool operator==(const Extents& a, const Extents& b) {
    return a.rank == b.rank && a.nx == b.nx && a.ny == b.ny && a.nz == b.nz;
  }
  friend bool operator!=(const Extents& a, const Extents& b) { return !(a == b); }
};

//! The global index of an interior point, counted from 0 along each axis of the global box
//! (z = 0 in 2D). Stencils receive it to read coefficient fields.
struct Point {
  std::int64_t x = 0, y = 0, z = 0;
};

//! A view of a 2D grid: `view(i, j)` (row i, column j; row 0 is the top edge).
template <class T>
using grid_view = cuda::std::mdspan<T, cuda::std::dextents<std::int64_t, 2>, cuda::std::layout_stride>;
//! A view of a 3D grid: `view(k, i, j)` (plane k, row i, column j; plane 0 is the top face).
template <class T>
using grid_view3 = cuda::std::mdspan<T, cuda::std::dextents<std::int64_t, 3>, cuda::std::layout_stride>;

//! Where each point of a box (with its boundary ring) lives in a flat allocation, and where the
//! box lies in the global domain (`origin`: the global index of its first interior point).
struct GridLayout {
  Extents extents;         //!< interior points
  int halo = 1;            //!< width of the boundary ring
  std::int64_t pitch = 0;  //!< elements from one row to the next
  std::int64_t plane = 0;  //!< elements from one plane to the next
  std::int64_t lead = 0;   //!< elements before point (i, 0) in its row
  Point origin;            //!< global index of interior point (halo, halo[, halo])

  //! The layout of a box of `T` with a ring `halo` cells wide.
  //! \throws relax::invalid_argument for a bad box or ring, or a box whose storage (ring and
  //! padding included) would not fit in 64-bit byte offsets.
  template <class T>
  static GridLayout of(const Extents& e, int halo = 1) {
    e.validate();
    detail::require(halo >= 1 && halo <= 64, "halo", halo, "a ring 1 to 64 cells wide");
    constexpr std::int64_t align = 128 / static_cast<std::int64_t>(sizeof(T));
    GridLayout l;
    l.extents = e;
    l.halo = halo;
    l.lead = (align - halo % align) % align;  // puts (i, halo) on an aligned address
    // The storage in elements stays within `limit`, so every byte offset fits in 64 bits; each
    // bound is checked before the product it guards is formed.
    constexpr std::int64_t limit = std::numeric_limits<std::int64_t>::max() / static_cast<std::int64_t>(sizeof(T));
    const std::int64_t ring = 2 * static_cast<std::int64_t>(halo);
    const auto overflow = [&] {
      throw invalid_argument("extents", e.to_text(),
                             "a box whose storage (ring and padding included) fits in 64-bit byte offsets");
    };
    if (e.nx > limit - l.lead - ring - align || e.ny > limit - ring || e.nz > limit - ring) overflow();
    l.pitch = (l.lead + e.nx + ring + align - 1) / align * align;
    if (e.ny + ring > limit / l.pitch) overflow();
    l.plane = (e.ny + ring) * l.pitch;
    if (l.planes() > limit / l.plane) overflow();
    return l;
  }
  //! The layout of an `n × n` square of `T` (a one-cell ring).
  template <class T>
  static GridLayout of(std::int64_t n) {
    detail::require(n >= 1, "n", n, "at least 1 interior point per side");
    return of<T>(Extents(n, n));
  }

  int rank() const { return extents.rank; }
  std::int64_t nx() const { return extents.nx; }
  std::int64_t ny() const { return extents.ny; }
  std::int64_t nz() const { return extents.nz; }
  //! Planes in storage: nz + 2·halo in 3D, 1 in 2D.
  std::int64_t planes() const { return extents.rank == 3 ? extents.nz + 2 * halo : 1; }
  //! Elements the allocation holds (padding included).
  std::int64_t size() const { return planes() * plane; }
  //! Offset of 2D point (i, j), or of point (i, j) in plane 0, from the start of the allocation.
  RELAX_HOST_DEVICE std::int64_t offset(std::int64_t i, std::int64_t j) const {
    return i * pitch + lead + j;
  }
  //! Offset of 3D point (k, i, j).
  RELAX_HOST_DEVICE std::int64_t offset(std::int64_t k, std::int64_t i, std::int64_t j) const {
    return k * plane + i * pitch + lead + j;
  }
  //! Interior points.
  std::int64_t points() const { return extents.points(); }

  friend bool operator==(const GridLayout& a, const GridLayout& b) {
    return a.extents == b.extents && a.halo == b.halo && a.pitch == b.pitch && a.lead == b.lead;
  }
  friend bool operator!=(const GridLayout& a, const GridLayout& b) { return !(a == b); }
};

//! The 2D view of the grid with layout `l` whose allocation starts at `base`.
template <class T>
grid_view<T> make_grid_view(T* base, const GridLayout& l) {
  using extents = cuda::std::dextents<std::int64_t, 2>;
  const std::int64_t h2 = 2 * l.halo;
  cuda::std::layout_stride::mapping<extents> map(extents(l.ny() + h2, l.nx() + h2),
                                                 cuda::std::array<std::int64_t, 2>{l.pitch, 1});
  return grid_view<T>(base + l.lead, map);
}

//! The 3D view of the grid with layout `l` whose allocation starts at `base`.
template <class T>
grid_view3<T> make_grid_view3(T* base, const GridLayout& l) {
  using extents = cuda::std::dextents<std::int64_t, 3>;
  const std::int64_t h2 = 2 * l.halo;
  cuda::std::layout_stride::mapping<extents> map(
      extents(l.planes(), l.ny() + h2, l.nx() + h2),
      cuda::std::array<std::int64_t, 3>{l.plane, l.pitch, 1});
  return grid_view3<T>(base + l.lead, map);
}

//! A grid in host memory: the reference backend's storage and the staging area for device grids.
//! Padding elements are zero.
template <class T>
class HostGrid {
 public:
  using value_type = T;
  HostGrid() = default;
  //! \throws relax::unavailable_error naming the box and its bytes where host memory for them
  //! cannot be allocated.
  explicit HostGrid(const GridLayout& l) : layout_(l) {
    try {
      data_.assign(static_cast<std::size_t>(l.size()), T(0));
    } catch (const std::bad_alloc&) {
      throw_no_memory(l);
    } catch (const std::length_error&) {
      throw_no_memory(l);
    }
  }
  explicit HostGrid(const Extents& e) : HostGrid(GridLayout::of<T>(e)) {}
  //! An `n × n` grid.
  explicit HostGrid(std::int64_t n) : HostGrid(GridLayout::of<T>(n)) {}

  const GridLayout& layout() const { return layout_; }
  const Extents& extents() const { return layout_.extents; }
  grid_view<T> view() { return make_grid_view(data_.data(), layout_); }
  grid_view<const T> view() const { return make_grid_view(data_.data(), layout_); }
  grid_view3<T> view3() { return make_grid_view3(data_.data(), layout_); }
  grid_view3<const T> view3() const { return make_grid_view3(data_.data(), layout_); }
  T& operator()(std::int64_t i, std::int64_t j) { return data_[layout_.offset(i, j)]; }
  const T& operator()(std::int64_t i, std::int64_t j) const { return data_[layout_.offset(i, j)]; }
  T& operator()(std::int64_t k, std::int64_t i, std::int64_t j) { return data_[layout_.offset(k, i, j)]; }
  const T& operator()(std::int64_t k, std::int64_t i, std::int64_t j) const {
    return data_[layout_.offset(k, i, j)];
  }
  //! The whole allocation, padding included.
  std::vector<T>& storage() { return data_; }
  const std::vector<T>& storage() const { return data_; }

 private:
  [[noreturn]] static void throw_no_memory(const GridLayout& l) {
    throw unavailable_error("host memory for a grid of " + l.extents.to_text() + " points (" +
                            std::to_string(l.size()) + " elements of " + std::to_string(sizeof(T)) +
                            " bytes, ring and padding included) could not be allocated");
  }

  GridLayout layout_;
  std::vector<T> data_;
};

namespace detail {
//! Throws unless grid `what` is of rank `rank` (the stencil's). Cheap when it is: called per batch.
inline void require_rank(const GridLayout& got, int rank, const char* what) {
  if (got.rank() != rank)
    throw invalid_argument(what, "a grid of " + got.extents.to_text() + " points",
                           rank == 3 ? "a 3D grid (the stencil's rank)" : "a 2D grid (the stencil's rank)");
}

//! Throws unless grid `what` is one the sweeps can address: of the stencil's `rank`, with a
//! one-cell ring (`Shape` takes point 0 and nx + 1 as the ring: on a wider ring a sweep would
//! update ring cells as interior points).
inline void require_swept_grid(const GridLayout& got, int rank, const char* what) {
  require_rank(got, rank, what);
  if (got.halo != 1)
    throw invalid_argument(what, "a grid with a ring of " + std::to_string(got.halo) + " cells",
                           "a grid with a one-cell ring (what the sweeps address)");
}

//! Throws unless grid `what` has layout `expected` (same extents, ring and padding).
inline void require_layout(const GridLayout& got, const GridLayout& expected, const char* what) {
  if (got != expected)
    throw invalid_argument(what, "a grid of " + got.extents.to_text() + " points (ring " + to_text(got.halo) + ")",
                           "a grid of " + expected.extents.to_text() + " points (ring " +
                               to_text(expected.halo) + ", the solver's size)");
}
}  // namespace detail

}  // namespace relax
