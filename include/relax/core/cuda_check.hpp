#pragma once
//! \file
//! `relax::cuda_error` and `RELAX_CUDA_CHECK`: every CUDA runtime call's status is checked, and a
//! failure becomes an exception that names the call, the file and the line.
//!
//! The runtime keeps the status of the last failed call of the thread (its "last error") until
//! `cudaGetLastError` reads it, and a kernel launch made with `<<<...>>>` reports its own failure
//! only there. So every failure the library handles, thrown or deliberately ignored, is cleared
//! from that slot where it is handled: otherwise a recoverable failure (a `cudaMalloc` that runs
//! out of memory, an invalid argument) would be reported a second time by the next launch check,
//! which would blame a valid launch for it. A sticky error (a kernel fault: the context is
//! unusable) survives the clearing; every later call still returns it.

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace relax {

//! A CUDA runtime call failed. `code()` is the runtime's status.
class cuda_error : public std::runtime_error {
 public:
  cuda_error(cudaError_t code, const std::string& expression, const char* file, int line)
      : std::runtime_error("relax: CUDA error " + std::string(cudaGetErrorName(code)) + " (" +
                           cudaGetErrorString(code) + ") in " + expression + " at " + file + ":" +
                           std::to_string(line)),
        code_(code) {}

  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

namespace detail {

//! Drops a failed status from the runtime's last-error slot, where the failed call left it.
inline void clear_cuda_status(cudaError_t code) noexcept {
  if (code != cudaSuccess) (void)cudaGetLastError();
}

//! Throws `cuda_error` for a failed status, after clearing it (see the file comment).
inline void cuda_check(cudaError_t code, const char* expression, const char* file, int line) {
  if (code == cudaSuccess) return;
  clear_cuda_status(code);
  throw cuda_error(code, expression, file, line);
}

}  // namespace detail

}  // namespace relax

//! Checks a CUDA runtime call and throws `relax::cuda_error` on failure.
#define RELAX_CUDA_CHECK(expr) ::relax::detail::cuda_check((expr), #expr, __FILE__, __LINE__)

//! Checks the launch that was just made (configuration errors surface here, not at the next sync).
//! Reading the last error also clears it. Because the library clears every failure it handles,
//! what this reads is the launch's own status, unless code outside the library left a failure of
//! its own unread.
#define RELAX_CUDA_CHECK_LAUNCH() \
  ::relax::detail::cuda_check(cudaGetLastError(), "the kernel launch before this line", __FILE__, __LINE__)
