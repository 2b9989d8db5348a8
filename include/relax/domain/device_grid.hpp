#pragma once
//! \file
//! `DeviceGrid<T>`: a grid (see `relax/domain/grid.hpp`) in device memory, and the copies
//! between host and device grids.

#include <relax/core/buffer.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/domain/grid.hpp>

#include <cstdint>
#include <utility>

namespace relax {

//! A grid in device memory. Created zeroed (padding included), so no byte of it is ever read
//! uninitialised. Move-only; `swap` exchanges storage in O(1), which is how ping-pong buffers
//! trade places.
template <class T>
class DeviceGrid {
 public:
  using value_type = T;
  DeviceGrid() = default;
  //! Allocates and zeroes a grid of layout `l`; the zeroing is ordered on `stream`.
  explicit DeviceGrid(const GridLayout& l, cudaStream_t stream = nullptr)
      : layout_(l), data_(static_cast<std::size_t>(l.size())) {
    RELAX_CUDA_CHECK(cudaMemsetAsync(data_.data(), 0, data_.bytes(), stream));
  }
  //! A grid of layout `l` in `storage` (at least `l.size()` elements, from any allocator: the
  //! symmetric heap of a multi-process Comm policy, say), all of it zeroed on `stream`.
  //! \throws relax::invalid_argument when `storage` is smaller than the layout.
  DeviceGrid(const GridLayout& l, DeviceBuffer<T> storage, cudaStream_t stream = nullptr)
      : layout_(l), data_(std::move(storage)) {
    detail::require(data_.size() >= static_cast<std::size_t>(l.size()), "storage", static_cast<std::int64_t>(data_.size()),
                    "at least as many elements as the layout holds");
    RELAX_CUDA_CHECK(cudaMemsetAsync(data_.data(), 0, data_.bytes(), stream));
  }
  //! A grid of the box `e` with a one-cell ring.
  explicit DeviceGrid(const Extents& e, cudaStream_t stream = nullptr)
      : DeviceGrid(GridLayout::of<T>(e), stream) {}
  //! An `n × n` grid.
  explicit DeviceGrid(std::int64_t n, cudaStream_t stream = nullptr)
      : DeviceGrid(GridLayout::of<T>(n), stream) {}

  const GridLayout& layout() const { return layout_; }
  const Extents& extents() const { return layout_.extents; }
  grid_view<T> view() { return make_grid_view(data_.data(), layout_); }
  grid_view<const T> view() const { return make_grid_view<const T>(data_.data(), layout_); }
  grid_view3<T> view3() { return make_grid_view3(data_.data(), layout_); }
  grid_view3<const T> view3() const { return make_grid_view3<const T>(data_.data(), layout_); }
  //! The address of interior-and-ring point (0, 0[, 0]): what kernels index from.
  T* origin() { return data_.data() + layout_.lead; }
  const T* origin() const { return data_.data() + layout_.lead; }
  //! The whole allocation, padding included.
  T* data() { return data_.data(); }
  const T* data() const { return data_.data(); }
  //! The bytes of the layout (the storage may hold more).
  std::size_t bytes() const { return static_cast<std::size_t>(layout_.size()) * sizeof(T); }
  void swap(DeviceGrid& other) noexcept {
    std::swap(layout_, other.layout_);
    data_.swap(other.data_);
  }

 private:
  GridLayout layout_;
  DeviceBuffer<T> data_;
};

//! Copies a host grid to a device grid of the same layout, ordered on `stream`.
template <class T>
void copy(const HostGrid<T>& from, DeviceGrid<T>& to, cudaStream_t stream = nullptr) {
  detail::require_layout(to.layout(), from.layout(), "to");
  RELAX_CUDA_CHECK(cudaMemcpyAsync(to.data(), from.storage().data(), to.bytes(),
                                   cudaMemcpyHostToDevice, stream));
  RELAX_CUDA_CHECK(cudaStreamSynchronize(stream));  // `from` may be pageable and short-lived
}

//! Copies a device grid to a host grid of the same layout; returns once the data is on the host.
template <class T>
void copy(const DeviceGrid<T>& from, HostGrid<T>& to, cudaStream_t stream = nullptr) {
  detail::require_layout(to.layout(), from.layout(), "to");
  RELAX_CUDA_CHECK(cudaMemcpyAsync(to.storage().data(), from.data(), from.bytes(),
                                   cudaMemcpyDeviceToHost, stream));
  RELAX_CUDA_CHECK(cudaStreamSynchronize(stream));
}

//! Copies a device grid to another of the same layout, ordered on `stream`.
template <class T>
void copy(const DeviceGrid<T>& from, DeviceGrid<T>& to, cudaStream_t stream = nullptr) {
  detail::require_layout(to.layout(), from.layout(), "to");
  RELAX_CUDA_CHECK(cudaMemcpyAsync(to.data(), from.data(), from.bytes(), cudaMemcpyDeviceToDevice,
                                   stream));
}

//! A host copy of a device grid.
template <class T>
HostGrid<T> to_host(const DeviceGrid<T>& from, cudaStream_t stream = nullptr) {
  HostGrid<T> out(from.layout());
  copy(from, out, stream);
  return out;
}

//! A device copy of a host grid.
template <class T>
DeviceGrid<T> to_device(const HostGrid<T>& from, cudaStream_t stream = nullptr) {
  DeviceGrid<T> out(from.layout(), stream);
  copy(from, out, stream);
  return out;
}

}  // namespace relax
