#pragma once
//! \file
//! `relax::MultiCG<Part, Variant>`: CG on k sub-domains (a `SplitOperator`: a CSR split by rows
//! or a stencil's box split into slabs), part p on its own device, one process; several parts
//! may share a GPU. `Unfused` and `Pipelined` are host-controlled, the CPU-controlled baselines
//! of the CPU-free study (`Persistent`, below, is the CPU-free solver): the host enqueues every
//! operation on its device's stream (parts on one device share it), moves the
//! halos (a gather kernel that writes the neighbour's halo on one device; staged entries and
//! `cudaMemcpyPeerAsync` between devices, the `HostCopy` exchange of Jacobi, ordered by events)
//! and takes every global reduction itself: the kernels write each part's partial sums into
//! pinned host memory, and the host adds them in part order once the devices are done.
//!
//! - `Unfused`: standard CG. Per iteration: the halo of p, q = A p, the parts' partials of
//!   (p, q) to the host, x += α p and r −= α q with the partials of (r, r) in the same kernel,
//!   the host again, p = r + β p: two host round trips.
//! - `Pipelined`: Ghysels–Vanroose pipelined CG with the checkpoints, residual replacement and
//!   switch to standard CG of `reference::cg_pipelined` (the same rules). Per iteration one
//!   round trip: the partials of (r, r) and (w, r) go to the host while every part exchanges w
//!   and computes m = A w, so the reduction overlaps the product.
//! - `Persistent`: standard CG, CPU-free. The host forms r = p = b − A x and their halos, then
//!   one cooperative kernel per device runs every iteration of the parts on it (its blocks split
//!   among them by size), the senders storing r's halo entries straight into the readers' local
//!   vectors, every block of every device's kernel meeting at one bounded barrier twice an
//!   iteration and adding all blocks' partials in one order (`multi/cg_kernels.cuh`); the host
//!   reads the outcome. Needs cooperative launch, at most 8 parts a device, and peer access
//!   between the devices.
//!
//! Reductions are reproducible: each part's partial is `relax::dot`'s deterministic sum over its
//! owned entries, and the host adds the partials in part order, so for a given k a solve repeats
//! bit for bit and every part uses the same scalars; no floating-point atomics. With one part,
//! `MultiCG<..., Unfused>` computes what `CG<CsrOperator<T>, Unfused>` (or the stencil's
//! operator) computes, bit for bit, checking every iteration, and `MultiCG<..., Persistent>`
//! what `CG<..., Persistent>` computes on the same grid. With more parts the sums round
//! differently, so iteration counts differ from k = 1 by a few.
//!
//! Stopping and reports are single-GPU CG's (`CgOptions`, `CgReport`): the criterion on the
//! recurrence residual at every `check_interval` (Pipelined: every iteration, as its reference),
//! the cap, breakdown and non-finite statuses, the true residual ‖b − A x‖₂ at the end,
//! `residual_gap` and restarts.

#include <relax/control/cg_report.hpp>
#include <relax/control/stop.hpp>
#include <relax/core/buffer.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/core/device_scope.hpp>
#include <relax/core/error.hpp>
#include <relax/core/stream.hpp>
#include <relax/multi/cg_kernels.cuh>
#include <relax/multi/split_operator.cuh>
#include <relax/primitives/cg_updates.cuh>
#include <relax/primitives/dot.cuh>
#include <relax/primitives/reduce.cuh>
#include <relax/solver/cg.cuh>
#include <relax/strategy/tuning.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace relax {

namespace detail {

//! dst[e] = src[indices[e]]: a halo transfer's entries packed in the order both sides agree on.
template <class T>
__global__ void gather_kernel(std::int64_t n, const std::int64_t* __restrict__ indices, const T* __restrict__ src,
                              T* __restrict__ dst) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride)
    dst[e] = src[indices[e]];
}

//! x += step · p and r += minus_step · q (two `cg_axpy`s' arithmetic), and Σ r·r of the new r
//! summed as `relax::dot` sums it (same grid, same order) into `*out`. Launch: `dot_blocks` ×
//! `dot_block`.
template <class T>
__global__ void __launch_bounds__(dot_block)
    split_cg_step(std::int64_t n, T step, T minus_step, const T* __restrict__ p, const T* __restrict__ q,
                  T* __restrict__ x, T* __restrict__ r, double* partials, unsigned* arrivals, double* out) {
  double sum = 0.0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    x[k] += step * p[k];
    const T rk = r[k] + minus_step * q[k];
    r[k] = rk;
    sum += static_cast<double>(rk) * static_cast<double>(rk);
  }
  finish_dot(block_sum(sum), partials, arrivals, out);
}

//! p = r + b · p (`cg_xpay`'s arithmetic), b given.
template <class T>
__global__ void split_cg_xpay(std::int64_t n, T b, const T* __restrict__ r, T* __restrict__ p) {
  xpay_range(n, b, r, p);
}

//! out[0] = (r, r) and out[1] = (w, r) in one pass, deterministic. Launch: `dot_blocks` ×
//! `dot_block`; `partials` holds 2 × `dot_blocks`.
template <class T>
__global__ void __launch_bounds__(dot_block)
    split_dot2(std::int64_t n, const T* __restrict__ r, const T* __restrict__ w, double* partials,
               unsigned* arrivals, double* out) {
  SumPair v;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    const double rk = static_cast<double>(r[k]);
    v.first += rk * rk;
    v.second += static_cast<double>(w[k]) * rk;
  }
  const SumPair s = block_sum2(v);
  finish_sums2(s.first, s.second, partials, arrivals, [out](double a, double b) {
    out[0] = a;
    out[1] = b;
  });
}

//! Pipelined CG's update (`reference::cg_pipelined`'s loop): z = m + β z, s = w + β s,
//! p = r + β p (on the first iteration z = m, s = w, p = r), x += α p, r −= α s, w −= α z.
template <class T>
__global__ void split_pipelined_update(std::int64_t n, bool first, T a, T be, const T* __restrict__ m,
                                       T* __restrict__ z, T* __restrict__ s, T* __restrict__ p, T* __restrict__ x,
                                       T* __restrict__ r, T* __restrict__ w) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    const T wk = w[k], rk = r[k];
    const T zk = first ? m[k] : m[k] + be * z[k];
    const T sk = first ? wk : wk + be * s[k];
    const T pk = first ? rk : rk + be * p[k];
    z[k] = zk;
    s[k] = sk;
    p[k] = pk;
    x[k] += a * pk;
    r[k] = rk - a * sk;
    w[k] = wk - a * zk;
  }
}

//! t = b − ax and Σ (t − r)² in double (Pipelined's checkpoint gap), deterministic.
template <class T>
__global__ void __launch_bounds__(dot_block)
    split_residual_gap(std::int64_t n, const T* __restrict__ b, const T* __restrict__ ax, T* __restrict__ t,
                       const T* __restrict__ r, double* partials, unsigned* arrivals, double* out) {
  double sum = 0.0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    const T tk = b[k] - ax[k];
    t[k] = tk;
    const double d = static_cast<double>(tk) - static_cast<double>(r[k]);
    sum += d * d;
  }
  finish_dot(block_sum(sum), partials, arrivals, out);
}

//! t = r + β p (t = r on the first iteration): the direction whose pᵀAp Pipelined computes
//! directly after a recurrence gave η ≤ 0.
template <class T>
__global__ void split_direction(std::int64_t n, bool first, T be, const T* __restrict__ r, const T* __restrict__ p,
                                T* __restrict__ t) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride)
    t[k] = first ? r[k] : r[k] + be * p[k];
}

}  // namespace detail

template <class Part, class Variant = Unfused>
class MultiCG {
  static_assert(std::is_same_v<Variant, Unfused> || std::is_same_v<Variant, Pipelined> ||
                    std::is_same_v<Variant, Persistent>,
                "relax::MultiCG<Part, Variant>: the variants are relax::Unfused (standard CG) and relax::Pipelined, "
                "host-controlled, and relax::Persistent (standard CG, CPU-free)");
  static constexpr bool pipelined = std::is_same_v<Variant, Pipelined>;
  static constexpr bool persistent = std::is_same_v<Variant, Persistent>;

 public:
  using value_type = typename Part::value_type;
  using T = value_type;

  //! A solver on `op`'s parts; every part's vectors are allocated on its device.
  //! \throws relax::invalid_argument for bad options; relax::unavailable_error without a GPU.
  MultiCG(SplitOperator<Part> op, CgOptions options = {}) : op_(std::move(op)), options_((options.validate(), options)) {
    if (device_count() == 0)
      throw unavailable_error("relax::MultiCG needs a CUDA device and none is present; use relax::reference::cg_split");
    op_.layout.validate();
    detail::require(op_.devices.size() == op_.parts.size() && op_.layout.parts.size() == op_.parts.size(),
                    "split operator", op_.parts.size(), "one device and one layout entry per part");
    // One stream per device, shared by the parts on it: their work is ordered by the stream
    // itself, and only transfers between devices need events.
    for (std::size_t p = 0; p < op_.parts.size(); ++p) {
      Lane* lane = nullptr;
      for (auto& l : lanes_)
        if (l->device == op_.devices[p]) lane = l.get();
      if (!lane) {
        const detail::DeviceScope on(op_.devices[p]);
        lanes_.push_back(std::make_unique<Lane>(op_.devices[p]));
        lane = lanes_.back().get();
      }
      parts_.push_back(std::make_unique<PartState>(op_, p, lane));
    }
    // Each sender's indexed transfers: their indices one after another, packed into staging.
    std::vector<std::vector<std::int64_t>> indices(parts_.size());
    for (const HaloTransfer& h : op_.layout.transfers) {
      Link l{h.from, h.to, h.count, h.first, h.receive_offset, -1,
             op_.devices[static_cast<std::size_t>(h.from)] != op_.devices[static_cast<std::size_t>(h.to)]};
      across_devices_ = across_devices_ || l.across;
      if (!h.indices.empty()) {
        auto& list = indices[static_cast<std::size_t>(h.from)];
        l.packed_at = static_cast<std::int64_t>(list.size());
        list.insert(list.end(), h.indices.begin(), h.indices.end());
      }
      links_.push_back(l);
    }
    for (std::size_t p = 0; p < parts_.size(); ++p) parts_[p]->set_indices(indices[p], staged(p));
    if constexpr (persistent) prepare_persistent();
  }

  //! The CPU-free variant's blocks on each device (in the order devices first appear among the
  //! parts); empty for the host-controlled variants.
  std::vector<int> persistent_blocks() const {
    std::vector<int> out;
    if (persistent)
      for (const auto& lane : lanes_) out.push_back(static_cast<int>(lane->blocks));
    return out;
  }

  //! Test hook (Persistent): the barrier waits for `blocks` more blocks than there are, so none
  //! completes and the solve ends with `relax::device_loop_error` after `timeout_ns`.
  void set_absent_blocks_for_testing(unsigned blocks, std::uint64_t timeout_ns = 50'000'000) {
    absent_blocks_ = blocks;
    timeout_ns_ = blocks > 0 ? timeout_ns : default_timeout_ns;
  }

  int size() const { return static_cast<int>(parts_.size()); }
  const SplitLayout& layout() const { return op_.layout; }
  const CgOptions& options() const { return options_; }

  //! Solves A x = b from the initial guess in `x`, both global host vectors (part p owns its
  //! layout's slice). Blocks until done; the report carries the true residual of the returned x.
  //! \throws relax::invalid_argument for vectors not one value per unknown.
  CgReport solve(const std::vector<T>& b, std::vector<T>& x) {
    const std::int64_t n = op_.layout.global_size();
    detail::require(static_cast<std::int64_t>(b.size()) == n, "b", b.size(), "one value per unknown of the operator");
    detail::require(static_cast<std::int64_t>(x.size()) == n, "x", x.size(), "one value per unknown of the operator");
    for (auto& part : parts_) {
      const detail::DeviceScope on(part->device);
      if (part->b.size() == 0) part->b = DeviceBuffer<T>(static_cast<std::size_t>(part->owned));
      part->rhs = part->b.data();
      const std::size_t bytes = static_cast<std::size_t>(part->owned) * sizeof(T);
      RELAX_CUDA_CHECK(cudaMemcpyAsync(part->b.data(), b.data() + part->global_first, bytes, cudaMemcpyHostToDevice,
                                       part->lane->stream.get()));
      RELAX_CUDA_CHECK(cudaMemcpyAsync(part->owned_of(vx), x.data() + part->global_first, bytes,
                                       cudaMemcpyHostToDevice, part->lane->stream.get()));
    }
    return run([&](PartState& part) {
      RELAX_CUDA_CHECK(cudaMemcpyAsync(x.data() + part.global_first, part.owned_of(vx),
                                       static_cast<std::size_t>(part.owned) * sizeof(T), cudaMemcpyDeviceToHost,
                                       part.lane->stream.get()));
    });
  }

  //! Solves with device vectors: `b[p]` and `x[p]` hold part p's owned entries
  //! (`layout().parts[p].owned` values) on its device; `x[p]` is the initial guess and receives
  //! the solution. `b` is read in place, `x` copied in and out. Blocks until done.
  //! \throws relax::invalid_argument for lists not one pointer per part, or a null pointer.
  CgReport solve(const std::vector<const T*>& b, const std::vector<T*>& x) {
    detail::require(b.size() == parts_.size(), "b", b.size(), "one device pointer per part");
    detail::require(x.size() == parts_.size(), "x", x.size(), "one device pointer per part");
    for (std::size_t p = 0; p < parts_.size(); ++p) {
      detail::require(b[p] != nullptr && x[p] != nullptr, "b, x", p, "device pointers of every part");
      PartState& part = *parts_[p];
      const detail::DeviceScope on(part.device);
      part.rhs = b[p];
      RELAX_CUDA_CHECK(cudaMemcpyAsync(part.owned_of(vx), x[p], static_cast<std::size_t>(part.owned) * sizeof(T),
                                       cudaMemcpyDeviceToDevice, part.lane->stream.get()));
    }
    return run([&](PartState& part) {
      RELAX_CUDA_CHECK(cudaMemcpyAsync(x[part.index],
                                       part.owned_of(vx), static_cast<std::size_t>(part.owned) * sizeof(T),
                                       cudaMemcpyDeviceToDevice, part.lane->stream.get()));
    });
  }

 private:
  // The local vectors of a part (A is applied to x, r, p, w, s and t; q, m and z are products).
  enum Vec { vx, vr, vp, vq, vw, vm, vz, vs, vt, vec_count };
  static constexpr int vectors = pipelined || persistent ? vec_count : vq + 1;

  // A device's stream and events, shared by the parts on that device.
  struct Lane {
    int device;
    Stream stream;
    Event done, sent, applied;
    // Persistent: this device's kernel (its blocks, the first of them overall), its copies of
    // the partials and of the state, its outgoing transfers of r.
    unsigned blocks = 0, first_block = 0;
    DeviceBuffer<double> pq_board, rr_board;
    DeviceBuffer<detail::CgDeviceState> state;
    DeviceBuffer<detail::SplitCgLink<T>> links;
    explicit Lane(int d) : device(d) {}
  };

  struct PartState {
    std::size_t index = 0;
    int device = 0;
    Lane* lane = nullptr;
    const T* rhs = nullptr;  // b of this solve: `b` below, or the caller's device array
    std::int64_t owned = 0, owned_offset = 0, local_size = 0, global_first = 0;
    unsigned first_block = 0, blocks = 0, links_begin = 0, links_end = 0;  // Persistent: in its device's kernel
    const Part* op = nullptr;
    std::unique_ptr<detail::DeviceScope> scope;  // current while the members are made
    std::vector<DeviceBuffer<T>> v;
    DeviceBuffer<T> b;  // b from the host (made at the first host solve)
    DeviceBuffer<std::int64_t> indices;
    DeviceBuffer<T> staging;  // packed entries for parts on other devices
    DotWorkspace dots;
    DeviceBuffer<double> partials;
    DeviceBuffer<unsigned> arrivals;
    // The part's sums of a reduction, written by the kernels straight into pinned host memory
    // (mapped under unified addressing): no copy to issue, the host reads them after an event.
    PinnedBuffer<double> sums;

    PartState(const SplitOperator<Part>& s, std::size_t p, Lane* l)
        : index(p),
          device(s.devices[p]),
          lane(l),
          owned(s.layout.parts[p].owned),
          owned_offset(s.layout.parts[p].owned_offset),
          local_size(s.layout.parts[p].local_size),
          global_first(s.layout.parts[p].global_first),
          op(&s.parts[p]),
          scope(std::make_unique<detail::DeviceScope>(device)),
          partials(2 * detail::dot_blocks),
          arrivals(1),
          sums(4) {
      for (int i = 0; i < vectors; ++i) {
        v.emplace_back(static_cast<std::size_t>(local_size));
        RELAX_CUDA_CHECK(cudaMemsetAsync(v.back().data(), 0, v.back().bytes(), lane->stream.get()));
      }
      RELAX_CUDA_CHECK(cudaMemsetAsync(arrivals.data(), 0, sizeof(unsigned), lane->stream.get()));
      lane->stream.synchronize();
      scope.reset();
    }

    void set_indices(const std::vector<std::int64_t>& list, std::size_t staged) {
      if (list.empty()) return;
      const detail::DeviceScope on(device);
      indices = DeviceBuffer<std::int64_t>(list.size());
      if (staged > 0) staging = DeviceBuffer<T>(list.size());
      RELAX_CUDA_CHECK(cudaMemcpy(indices.data(), list.data(), indices.bytes(), cudaMemcpyHostToDevice));
      RELAX_CUDA_CHECK(cudaDeviceSynchronize());
    }

    T* owned_of(Vec which) { return v[static_cast<std::size_t>(which)].data() + owned_offset; }
    //! sums[slot] = (a, b) over the owned entries.
    void dot(const T* a, const T* bv, int slot) {
      relax::dot(owned, a, bv, sums.data() + slot, dots, lane->stream.get());
    }
  };

  // The solve after b and x are in place; `store_x(part)` queues the copy of its solution out.
  template <class StoreX>
  CgReport run(StoreX&& store_x) {
    const auto start = std::chrono::steady_clock::now();
    CgReport report;
    report.rhs_norm = std::sqrt(reduce([](PartState& p) { p.dot(p.rhs, p.rhs, 0); }));
    detail::solve_with_restarts(
        options_, report,
        [&](const StopCriterion& left, CgReport& r) {
          if constexpr (pipelined) {
            if (r.restarts == 0 && r.switched_at < 0) return run_pipelined(left, r);
          }
          if constexpr (persistent) return run_persistent(left, r);
          else return run_standard(left, r);
        },
        [&] { return true_residual_norm(); });
    each(store_x);
    for (auto& lane : lanes_) lane->stream.synchronize();
    report.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return report;
  }

  // One transfer, with where its packed entries sit in the sender's staging buffer (−1: a run).
  struct Link {
    int from, to;
    std::int64_t count, first, receive_offset, packed_at;
    bool across;  // between two devices: staged, copied, ordered by events
  };

  // Whether part p sends indexed entries to a part on another device (then it stages them).
  std::size_t staged(std::size_t p) const {
    std::size_t n = 0;
    for (const Link& l : links_)
      if (l.from == static_cast<int>(p) && l.across && l.packed_at >= 0) n += static_cast<std::size_t>(l.count);
    return n;
  }

  // Runs `launch(part)` (which writes sums[0 .. count)) on every part and returns the total of
  // sums[0] in part order; `extra` gets the totals of the others.
  template <class Launch>
  double reduce(Launch&& launch, int count = 1, double* extra = nullptr) {
    reduce_async(std::forward<Launch>(launch));
    return collect(count, extra);
  }

  // `reduce` without waiting: the host collects later, while the parts go on.
  template <class Launch>
  void reduce_async(Launch&& launch) {
    each(launch);
    for (auto& lane : lanes_) {
      const detail::DeviceScope on(lane->device);
      lane->done.record(lane->stream.get());
    }
  }

  // Waits for every part's sums (queued by `reduce_async`) and adds them in part order.
  double collect(int count, double* extra) {
    for (auto& lane : lanes_) lane->done.synchronize();
    double totals[4] = {0.0, 0.0, 0.0, 0.0};
    for (auto& part : parts_)
      for (int i = 0; i < count; ++i) totals[i] += part->sums.data()[i];
    for (int i = 1; i < count; ++i) extra[i - 1] = totals[i];
    return totals[0];
  }

  // Every part's halo of vector `which` from its neighbours. On one device the sender's stream
  // is the reader's: a gather kernel writes indexed entries straight into the reader's halo, a
  // run is one copy. Between devices the sender waits until the reader is done with its
  // previous product (which read the halo), stages indexed entries, copies them with
  // `cudaMemcpyPeerAsync`, and the reader's stream waits for the sender's.
  void exchange(Vec which) {
    for (const Link& l : links_) {
      PartState& from = *parts_[static_cast<std::size_t>(l.from)];
      PartState& to = *parts_[static_cast<std::size_t>(l.to)];
      const detail::DeviceScope on(from.device);
      const cudaStream_t stream = from.lane->stream.get();
      T* dst = to.v[static_cast<std::size_t>(which)].data() + l.receive_offset;
      if (l.across) RELAX_CUDA_CHECK(cudaStreamWaitEvent(stream, to.lane->applied.get(), 0));
      if (l.packed_at >= 0) {
        T* packed = l.across ? from.staging.data() + l.packed_at : dst;
        detail::gather_kernel<<<detail::vector_blocks(l.count), 256, 0, stream>>>(
            l.count, from.indices.data() + l.packed_at, from.owned_of(which), packed);
        RELAX_CUDA_CHECK_LAUNCH();
        if (l.across)
          RELAX_CUDA_CHECK(cudaMemcpyPeerAsync(dst, to.device, packed, from.device,
                                               static_cast<std::size_t>(l.count) * sizeof(T), stream));
      } else {
        RELAX_CUDA_CHECK(cudaMemcpyPeerAsync(dst, to.device, from.owned_of(which) + l.first, from.device,
                                             static_cast<std::size_t>(l.count) * sizeof(T), stream));
      }
    }
    if (!across_devices_) return;
    for (auto& lane : lanes_) {
      const detail::DeviceScope on(lane->device);
      lane->sent.record(lane->stream.get());
    }
    for (const Link& l : links_) {
      if (!l.across) continue;
      PartState& to = *parts_[static_cast<std::size_t>(l.to)];
      const detail::DeviceScope on(to.device);
      RELAX_CUDA_CHECK(
          cudaStreamWaitEvent(to.lane->stream.get(), parts_[static_cast<std::size_t>(l.from)]->lane->sent.get(), 0));
    }
  }

  // out = A in on every part (in's halo exchanged first).
  void apply(Vec in, Vec out) {
    exchange(in);
    for (auto& part : parts_) {
      const detail::DeviceScope on(part->device);
      part->op->apply(part->v[static_cast<std::size_t>(in)].data(), part->owned_of(out), part->lane->stream.get());
    }
    if (!across_devices_) return;
    for (auto& lane : lanes_) {
      const detail::DeviceScope on(lane->device);
      lane->applied.record(lane->stream.get());
    }
  }

  template <class F>
  void each(F&& f) {
    for (auto& part : parts_) {
      const detail::DeviceScope on(part->device);
      f(*part);
    }
  }

  static unsigned blocks(const PartState& p) { return detail::vector_blocks(p.owned); }

  // r = b − A x into `into` (and p = r with `also_p`).
  void residual(Vec into, bool also_p) {
    apply(vx, vq);
    each([&](PartState& p) {
      if (also_p)
        detail::cg_start<<<blocks(p), 256, 0, p.lane->stream.get()>>>(p.owned, p.rhs, p.owned_of(vq), p.owned_of(into),
                                                                p.owned_of(vp));
      else
        detail::cg_residual<<<blocks(p), 256, 0, p.lane->stream.get()>>>(p.owned, p.rhs, p.owned_of(vq), p.owned_of(into));
      RELAX_CUDA_CHECK_LAUNCH();
    });
  }

  double true_residual_norm() {
    residual(vr, false);
    return std::sqrt(reduce([](PartState& p) { p.dot(p.owned_of(vr), p.owned_of(vr), 0); }));
  }

  void record(CgReport& report) const {
    if (options_.record_history) report.history.push_back({report.iterations, report.relative_residual()});
  }

  // Standard CG from x until `stop` (capping this run's iterations) decides; the arithmetic of
  // `CG<Operator, Unfused>` with its scalars taken on the host from the parts' partials.
  CgStatus run_standard(const StopCriterion& stop, CgReport& report) {
    residual(vr, true);
    double rr = reduce([](PartState& p) { p.dot(p.owned_of(vr), p.owned_of(vr), 0); });
    report.residual_norm = std::sqrt(rr);
    const StopReason first = stop.decide(report.residual_norm, report.rhs_norm, 0);
    if (first != StopReason::go_on) return detail::cg_status_of(first);
    for (std::int64_t it = 1;; ++it) {
      apply(vp, vq);
      const double pq = reduce([](PartState& p) { p.dot(p.owned_of(vp), p.owned_of(vq), 0); });
      const double alpha = rr / pq;
      if (!(pq > 0.0) || !std::isfinite(alpha))  // `cg_axpy`'s decision
        return std::isfinite(rr) && std::isfinite(pq) ? CgStatus::breakdown : CgStatus::non_finite;
      const T step = static_cast<T>(alpha), minus_step = static_cast<T>(-alpha);
      const double rr_next = reduce([&](PartState& p) {
        detail::split_cg_step<<<detail::dot_blocks, detail::dot_block, 0, p.lane->stream.get()>>>(
            p.owned, step, minus_step, p.owned_of(vp), p.owned_of(vq), p.owned_of(vx), p.owned_of(vr),
            p.dots.partials(), p.dots.arrivals(), p.sums.data());
        RELAX_CUDA_CHECK_LAUNCH();
      });
      ++report.iterations;
      const double beta = rr > 0.0 ? rr_next / rr : 0.0;
      if (!std::isfinite(rr_next) || !std::isfinite(beta)) return CgStatus::non_finite;
      each([&](PartState& p) {
        detail::split_cg_xpay<<<blocks(p), 256, 0, p.lane->stream.get()>>>(p.owned, static_cast<T>(beta), p.owned_of(vr),
                                                                     p.owned_of(vp));
        RELAX_CUDA_CHECK_LAUNCH();
      });
      rr = rr_next;
      if (it % options_.check_interval != 0 && it < stop.max_count) continue;
      report.residual_norm = std::sqrt(rr);
      record(report);
      const StopReason d = stop.decide(report.residual_norm, report.rhs_norm, it);
      if (d != StopReason::go_on) return detail::cg_status_of(d);
    }
  }

  // Pipelined's checkpoint (`reference::detail::pipelined_checkpoint`, the same decision): true
  // where the gap between b − A x and r exceeds the bound; otherwise, with `replace`, r = b − A x,
  // w = A r, s = A p, z = A s.
  bool checkpoint(std::int64_t since, bool replace, double& norm_a, double rhs_norm) {
    apply(vx, vq);
    double rest[3] = {0.0, 0.0, 0.0};
    const double gap2 = reduce(
        [](PartState& p) {
          detail::split_residual_gap<<<detail::dot_blocks, detail::dot_block, 0, p.lane->stream.get()>>>(
              p.owned, p.rhs, p.owned_of(vq), p.owned_of(vt), p.owned_of(vr), p.partials.data(),
              p.arrivals.data(), p.sums.data());
          RELAX_CUDA_CHECK_LAUNCH();
          p.dot(p.owned_of(vr), p.owned_of(vr), 1);
          p.dot(p.owned_of(vw), p.owned_of(vw), 2);
          p.dot(p.owned_of(vx), p.owned_of(vx), 3);
        },
        4, rest);
    const double rr = rest[0], ww = rest[1], xx = rest[2];
    if (rr > 0.0) norm_a = std::max(norm_a, std::sqrt(ww / rr));
    if (detail::pipelined_gap_exceeds(std::sqrt(gap2), since, norm_a, std::sqrt(xx), rhs_norm,
                                      std::numeric_limits<T>::epsilon(), options_.switch_gap))
      return true;
    if (!replace) return false;
    each([&](PartState& p) {
      RELAX_CUDA_CHECK(cudaMemcpyAsync(p.owned_of(vr), p.owned_of(vt), static_cast<std::size_t>(p.owned) * sizeof(T),
                                       cudaMemcpyDeviceToDevice, p.lane->stream.get()));
    });
    apply(vr, vw);
    apply(vp, vs);
    apply(vs, vz);
    return false;
  }

  // One run of pipelined CG from x: `reference::detail::cg_pipelined_run`'s rules, the
  // reduction of (r, r) and (w, r) on its way to the host while m = A w is computed.
  CgStatus run_pipelined(const StopCriterion& stop, CgReport& report) {
    const std::int64_t replace =
        options_.replace_interval > 0 ? options_.replace_interval : (sizeof(T) >= 8 ? 50 : 10);
    const double replace_below = options_.replace_until_for(sizeof(T)) * options_.threshold(report.rhs_norm);
    auto switch_to_standard = [&](std::int64_t it) {
      report.switched_at = report.iterations;
      StopCriterion rest = stop;
      rest.max_count = stop.max_count - it;
      return run_standard(rest, report);
    };
    residual(vr, false);
    apply(vr, vw);
    double gamma_prev = 0.0, alpha_prev = 0.0, norm_a = 0.0;
    std::int64_t exact_at = 0;
    bool replacing = true;
    for (std::int64_t it = 0;; ++it) {
      if (it > 0 && it % replace == 0) {
        if (checkpoint(it - exact_at, replacing, norm_a, report.rhs_norm)) return switch_to_standard(it);
        if (replacing) exact_at = it;
      }
      reduce_async([](PartState& p) {
        detail::split_dot2<<<detail::dot_blocks, detail::dot_block, 0, p.lane->stream.get()>>>(
            p.owned, p.owned_of(vr), p.owned_of(vw), p.partials.data(), p.arrivals.data(), p.sums.data());
        RELAX_CUDA_CHECK_LAUNCH();
      });
      apply(vw, vm);  // overlaps the reduction's trip to the host
      double delta = 0.0;
      const double gamma = collect(2, &delta);
      replacing = replacing && std::sqrt(gamma) > replace_below;
      if (!std::isfinite(gamma) || !std::isfinite(delta)) return CgStatus::non_finite;
      report.residual_norm = std::sqrt(gamma);
      if (options_.record_history && it > 0 && it % options_.check_interval == 0) record(report);
      const StopReason decided = stop.decide(report.residual_norm, report.rhs_norm, it);
      if (decided != StopReason::go_on) return detail::cg_status_of(decided);
      const bool first = it == 0;
      const double beta = first ? 0.0 : gamma / gamma_prev;
      const double eta = first ? delta : delta - beta * gamma / alpha_prev;
      if (!std::isfinite(eta) || !std::isfinite(beta)) return CgStatus::non_finite;
      const T be = static_cast<T>(beta);
      if (!(eta > 0.0)) {
        each([&](PartState& p) {
          detail::split_direction<<<blocks(p), 256, 0, p.lane->stream.get()>>>(p.owned, first, be, p.owned_of(vr),
                                                                         p.owned_of(vp), p.owned_of(vt));
          RELAX_CUDA_CHECK_LAUNCH();
        });
        apply(vt, vq);
        const double pq = reduce([](PartState& p) { p.dot(p.owned_of(vt), p.owned_of(vq), 0); });
        if (!std::isfinite(pq)) return CgStatus::non_finite;
        if (pq <= 0.0) return CgStatus::breakdown;
        return switch_to_standard(it);
      }
      const double alpha = gamma / eta;
      if (!std::isfinite(alpha)) return CgStatus::non_finite;
      const T a = static_cast<T>(alpha);
      each([&](PartState& p) {
        detail::split_pipelined_update<<<blocks(p), 256, 0, p.lane->stream.get()>>>(
            p.owned, first, a, be, p.owned_of(vm), p.owned_of(vz), p.owned_of(vs), p.owned_of(vp), p.owned_of(vx),
            p.owned_of(vr), p.owned_of(vw));
        RELAX_CUDA_CHECK_LAUNCH();
      });
      gamma_prev = gamma;
      alpha_prev = alpha;
      ++report.iterations;
    }
  }

  using Rows = typename Part::rows_type;
  using Table = detail::SplitCgTable<T, Rows>;

  // The kernel for barriers of `scope` (the system's when the parts span several devices).
  static const void* persistent_kernel(bool system) {
    if (system)
      return reinterpret_cast<const void*>(&detail::split_cg_persistent<T, Rows, cuda::thread_scope_system>);
    return reinterpret_cast<const void*>(&detail::split_cg_persistent<T, Rows, cuda::thread_scope_device>);
  }

  // Each device's grid: as many blocks as its parts fill with `cg_persistent_points_per_thread`
  // points a thread (as the single-GPU persistent CG sizes its grid), at least one per SM, at
  // most what the occupancy allows, shared among its parts by their sizes (each at least one);
  // fixed for a given split and device, so the sums are reproducible. Boards, states, the
  // barrier and the transfers of r are made here; devices reach each other's memory by peer
  // access.
  void prepare_persistent() {
    const bool system = lanes_.size() > 1;
    if (lanes_.size() > static_cast<std::size_t>(detail::split_cg_max_devices))
      throw invalid_argument("devices", std::to_string(lanes_.size()),
                             "at most " + std::to_string(detail::split_cg_max_devices) +
                                 " distinct devices for the CPU-free CG (relax::Persistent)");
    unsigned total = 0;
    for (auto& lane : lanes_) {
      const detail::DeviceScope on(lane->device);
      int cooperative = 0, per_sm = 0;
      RELAX_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, lane->device));
      if (!cooperative)
        throw unavailable_error("relax::MultiCG<Part, Persistent> needs cooperative launch, which device " +
                                std::to_string(lane->device) + " does not support; use relax::Unfused");
      // The occupancy query loads the kernel: nothing loads lazily once the kernels wait on each other.
      RELAX_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persistent_kernel(system), detail::dot_block, 0));
      int sms = 0;
      RELAX_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, lane->device));
      const std::int64_t cap = std::int64_t{per_sm} * sms;
      std::vector<PartState*> mine;
      std::int64_t wanted = 0;
      for (auto& part : parts_)
        if (part->lane == lane.get()) {
          mine.push_back(part.get());
          wanted += detail::tile_count(part->owned, std::int64_t{detail::dot_block} * tuning::cg_persistent_points_per_thread);
        }
      if (mine.size() > static_cast<std::size_t>(detail::split_cg_max_parts) || static_cast<std::int64_t>(mine.size()) > cap)
        throw invalid_argument("devices", std::to_string(mine.size()) + " parts on device " + std::to_string(lane->device),
                               "at most " + std::to_string(std::min<std::int64_t>(detail::split_cg_max_parts, cap)) +
                                   " parts per device for the CPU-free CG (relax::Persistent)");
      const std::int64_t blocks = std::clamp<std::int64_t>(wanted, std::min<std::int64_t>(sms, cap), cap);
      std::vector<std::int64_t> sizes;
      for (const PartState* part : mine) sizes.push_back(part->owned);
      const std::vector<BlockShare> shares = share_blocks(sizes, blocks);
      for (std::size_t i = 0; i < mine.size(); ++i) {
        mine[i]->first_block = static_cast<unsigned>(shares[i].first);
        mine[i]->blocks = static_cast<unsigned>(shares[i].count);
      }
      lane->blocks = static_cast<unsigned>(blocks);
      lane->first_block = total;
      total += lane->blocks;
    }
    total_blocks_ = total;
    for (auto& lane : lanes_) {
      const detail::DeviceScope on(lane->device);
      lane->pq_board = DeviceBuffer<double>(total);
      lane->rr_board = DeviceBuffer<double>(total);
      lane->state = DeviceBuffer<detail::CgDeviceState>(1);
      for (auto& other : lanes_) {
        if (other->device == lane->device) continue;
        int can = 0;
        RELAX_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, lane->device, other->device));
        if (!can)
          throw unavailable_error("relax::MultiCG<Part, Persistent>: device " + std::to_string(lane->device) +
                                  " cannot access device " + std::to_string(other->device) +
                                  "'s memory (peer access); use relax::Unfused");
        const cudaError_t e = cudaDeviceEnablePeerAccess(other->device, 0);
        if (e != cudaErrorPeerAccessAlreadyEnabled) RELAX_CUDA_CHECK(e);
        (void)cudaGetLastError();
      }
    }
    {
      const detail::DeviceScope on(lanes_.front()->device);
      barrier_ = DeviceBuffer<detail::GridBarrierState>(1);
    }
    // Each device's outgoing transfers of r, grouped by sending part.
    for (auto& lane : lanes_) {
      std::vector<detail::SplitCgLink<T>> list;
      for (auto& part : parts_) {
        if (part->lane != lane.get()) continue;
        part->links_begin = static_cast<unsigned>(list.size());
        for (const Link& l : links_) {
          if (l.from != static_cast<int>(part->index)) continue;
          PartState& to = *parts_[static_cast<std::size_t>(l.to)];
          detail::SplitCgLink<T> link;
          link.indices = l.packed_at >= 0 ? part->indices.data() + l.packed_at : nullptr;
          link.first = l.first;
          link.count = l.count;
          link.dst[0] = to.v[vr].data() + l.receive_offset;
          link.dst[1] = to.v[vw].data() + l.receive_offset;
          list.push_back(link);
        }
        part->links_end = static_cast<unsigned>(list.size());
      }
      if (list.empty()) continue;
      const detail::DeviceScope on(lane->device);
      lane->links = DeviceBuffer<detail::SplitCgLink<T>>(list.size());
      RELAX_CUDA_CHECK(cudaMemcpy(lane->links.data(), list.data(), lane->links.bytes(), cudaMemcpyHostToDevice));
    }
  }

  Table table_of(Lane& lane) {
    Table t;
    for (auto& part : parts_) {
      if (part->lane != &lane) continue;
      detail::SplitCgPart<T, Rows>& e = t.parts[t.count++];
      e.rows = part->op->rows();
      e.owned = part->owned;
      e.offset = part->owned_offset;
      e.local_size = part->local_size;
      e.x = part->v[vx].data();
      e.r[0] = part->v[vr].data();  // the r the start leaves
      e.r[1] = part->v[vw].data();
      e.p[0] = part->v[vp].data();
      e.p[1] = part->v[vs].data();
      e.q = part->owned_of(vq);
      e.first_block = part->first_block;
      e.blocks = part->blocks;
      e.links_begin = part->links_begin;
      e.links_end = part->links_end;
    }
    t.links = lane.links.data();
    for (auto& other : lanes_) {
      if (other.get() == &lane) t.home = t.boards;
      t.pq_boards[t.boards] = other->pq_board.data();
      t.rr_boards[t.boards++] = other->rr_board.data();
    }
    t.total_blocks = total_blocks_;
    t.first_block = lane.first_block;
    t.state = lane.state.data();
    return t;
  }

  // CPU-free standard CG from x until `stop` decides: the host forms r = p = b − A x and their
  // halos, then one kernel per device runs every iteration (multi/cg_kernels.cuh); the host
  // reads the outcome.
  CgStatus run_persistent(const StopCriterion& stop, CgReport& report) {
    residual(vr, true);
    exchange(vr);
    exchange(vp);
    const double rr0 = reduce([](PartState& p) { p.dot(p.owned_of(vr), p.owned_of(vr), 0); });
    report.residual_norm = std::sqrt(rr0);
    const StopReason first = stop.decide(report.residual_norm, report.rhs_norm, 0);
    if (first != StopReason::go_on) return detail::cg_status_of(first);
    detail::CgDeviceState& h = host_state_.data()[0];
    h = detail::CgDeviceState{};
    h.rr = h.rr_prev = rr0;
    h.rhs_norm = report.rhs_norm;
    h.stop = stop;
    const bool system = lanes_.size() > 1;
    {
      const detail::DeviceScope on(lanes_.front()->device);
      RELAX_CUDA_CHECK(cudaMemsetAsync(barrier_.data(), 0, sizeof(detail::GridBarrierState), lanes_.front()->stream.get()));
    }
    for (auto& lane : lanes_) {
      const detail::DeviceScope on(lane->device);
      RELAX_CUDA_CHECK(cudaMemcpyAsync(lane->state.data(), &h, sizeof(h), cudaMemcpyHostToDevice, lane->stream.get()));
    }
    for (auto& lane : lanes_) lane->stream.synchronize();  // every device ready before any kernel waits
    for (auto& lane : lanes_) {
      const detail::DeviceScope on(lane->device);
      Table t = table_of(*lane);
      const unsigned all = total_blocks_ + absent_blocks_;
      if (system) {
        detail::BasicGridBarrier<cuda::thread_scope_system> b{barrier_.data(), all, timeout_ns_, lane->first_block};
        void* args[] = {&t, &b};
        RELAX_CUDA_CHECK(cudaLaunchCooperativeKernel(persistent_kernel(true), dim3(lane->blocks), dim3(detail::dot_block),
                                                     args, 0, lane->stream.get()));
      } else {
        detail::GridBarrier b{barrier_.data(), all, timeout_ns_, lane->first_block};
        void* args[] = {&t, &b};
        RELAX_CUDA_CHECK(cudaLaunchCooperativeKernel(persistent_kernel(false), dim3(lane->blocks), dim3(detail::dot_block),
                                                     args, 0, lane->stream.get()));
      }
    }
    {
      Lane& home = *lanes_.front();
      const detail::DeviceScope on(home.device);
      RELAX_CUDA_CHECK(cudaMemcpyAsync(&h, home.state.data(), sizeof(h), cudaMemcpyDeviceToHost, home.stream.get()));
      RELAX_CUDA_CHECK(cudaMemcpyAsync(host_barrier_.data(), barrier_.data(), sizeof(detail::GridBarrierState),
                                       cudaMemcpyDeviceToHost, home.stream.get()));
    }
    for (auto& lane : lanes_) lane->stream.synchronize();
    if (host_barrier_.data()[0].failed != 0)
      throw device_loop_error("split_cg_persistent: a grid barrier did not complete within " +
                              std::to_string(timeout_ns_ / 1'000'000) +
                              " ms (are all blocks of every device's cooperative grid resident? another kernel may be "
                              "holding SMs)");
    report.iterations += h.iterations;
    report.residual_norm = std::sqrt(h.rr);
    if (options_.record_history) record(report);
    if (h.status == detail::cg_breakdown) return CgStatus::breakdown;
    if (h.status == detail::cg_non_finite) return CgStatus::non_finite;
    const StopReason d = stop.decide(report.residual_norm, report.rhs_norm, h.iterations);
    return d == StopReason::go_on ? CgStatus::iteration_cap : detail::cg_status_of(d);
  }

  SplitOperator<Part> op_;
  CgOptions options_;
  std::vector<std::unique_ptr<Lane>> lanes_;  // before the parts: they point to them
  std::vector<std::unique_ptr<PartState>> parts_;
  std::vector<Link> links_;
  bool across_devices_ = false;  // some transfer goes between two devices
  // Persistent.
  unsigned total_blocks_ = 0;
  DeviceBuffer<detail::GridBarrierState> barrier_;  // on the first device
  PinnedBuffer<detail::CgDeviceState> host_state_{1};
  PinnedBuffer<detail::GridBarrierState> host_barrier_{1};
  static constexpr std::uint64_t default_timeout_ns = 20'000'000'000ull;  // 20 s: an iteration takes µs
  unsigned absent_blocks_ = 0;  // test hook
  std::uint64_t timeout_ns_ = default_timeout_ns;
};

}  // namespace relax
