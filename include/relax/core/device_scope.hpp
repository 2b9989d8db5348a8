#pragma once
//! \file
//! The current device for a scope, and the check of a list of devices (one per sub-domain).

#include <relax/core/cuda_check.hpp>
#include <relax/core/device.hpp>
#include <relax/core/error.hpp>

#include <vector>

namespace relax::detail {

//! Makes `device` current for the scope and restores the previous one.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    RELAX_CUDA_CHECK(cudaGetDevice(&previous_));
    if (device != previous_) RELAX_CUDA_CHECK(cudaSetDevice(device));
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  ~DeviceScope() { clear_cuda_status(cudaSetDevice(previous_)); }

 private:
  int previous_ = 0;
};

//! Every entry of `devices` names a CUDA device here (repeats allowed), and there is one per slab.
inline void require_devices(const std::vector<int>& devices) {
  require(!devices.empty(), "devices", "none", "at least one device (one per sub-domain; repeats allowed)");
  const int count = device_count();
  for (int d : devices)
    require(d >= 0 && d < count, "devices", d,
            count == 0 ? "a CUDA device, but none is present" : "indices of CUDA devices present here");
}

}  // namespace relax::detail
