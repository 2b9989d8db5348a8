#pragma once
//! \file
//! `relax::cuda_error` and `RELAX_CUDA_CHECK`: every CUDA runtime call's status is checked, and a
//! failure becomes an exception that names the call, the file and the line.

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
inline void cuda_check(cudaError_t code, const char* expression, const char* file, int line) {
  if (code != cudaSuccess) throw cuda_error(code, expression, file, line);
}
}  // namespace detail

}  // namespace relax

//! Checks a CUDA runtime call and throws `relax::cuda_error` on failure.
#define RELAX_CUDA_CHECK(expr) ::relax::detail::cuda_check((expr), #expr, __FILE__, __LINE__)

//! Checks the launch that was just made (configuration errors surface here, not at the next sync).
#define RELAX_CUDA_CHECK_LAUNCH() RELAX_CUDA_CHECK(cudaGetLastError())
