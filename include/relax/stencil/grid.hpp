#pragma once
//! \file
//! The storage layout of a structured grid and its views.
//!
//! A grid has `n × n` interior points and a one-cell ring of boundary values around them; a point
//! (i, j) with 0 ≤ i, j ≤ n + 1 is addressed through a `cuda::std::mdspan` view. In storage each
//! row is padded so that the first interior point of every row, (i, 1), starts a 128-byte line:
//! coalesced warps then touch whole lines, and later strategies can use aligned vector and bulk
//! copies. All offsets are 64-bit, so grids of more than 2³¹ points work.

#include <relax/config.hpp>
#include <relax/core/error.hpp>

#include <cuda/std/mdspan>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace relax {

//! A view of a grid: `view(i, j)` for 0 ≤ i, j ≤ n + 1 (row i, column j; row 0 is the top edge).
template <class T>
using grid_view = cuda::std::mdspan<T, cuda::std::dextents<std::int64_t, 2>, cuda::std::layout_stride>;

//! Where each point of an n × n grid (with its boundary ring) lives in a flat allocation.
struct GridLayout {
  std::int64_t n = 0;      //!< interior points per side
  std::int64_t pitch = 0;  //!< elements from one row to the next
  std::int64_t lead = 0;   //!< elements before point (i, 0) in its row

  //! The layout for `n × n` interior points of `T`.
  template <class T>
  static GridLayout of(std::int64_t n) {
    detail::require(n >= 1, "n", n, "at least 1 interior point per side");
    constexpr std::int64_t align = 128 / static_cast<std::int64_t>(sizeof(T));
    GridLayout l;
    l.n = n;
    l.lead = align - 1;  // puts (i, 1) on an aligned address
    l.pitch = (l.lead + n + 2 + align - 1) / align * align;
    return l;
  }

  //! Elements the allocation holds (padding included).
  std::int64_t size() const { return (n + 2) * pitch; }
  //! Offset of point (i, j) from the start of the allocation.
  RELAX_HOST_DEVICE std::int64_t offset(std::int64_t i, std::int64_t j) const {
    return i * pitch + lead + j;
  }
  //! Interior points, n².
  std::int64_t points() const { return n * n; }

  friend bool operator==(const GridLayout& a, const GridLayout& b) {
    return a.n == b.n && a.pitch == b.pitch && a.lead == b.lead;
  }
  friend bool operator!=(const GridLayout& a, const GridLayout& b) { return !(a == b); }
};

//! The view of the grid with layout `l` whose allocation starts at `base`.
template <class T>
grid_view<T> make_grid_view(T* base, const GridLayout& l) {
  using extents = cuda::std::dextents<std::int64_t, 2>;
  cuda::std::layout_stride::mapping<extents> map(extents(l.n + 2, l.n + 2),
                                                 cuda::std::array<std::int64_t, 2>{l.pitch, 1});
  return grid_view<T>(base + l.lead, map);
}

//! A grid in host memory: the reference backend's storage and the staging area for device grids.
//! Padding elements are zero.
template <class T>
class HostGrid {
 public:
  using value_type = T;
  HostGrid() = default;
  explicit HostGrid(std::int64_t n) : layout_(GridLayout::of<T>(n)), data_(layout_.size(), T(0)) {}

  const GridLayout& layout() const { return layout_; }
  std::int64_t n() const { return layout_.n; }
  grid_view<T> view() { return make_grid_view(data_.data(), layout_); }
  grid_view<const T> view() const { return make_grid_view(data_.data(), layout_); }
  T& operator()(std::int64_t i, std::int64_t j) { return data_[layout_.offset(i, j)]; }
  const T& operator()(std::int64_t i, std::int64_t j) const { return data_[layout_.offset(i, j)]; }
  //! The whole allocation, padding included.
  std::vector<T>& storage() { return data_; }
  const std::vector<T>& storage() const { return data_; }

 private:
  GridLayout layout_;
  std::vector<T> data_;
};

namespace detail {
//! Throws unless grid `what` has layout `expected` (same n, same padding).
inline void require_layout(const GridLayout& got, const GridLayout& expected, const char* what) {
  if (got != expected)
    throw invalid_argument(what, "a grid with n = " + to_text(got.n),
                           "a grid with n = " + to_text(expected.n) + " (the solver's size)");
}
}  // namespace detail

}  // namespace relax
