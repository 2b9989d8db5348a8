#pragma once
//! \file
//! Facts about the CUDA devices of this machine, and the check that one is present.

#include <relax/core/cuda_check.hpp>
#include <relax/core/error.hpp>

#include <atomic>
#include <cstddef>
#include <string>

namespace relax {

//! What the solvers need to know about a device to size and choose their launches.
struct DeviceInfo {
  int id = 0;
  std::string name;
  int major = 0;  //!< compute capability, major
  int minor = 0;  //!< compute capability, minor
  int sm_count = 0;
  std::size_t l2_bytes = 0;
  std::size_t global_bytes = 0;
  std::size_t shared_per_block_optin = 0;  //!< the most shared memory a block may opt into
  bool cooperative_launch = false;
};

//! The number of CUDA devices usable here; 0 (not an exception) when there is no device or no
//! driver, so callers can fall back to the reference backend.
inline int device_count() noexcept {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  // "No device" is an answer here, not a failure to report later.
  detail::clear_cuda_status(status);
  return status == cudaSuccess ? count : 0;
}

//! Facts about device `id`; throws `relax::invalid_argument` if there is no such device.
inline DeviceInfo device_info(int id = 0) {
  const int count = device_count();
  detail::require(id >= 0 && id < count, "device", id,
                  count == 0 ? "a CUDA device, but none is present"
                             : "an index below the number of CUDA devices");
  cudaDeviceProp prop{};
  RELAX_CUDA_CHECK(cudaGetDeviceProperties(&prop, id));
  DeviceInfo info;
  info.id = id;
  info.name = prop.name;
  info.major = prop.major;
  info.minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  info.global_bytes = prop.totalGlobalMem;
  info.shared_per_block_optin = prop.sharedMemPerBlockOptin;
  info.cooperative_launch = prop.cooperativeLaunch != 0;
  return info;
}

namespace detail {
//! Devices whose launch facts are remembered (`cached_per_device`); others are asked every time.
inline constexpr int max_cached_devices = 64;

//! A positive fact about the current device, `query(device)`, asked once per device and
//! remembered in `slots` (0: not asked yet): launch heuristics ask for their facts on every
//! batch of sweeps, and a batch of one or two launches does not hide the queries.
template <class Query>
int cached_per_device(std::atomic<int> (&slots)[max_cached_devices], Query&& query) {
  int device = 0;
  RELAX_CUDA_CHECK(cudaGetDevice(&device));
  // Release and acquire: what the query did (a kernel's attribute set, say) comes before any
  // use of the value it left.
  if (device < max_cached_devices) {
    const int known = slots[device].load(std::memory_order_acquire);
    if (known > 0) return known;
  }
  const int value = query(device);
  if (device < max_cached_devices && value > 0) slots[device].store(value, std::memory_order_release);
  return value;
}

//! A device attribute of the current device, queried once per device and remembered.
template <cudaDeviceAttr Attribute>
int cached_device_attribute() {
  static std::atomic<int> cached[max_cached_devices];
  return cached_per_device(cached, [](int device) {
    int value = 0;
    RELAX_CUDA_CHECK(cudaDeviceGetAttribute(&value, Attribute, device));
    return value;
  });
}
}  // namespace detail

//! The SM count of the current device (remembered per device).
inline int current_sm_count() { return detail::cached_device_attribute<cudaDevAttrMultiProcessorCount>(); }

namespace detail {
//! The shared memory a block may take on the current device (the opt-in limit, remembered).
inline std::size_t shared_bytes_limit() {
  return static_cast<std::size_t>(cached_device_attribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>());
}
}  // namespace detail

//! The L2 cache size of the current device in bytes (remembered per device).
inline std::size_t current_l2_bytes() {
  return static_cast<std::size_t>(detail::cached_device_attribute<cudaDevAttrL2CacheSize>());
}

}  // namespace relax
