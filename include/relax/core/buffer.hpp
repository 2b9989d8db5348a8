#pragma once
//! \file
//! Owning RAII buffers: `DeviceBuffer<T>` (cudaMalloc) and `PinnedBuffer<T>` (page-locked host
//! memory, the target of asynchronous device-to-host reads). Move-only; sizes are 64-bit. A buffer
//! can also own memory from another allocator (`adopt`: NVSHMEM's symmetric heap, say), which it
//! hands back to that allocator's release function.

#include <relax/core/cuda_check.hpp>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace relax {

namespace detail {

//! The shared body of the two buffers: the allocator differs, the ownership rules do not.
template <class T, class Allocator>
class OwnedArray {
 public:
  OwnedArray() = default;
  explicit OwnedArray(std::size_t count) : size_(count) {
    if (count > 0) data_ = static_cast<T*>(Allocator::allocate(count * sizeof(T)));
  }
  OwnedArray(const OwnedArray&) = delete;
  OwnedArray& operator=(const OwnedArray&) = delete;
  OwnedArray(OwnedArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)),
        release_(std::exchange(other.release_, nullptr)) {}
  //! Owns `count` elements at `data`, allocated elsewhere, and gives them to `release` (not null)
  //! when it is done with them.
  static OwnedArray adopt(T* data, std::size_t count, void (*release)(void*) noexcept) noexcept {
    OwnedArray a;
    a.data_ = data;
    a.size_ = count;
    a.release_ = release;
    return a;
  }
  OwnedArray& operator=(OwnedArray&& other) noexcept {
    swap(other);
    return *this;
  }
  ~OwnedArray() {
    if (data_ == nullptr) return;
    if (release_ != nullptr) release_(data_);
    else Allocator::release(data_);
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }
  void swap(OwnedArray& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(release_, other.release_);
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  void (*release_)(void*) noexcept = nullptr;  // null: Allocator::release
};

struct DeviceAllocator {
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    RELAX_CUDA_CHECK(cudaMalloc(&p, bytes));
    return p;
  }
  // A destructor must not throw; a failing cudaFree means the context is already broken, and the
  // next checked call reports that (a sticky error), so the status is only cleared here.
  static void release(void* p) noexcept { clear_cuda_status(cudaFree(p)); }
};

struct PinnedAllocator {
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    RELAX_CUDA_CHECK(cudaMallocHost(&p, bytes));
    return p;
  }
  static void release(void* p) noexcept { clear_cuda_status(cudaFreeHost(p)); }
};

}  // namespace detail

//! Device memory for `count` elements of `T`, uninitialised.
template <class T>
using DeviceBuffer = detail::OwnedArray<T, detail::DeviceAllocator>;

//! Page-locked host memory for `count` elements of `T`, uninitialised.
template <class T>
using PinnedBuffer = detail::OwnedArray<T, detail::PinnedAllocator>;

}  // namespace relax
