#pragma once
//! \file
//! RAII CUDA streams and events, and `EventTimer`, which times device work between two events.

#include <relax/core/cuda_check.hpp>

#include <utility>

namespace relax {

//! An owned, non-blocking CUDA stream.
class Stream {
 public:
  Stream() { RELAX_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  Stream& operator=(Stream&& other) noexcept {
    std::swap(stream_, other.stream_);
    return *this;
  }
  ~Stream() {
    // A destructor must not throw: a failure is cleared, not left for the next launch check.
    if (stream_) detail::clear_cuda_status(cudaStreamDestroy(stream_));
  }

  cudaStream_t get() const noexcept { return stream_; }
  operator cudaStream_t() const noexcept { return stream_; }
  void synchronize() const { RELAX_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

//! An owned CUDA event with timing enabled.
class Event {
 public:
  Event() { RELAX_CUDA_CHECK(cudaEventCreate(&event_)); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  Event& operator=(Event&& other) noexcept {
    std::swap(event_, other.event_);
    return *this;
  }
  ~Event() {
    if (event_) detail::clear_cuda_status(cudaEventDestroy(event_));
  }

  cudaEvent_t get() const noexcept { return event_; }
  void record(cudaStream_t stream) { RELAX_CUDA_CHECK(cudaEventRecord(event_, stream)); }
  void synchronize() const { RELAX_CUDA_CHECK(cudaEventSynchronize(event_)); }

 private:
  cudaEvent_t event_ = nullptr;
};

namespace detail {

// While it lives, the calling thread may make capture-unsafe calls (`cudaMalloc`) though a stream
// is being captured in global mode, by this thread or another, and those calls do not invalidate
// that capture. Only for memory that no captured work depends on.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { RELAX_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode_)); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;
  ~RelaxedCaptureMode() { clear_cuda_status(cudaThreadExchangeStreamCaptureMode(&mode_)); }

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;  // then the thread's own, restored
};

}  // namespace detail

//! Milliseconds between two recorded events that have completed.
inline double elapsed_ms(const Event& start, const Event& stop) {
  float ms = 0.0f;
  RELAX_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms;
}

//! Times device work on one stream: `start()`, enqueue work, `stop()`, then `milliseconds()`
//! (which waits for the stop event).
class EventTimer {
 public:
  void start(cudaStream_t stream) { start_.record(stream); }
  void stop(cudaStream_t stream) { stop_.record(stream); }
  double milliseconds() const {
    stop_.synchronize();
    return elapsed_ms(start_, stop_);
  }

 private:
  Event start_;
  Event stop_;
};

}  // namespace relax
