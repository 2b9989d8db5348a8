#pragma once
// Shared pieces of the benchmarks: event timing and the counters every benchmark reports.

#include <relax/core/stream.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>

namespace relax::bench {

//! Milliseconds of device work that `enqueue()` puts on `stream`, timed with CUDA events.
template <class F>
double time_ms(cudaStream_t stream, F&& enqueue) {
  EventTimer timer;
  timer.start(stream);
  enqueue();
  timer.stop(stream);
  return timer.milliseconds();
}

//! Sets a plain counter (not a rate: values here are computed from event times, not wall time).
inline void counter(benchmark::State& state, const char* name, double value) {
  state.counters[name] = benchmark::Counter(value);
}

}  // namespace relax::bench
