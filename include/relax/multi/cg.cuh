#pragma once
//! \file
//! `relax::MultiCG<Part, Variant, Comm>`: CG on k sub-domains (a `SplitOperator`: a CSR split by
//! rows or a stencil's box split into slabs), part p on its own device, one process; several parts
//! may share a GPU. `Unfused` and `Pipelined` are host-controlled, the CPU-controlled baselines
//! of the CPU-free study (`Persistent` and `PersistentPipelined`, below, are the CPU-free solvers):
//! the host enqueues every operation on its device's stream (parts on one device share it, and
//! each step of theirs is one launch: the part on blockIdx.y, `MultiCG::batched`), moves the
//! halos and takes every global reduction itself. With `HostCopy` (the default) a gather
//! kernel writes the neighbour's halo on one device, staged entries go between devices by
//! `cudaMemcpyPeerAsync` ordered by events, and the kernels write each part's partial sums into
//! pinned host memory, which the host adds in part order once the devices are done. With `Nccl`
//! (`multi/cg_nccl.cuh`) the staged entries go in one NCCL group of sends and receives, and every
//! GPU all-gathers the parts' sums and adds them in part order itself (the host's order: the same
//! bits).
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
//!   reads the outcome.
//! - `PersistentPipelined`: pipelined CG, CPU-free: `Pipelined`'s loop in one kernel per device,
//!   one barrier an iteration (the reduction of (r, r) and (w, r) travels with w's halo), from
//!   one checkpoint to the next; the host takes each checkpoint (every `replace_interval`
//!   iterations: 50 in double, 10 in float), the switch to standard CG (then `Persistent`'s
//!   kernel) and restarts, and relaunches.
//! The CPU-free variants take `PeerStore` (the default for them; or `Nvshmem` or `Nccl`, below): they need
//! cooperative launch, at most 8 parts a device, and peer access between the devices. Their kernels apply CSR rows a
//! warp per row where every part's rows hold 16 entries or more on average
//! (`CsrPartOperator::warp_rows`, the choice `csr_spmv` makes), a thread per row otherwise.
//!
//! Reductions are reproducible: each part's partial is `relax::dot`'s deterministic sum over its
//! owned entries, and the host adds the partials in part order, so for a given k a solve repeats
//! bit for bit and every part uses the same scalars; no floating-point atomics. With one part,
//! `MultiCG<..., Unfused>` computes what `CG<CsrOperator<T>, Unfused>` (or the stencil's
//! operator) computes, bit for bit, checking every iteration, and `MultiCG<..., Persistent>`
//! what `CG<..., Persistent>` computes on the same grid (for rows a thread applies: the
//! single-domain kernel has no warp rows). With more parts the sums round differently, so
//! iteration counts differ from k = 1 by a few.
//!
//! Stopping and reports are single-GPU CG's (`CgOptions`, `CgReport`): the criterion on the
//! recurrence residual at every `check_interval` (the pipelined variants: every iteration, as
//! their reference), the cap, breakdown and non-finite statuses, the true residual ‖b − A x‖₂ at
//! the end, `residual_gap` and restarts. `PersistentPipelined` records history at each launch's
//! end only.
//!
//! One process per GPU: `Nccl` with the program's communicator (`multi/cg_nccl.cuh`), or
//! `Nvshmem`, one PE per GPU (`multi/cg_nvshmem.cuh`), each process holding its rank's parts
//! (`split_csr_of_rank`, `split_stencil_of_rank`). Both run the host-controlled variants and,
//! within one node, the CPU-free ones (their kernels reach the other processes' memory through
//! NVSHMEM's mapping, or through the LSA pointers of NCCL's symmetric windows where NCCL's device
//! API is found).

#include <relax/control/cg_report.hpp>
#include <relax/control/stop.hpp>
#include <relax/core/buffer.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/core/device_scope.hpp>
#include <relax/core/error.hpp>
#include <relax/core/stream.hpp>
#include <relax/multi/cg_kernels.cuh>
#include <relax/multi/comm.hpp>
#include <relax/multi/split_operator.cuh>
#include <relax/primitives/cg_updates.cuh>
#include <relax/primitives/reduce.cuh>
#include <relax/solver/cg.cuh>
#include <relax/strategy/tuning.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace relax {

namespace detail {

//! One part's share of a batched launch of the host-controlled split CG: its owned entries, N of
//! its vectors (each from its first owned entry), its reduction scratch (2 × `dot_blocks`
//! partials, an arrival counter) and where its sums go.
template <class T, int N>
struct PartSlice {
  std::int64_t n = 0;
  T* v[N] = {};
  double* partials = nullptr;
  unsigned* arrivals = nullptr;
  double* out = nullptr;
};

//! The parts of one device in one launch: part i runs on the blocks (·, i), each of them a grid
//! of its own in x, so a part's arithmetic (its grid-stride loops and its reduction order) does
//! not depend on the others.
template <class T, int N>
struct PartSlices {
  PartSlice<T, N> part[batch_parts];
};

//! One halo transfer of a batched gather: dst[e] = src[indices[e]], or dst[e] = src[e] for a
//! run (no indices).
template <class T>
struct GatherJob {
  std::int64_t count = 0;
  const std::int64_t* indices = nullptr;
  const T* src = nullptr;
  T* dst = nullptr;
};
template <class T>
struct GatherJobs {
  GatherJob<T> job[batch_parts];
};

//! Every transfer of a batch (transfer blockIdx.y), its entries packed in the order both sides
//! agree on.
template <class T>
__global__ void gather_kernel(GatherJobs<T> jobs) {
  const GatherJob<T>& j = jobs.job[blockIdx.y];
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < j.count; e += stride)
    j.dst[e] = j.indices ? j.src[j.indices[e]] : j.src[e];
}

//! *out = Σ a·b over the part's entries, `relax::dot`'s arithmetic (same grid, same order).
//! Launch: `dot_blocks` × `dot_block` per part.
template <class T>
__global__ void __launch_bounds__(dot_block) split_dot(PartSlices<T, 2> parts) {
  const PartSlice<T, 2>& s = parts.part[blockIdx.y];
  const T* __restrict__ a = s.v[0];
  const T* __restrict__ b = s.v[1];
  double sum = 0.0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < s.n; k += stride)
    sum += static_cast<double>(a[k]) * static_cast<double>(b[k]);
  finish_dot(block_sum(sum), s.partials, s.arrivals, s.out);
}

//! *out = the number of the part's entries that are not 0 (as a double, summed as `split_dot`
//! sums). Launch: `dot_blocks` × `dot_block` per part.
template <class T>
__global__ void __launch_bounds__(dot_block) split_count_nonzero(PartSlices<T, 1> parts) {
  const PartSlice<T, 1>& s = parts.part[blockIdx.y];
  const T* __restrict__ v = s.v[0];
  double count = 0.0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < s.n; k += stride)
    count += v[k] != T(0) ? 1.0 : 0.0;
  finish_dot(block_sum(count), s.partials, s.arrivals, s.out);
}

//! x += step · p and r += minus_step · q (two `cg_axpy`s' arithmetic), and Σ r·r of the new r
//! summed as `relax::dot` sums it into `*out`. Vectors p, q, x, r. Launch: `dot_blocks` ×
//! `dot_block` per part.
template <class T>
__global__ void __launch_bounds__(dot_block) split_cg_step(PartSlices<T, 4> parts, T step, T minus_step) {
  const PartSlice<T, 4>& s = parts.part[blockIdx.y];
  const T* __restrict__ p = s.v[0];
  const T* __restrict__ q = s.v[1];
  T* __restrict__ x = s.v[2];
  T* __restrict__ r = s.v[3];
  double sum = 0.0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < s.n; k += stride) {
    x[k] += step * p[k];
    const T rk = r[k] + minus_step * q[k];
    r[k] = rk;
    sum += static_cast<double>(rk) * static_cast<double>(rk);
  }
  finish_dot(block_sum(sum), s.partials, s.arrivals, s.out);
}

//! p = r + b · p (`cg_xpay`'s arithmetic), b given. Vectors r, p.
template <class T>
__global__ void split_cg_xpay(PartSlices<T, 2> parts, T b) {
  const PartSlice<T, 2>& s = parts.part[blockIdx.y];
  xpay_range(s.n, b, s.v[0], s.v[1]);
}

//! out[0] = (r, r) and out[1] = (w, r) in one pass, deterministic. Vectors r, w. Launch:
//! `dot_blocks` × `dot_block` per part.
template <class T>
__global__ void __launch_bounds__(dot_block) split_dot2(PartSlices<T, 2> parts) {
  const PartSlice<T, 2>& s = parts.part[blockIdx.y];
  const T* __restrict__ r = s.v[0];
  const T* __restrict__ w = s.v[1];
  SumPair v;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < s.n; k += stride) {
    const double rk = static_cast<double>(r[k]);
    v.first += rk * rk;
    v.second += static_cast<double>(w[k]) * rk;
  }
  const SumPair sums = block_sum2(v);
  double* out = s.out;
  finish_sums2(sums.first, sums.second, s.partials, s.arrivals, [out](double a, double b) {
    out[0] = a;
    out[1] = b;
  });
}

//! Pipelined CG's update (`reference::cg_pipelined`'s loop): z = m + β z, s = w + β s,
//! p = r + β p (on the first iteration z = m, s = w, p = r), x += α p, r −= α s, w −= α z.
//! Vectors m, z, s, p, x, r, w.
template <class T>
__global__ void split_pipelined_update(PartSlices<T, 7> parts, bool first, T a, T be) {
  const PartSlice<T, 7>& part = parts.part[blockIdx.y];
  const T* __restrict__ m = part.v[0];
  T* __restrict__ z = part.v[1];
  T* __restrict__ s = part.v[2];
  T* __restrict__ p = part.v[3];
  T* __restrict__ x = part.v[4];
  T* __restrict__ r = part.v[5];
  T* __restrict__ w = part.v[6];
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < part.n; k += stride) {
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

//! t = b − ax and Σ (t − r)² in double (Pipelined's checkpoint gap), deterministic. Vectors b,
//! ax, t, r. Launch: `dot_blocks` × `dot_block` per part.
template <class T>
__global__ void __launch_bounds__(dot_block) split_residual_gap(PartSlices<T, 4> parts) {
  const PartSlice<T, 4>& s = parts.part[blockIdx.y];
  const T* __restrict__ b = s.v[0];
  const T* __restrict__ ax = s.v[1];
  T* __restrict__ t = s.v[2];
  const T* __restrict__ r = s.v[3];
  double sum = 0.0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < s.n; k += stride) {
    const T tk = b[k] - ax[k];
    t[k] = tk;
    const double d = static_cast<double>(tk) - static_cast<double>(r[k]);
    sum += d * d;
  }
  finish_dot(block_sum(sum), s.partials, s.arrivals, s.out);
}

//! t = r + β p (t = r on the first iteration): the direction whose pᵀAp Pipelined computes
//! directly after a recurrence gave η ≤ 0. Vectors r, p, t.
template <class T>
__global__ void split_direction(PartSlices<T, 3> parts, bool first, T be) {
  const PartSlice<T, 3>& s = parts.part[blockIdx.y];
  const T* __restrict__ r = s.v[0];
  const T* __restrict__ p = s.v[1];
  T* __restrict__ t = s.v[2];
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < s.n; k += stride)
    t[k] = first ? r[k] : r[k] + be * p[k];
}

//! Σ over the parts, in part order, of each of a part's four sums: `gathered` holds every
//! rank's parts' sums (4 each), `order[p]` is part p's entry among them. One block of 4 threads.
__global__ inline void split_add_parts(const double* __restrict__ gathered, const int* __restrict__ order, int parts,
                                       double* __restrict__ totals) {
  if (threadIdx.x >= 4) return;
  double sum = 0.0;
  for (int p = 0; p < parts; ++p) sum += gathered[4 * order[p] + static_cast<int>(threadIdx.x)];
  totals[threadIdx.x] = sum;
}

//! How `MultiCG`'s host-controlled variants with Comm policy `Comm` move halos between devices
//! and add the parts' sums. This primary template is `HostCopy`'s (and the CPU-free variants'
//! `PeerStore`): nothing to hold, `MultiCG` copies with `cudaMemcpyPeerAsync` and adds the sums
//! on the host. A collective Comm (`Nccl`, `multi/cg_nccl.cuh`; `Nvshmem`,
//! `multi/cg_nvshmem.cuh`) specialises it with `is_split_collective` and this interface:
//! `program()`, `ranks()`, `rank()`; `agree(error, step)` (every rank learns whether one failed a
//! step, and all throw); `buffer<T>(n)` (memory the collectives may use); `prepare_halos(in, out)`
//! (the bytes of the largest inbox and outbox of any rank, before the first exchange);
//! `exchange_group(stream, f)` around one exchange's `send` and `receive` calls, each naming the
//! transfer's slot in the reader's inbox (where a one-sided transport puts it); `group(f)` around
//! `all_gather`s.
template <class Comm>
struct SplitTransport {
  SplitTransport(const std::vector<int>&, const Comm&) {}
};
template <class Comm>
struct is_split_collective : std::false_type {};
//! Whether the CPU-free variants run over Comm: `PeerStore` (one process); `Nvshmem`
//! (`multi/cg_nvshmem.cuh`: one PE per GPU, the vectors, boards and barrier in its symmetric
//! heap) and `Nccl` with NCCL's device API (`multi/cg_nccl.cuh`: one GPU per process, the same in
//! NCCL's symmetric windows), reached through `SplitTransport::shared`, `peer`, `barrier` and
//! `gather_words`.
template <class Comm>
struct is_split_cpu_free : std::is_same<Comm, PeerStore> {};

}  // namespace detail

//! `MultiCG`'s CPU-free pipelined CG: one cooperative kernel per device, one grid barrier an
//! iteration (`detail::split_cg_pipelined`).
struct PersistentPipelined {};

namespace detail {
template <class Variant>
using split_default_comm = std::conditional_t<std::is_same_v<Variant, Persistent> || std::is_same_v<Variant, PersistentPipelined>,
                                              PeerStore, HostCopy>;
}  // namespace detail

template <class Part, class Variant = Unfused, class Comm = detail::split_default_comm<Variant>>
class MultiCG {
  static_assert(std::is_same_v<Variant, Unfused> || std::is_same_v<Variant, Pipelined> ||
                    std::is_same_v<Variant, Persistent> || std::is_same_v<Variant, PersistentPipelined>,
                "relax::MultiCG<Part, Variant>: the variants are relax::Unfused (standard CG) and relax::Pipelined, "
                "host-controlled, and relax::Persistent (standard CG) and relax::PersistentPipelined, CPU-free");
  static constexpr bool host_pipelined = std::is_same_v<Variant, Pipelined>;
  static constexpr bool cpu_free_pipelined = std::is_same_v<Variant, PersistentPipelined>;
  static constexpr bool pipelined = host_pipelined || cpu_free_pipelined;  // pipelined CG's recurrences
  static constexpr bool persistent = std::is_same_v<Variant, Persistent> || cpu_free_pipelined;  // CPU-free
  static constexpr bool collective = detail::is_split_collective<Comm>::value;  // Nccl, Nvshmem
  // CPU-free over a Comm of one process per GPU (Nvshmem): the kernels reach the other PEs'
  // vectors, boards and barrier in their symmetric heaps.
  static constexpr bool symmetric = persistent && collective;
  static_assert(persistent ? detail::is_split_cpu_free<Comm>::value : (std::is_same_v<Comm, HostCopy> || collective),
                "relax::MultiCG<Part, Variant, Comm>: the host-controlled variants take relax::HostCopy, relax::Nccl "
                "(include relax/multi/cg_nccl.cuh) or relax::Nvshmem (relax/multi/cg_nvshmem.cuh), the CPU-free ones "
                "relax::PeerStore, relax::Nvshmem or relax::Nccl (where NCCL's device API, nccl_device.h, is found)");

 public:
  using value_type = typename Part::value_type;
  using T = value_type;

  //! A solver on `op`'s parts; every part's vectors are allocated on its device.
  //! With `Nccl`, one communicator of one rank per device of `op` (parts on one device share its
  //! rank), or with `Nccl::comm` the program's: this process is its rank r of R, `op` holds rank
  //! r's parts (`split_csr_of_rank(..., R, r, its device)`), and every process constructs and
  //! solves together.
  //! The CPU-free variants bound every wait by the Comm's `timeout_ns`.
  //! \throws relax::invalid_argument for bad options, a Comm setting MultiCG does not honour
  //!         (`detail::SplitCgSettings`), or a split that holds only some parts without the
  //!         program's communicator of the rank that holds them;
  //!         relax::unavailable_error without a GPU.
  MultiCG(SplitOperator<Part> op, CgOptions options = {}, Comm comm = {})
      : op_(std::move(op)), options_((options.validate(), options)), comm_timeout_ns_(detail::SplitCgSettings<Comm>::read(comm)) {
    if (device_count() == 0)
      throw unavailable_error("relax::MultiCG needs a CUDA device and none is present; use relax::reference::cg_split");
    op_.layout.validate();
    detail::require(op_.devices.size() == op_.parts.size() && op_.size() >= 1 && op_.first_held >= 0 &&
                        op_.first_held + op_.size() <= op_.total(),
                    "split operator", op_.parts.size(), "one device per held part, the parts held among the layout's");
    first_held_ = op_.first_held;
    // One stream per device, shared by the parts on it: their work is ordered by the stream
    // itself, and only transfers between devices need events.
    std::vector<int> lane_devices;
    for (int device : op_.devices)
      if (std::find(lane_devices.begin(), lane_devices.end(), device) == lane_devices.end()) {
        const detail::DeviceScope on(device);
        lanes_.push_back(std::make_unique<Lane>(device));
        lanes_.back()->rank = static_cast<int>(lane_devices.size());
        lane_devices.push_back(device);
      }
    transport_ = std::make_unique<detail::SplitTransport<Comm>>(lane_devices, comm);
    bool program = false;  // the program's communicator: this process one rank of several
    if constexpr (collective) program = transport_->program();
    check_together("to construct its solver", [&] {
      if constexpr (symmetric)
        detail::require(op_.total() % transport_->ranks() == 0, "split operator", op_.total(),
                        ("parts of the CPU-free CG over relax::Nvshmem: as many on every PE, so a multiple of the " +
                         std::to_string(transport_->ranks()) + " PEs")
                            .c_str());
      if constexpr (collective) {
        if (program) {
          lanes_.front()->rank = transport_->rank();
          const RankParts mine = rank_parts(op_.total(), transport_->ranks(), transport_->rank());
          detail::require(mine.first == op_.first_held && mine.count == op_.size(), "split operator", op_.first_held,
                          ("rank " + std::to_string(transport_->rank()) + "'s parts of " + std::to_string(op_.total()) +
                           " (split_csr_of_rank or split_stencil_of_rank with the communicator's ranks)")
                              .c_str());
          return;
        }
      }
      detail::require(op_.whole(), "split operator", op_.size(),
                      "every part of the split (one rank's parts need the program's communicator: relax::Nccl::comm, "
                      "or relax::Nvshmem)");
    });
    // The parts' local vectors: in the symmetric heap for the CPU-free CG over Nvshmem, every
    // PE's the same size (the largest part's), so part j of every PE has the same address there.
    std::int64_t largest = 0;
    for (const PartLayout& l : op_.layout.parts) largest = std::max(largest, l.local_size);
    for (std::size_t p = 0; p < op_.parts.size(); ++p) {
      Lane* lane = nullptr;
      for (auto& l : lanes_)
        if (l->device == op_.devices[p]) lane = l.get();
      parts_.push_back(std::make_unique<PartState>(op_, p, lane, [&](std::int64_t size) {
        if constexpr (symmetric) return transport_->template shared<T>(static_cast<std::size_t>(largest));
        else return DeviceBuffer<T>(static_cast<std::size_t>(size));
      }));
      lane->parts.push_back(parts_.back().get());
    }
    if constexpr (collective) prepare_collective_sums();
    // Each held sender's indexed transfers: their indices one after another, packed into staging.
    // A transfer between this process and another (a rank that holds the other end) is across.
    // With a collective Comm each transfer has a slot in its reader's rank's inbox (the same
    // table on every rank).
    std::vector<std::vector<std::int64_t>> indices(parts_.size());
    InboxPlan inbox;
    if constexpr (collective) {
      std::vector<int> ranks_of;
      for (int g = 0; g < op_.total(); ++g) ranks_of.push_back(rank_of(g));
      inbox = inbox_plan(op_.layout, ranks_of, ranks());
    }
    for (std::size_t t = 0; t < op_.layout.transfers.size(); ++t) {
      const HaloTransfer& h = op_.layout.transfers[t];
      const std::int64_t slot = collective ? inbox.slot[t] : 0;
      const PartState* from = part_at(h.from);
      const PartState* to = part_at(h.to);
      if (!from && !to) continue;
      Link l{h.from, h.to, h.count, h.first, h.receive_offset, -1, slot, !from || !to || from->device != to->device};
      across_devices_ = across_devices_ || l.across;
      if (from && !h.indices.empty()) {
        auto& list = indices[static_cast<std::size_t>(h.from - first_held_)];
        l.packed_at = static_cast<std::int64_t>(list.size());
        list.insert(list.end(), h.indices.begin(), h.indices.end());
      }
      links_.push_back(l);
    }
    indices_ = std::move(indices);
    if constexpr (collective)
      transport_->prepare_halos(static_cast<std::size_t>(inbox.largest_inbox) * sizeof(T),
                                static_cast<std::size_t>(inbox.largest_outbox) * sizeof(T));
    set_all_indices();
    if constexpr (persistent) prepare_persistent();
  }

  //! Test hook (Nccl, Nvshmem): every transfer, also between parts of one device, goes through
  //! the Comm's send and receive (to its own rank there), so one GPU exercises them.
  void route_every_transfer_through_comm_for_testing() {
    static_assert(collective, "a collective Comm (relax::Nccl, relax::Nvshmem)");
    for (Link& l : links_) l.across = true;
    across_devices_ = !links_.empty();
    set_all_indices();
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
    timeout_ns_ = blocks > 0 ? timeout_ns : comm_timeout_ns_;
  }

  int size() const { return static_cast<int>(parts_.size()); }  //!< the parts this process holds
  int first_held() const { return first_held_; }                 //!< held part i is part first_held() + i
  const SplitLayout& layout() const { return op_.layout; }
  const CgOptions& options() const { return options_; }

  //! Solves A x = b from the initial guess in `x`, both global host vectors (part p owns its
  //! layout's slice; a process that holds some parts reads and writes only theirs). Blocks until
  //! done; the report carries the true residual of the returned x.
  //! \throws relax::invalid_argument for vectors not one value per unknown.
  CgReport solve(const std::vector<T>& b, std::vector<T>& x) {
    const std::int64_t n = op_.layout.global_size();
    check_together("to start a solve", [&] {
      detail::require(static_cast<std::int64_t>(b.size()) == n, "b", b.size(), "one value per unknown of the operator");
      detail::require(static_cast<std::int64_t>(x.size()) == n, "x", x.size(), "one value per unknown of the operator");
    });
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

  //! Solves with device vectors: `b[i]` and `x[i]` hold held part i's owned entries (part
  //! first_held + i: `layout().parts[first_held + i].owned` values) on its device; `x[p]` is the initial guess and receives
  //! the solution. `b` is read in place, `x` copied in and out. Blocks until done.
  //! \throws relax::invalid_argument for lists not one pointer per part, or a null pointer.
  CgReport solve(const std::vector<const T*>& b, const std::vector<T*>& x) {
    check_together("to start a solve", [&] {
      detail::require(b.size() == parts_.size(), "b", b.size(), "one device pointer per part");
      detail::require(x.size() == parts_.size(), "x", x.size(), "one device pointer per part");
      for (std::size_t p = 0; p < parts_.size(); ++p)
        detail::require(b[p] != nullptr && x[p] != nullptr, "b, x", p, "device pointers of every part");
    });
    for (std::size_t p = 0; p < parts_.size(); ++p) {
      PartState& part = *parts_[p];
      const detail::DeviceScope on(part.device);
      part.rhs = b[p];
      RELAX_CUDA_CHECK(cudaMemcpyAsync(part.owned_of(vx), x[p], static_cast<std::size_t>(part.owned) * sizeof(T),
                                       cudaMemcpyDeviceToDevice, part.lane->stream.get()));
    }
    return run([&](PartState& part) {
      RELAX_CUDA_CHECK(cudaMemcpyAsync(x[part.index - static_cast<std::size_t>(first_held_)],
                                       part.owned_of(vx), static_cast<std::size_t>(part.owned) * sizeof(T),
                                       cudaMemcpyDeviceToDevice, part.lane->stream.get()));
    });
  }

 private:
  // The local vectors of a part (A is applied to x, r, p, w, s and t; q, m and z are products).
  // PersistentPipelined: w and z alternate between vw, vw2 and vz, vz2 within a launch.
  // `vb` stands for the part's b (read only) in a batched launch's list of vectors.
  enum Vec { vx, vr, vp, vq, vw, vm, vz, vs, vt, vw2, vz2, vec_count, vb = vec_count };
  static constexpr int vectors = cpu_free_pipelined ? vec_count : pipelined || persistent ? vt + 1 : vq + 1;

  struct PartState;
  // A device's stream and events, shared by the parts on that device.
  struct Lane {
    int device;
    Stream stream;
    Event done, sent, applied;
    // CPU-free: this device's kernel (its blocks, the first of them overall), its copy of the
    // partials and of the state, its outgoing transfers of r (standard CG) and of w (pipelined).
    unsigned blocks = 0, first_block = 0;
    DeviceBuffer<double> board;
    DeviceBuffer<detail::CgDeviceState> state;
    DeviceBuffer<detail::SplitPipelinedState> pipelined_state;
    DeviceBuffer<detail::SplitCgLink<T>> links, pipelined_links;
    int rank = 0;  // its index among the devices (its rank with a collective Comm)
    std::vector<PartState*> parts;  // the held parts on this device, in part order
    std::vector<PartProduct<Part>> products;  // `apply`'s list for `Part::apply_all`, reused
    // Collective Comm: its parts' sums (4 a part, `sum_slots` parts), every rank's after the
    // all-gather, the order of the parts among those, and the totals in part order.
    DeviceBuffer<double> local_sums, gathered_sums, totals;
    DeviceBuffer<int> part_order;
    explicit Lane(int d) : device(d) {}
  };

  struct PartState {
    std::size_t index = 0;  // among all parts of the split
    int device = 0;
    Lane* lane = nullptr;
    const T* rhs = nullptr;  // b of this solve: `b` below, or the caller's device array
    std::int64_t owned = 0, owned_offset = 0, local_size = 0, global_first = 0;
    unsigned first_block = 0, blocks = 0;  // CPU-free: in its device's kernel
    unsigned links_begin = 0, links_end = 0;  // its transfers in its device's list (the same in both lists)
    const Part* op = nullptr;
    std::unique_ptr<detail::DeviceScope> scope;  // current while the members are made
    std::vector<DeviceBuffer<T>> v;
    DeviceBuffer<T> b;  // b from the host (made at the first host solve)
    DeviceBuffer<std::int64_t> indices;
    DeviceBuffer<T> staging;  // packed entries for parts on other devices
    DeviceBuffer<double> partials;
    DeviceBuffer<unsigned> arrivals;
    // The part's sums of a reduction, written by the kernels straight into pinned host memory
    // (mapped under unified addressing): no copy to issue, the host reads them after an event.
    // With a collective Comm the kernels write them on the device (`out`) for the all-gather.
    PinnedBuffer<double> sums;
    double* out = nullptr;  // where the kernels write the part's 4 sums
    int slot = 0;           // its place among its device's parts

    // Held part i of `s` (part first_held + i of its layout), its vectors from `allocate(size)`.
    template <class Allocate>
    PartState(const SplitOperator<Part>& s, std::size_t i, Lane* l, Allocate&& allocate)
        : index(static_cast<std::size_t>(s.first_held) + i),
          device(s.devices[i]),
          lane(l),
          owned(s.layout.parts[index].owned),
          owned_offset(s.layout.parts[index].owned_offset),
          local_size(s.layout.parts[index].local_size),
          global_first(s.layout.parts[index].global_first),
          op(&s.parts[i]),
          scope(std::make_unique<detail::DeviceScope>(device)),
          partials(2 * detail::dot_blocks),
          arrivals(1),
          sums(4),
          out(sums.data()) {
      for (int i = 0; i < vectors; ++i) {
        v.push_back(allocate(local_size));
        RELAX_CUDA_CHECK(cudaMemsetAsync(v.back().data(), 0, v.back().bytes(), lane->stream.get()));
      }
      RELAX_CUDA_CHECK(cudaMemsetAsync(arrivals.data(), 0, sizeof(unsigned), lane->stream.get()));
      lane->stream.synchronize();
      scope.reset();
    }

    void set_indices(const std::vector<std::int64_t>& list, std::size_t staged) {
      if (list.empty()) return;
      const detail::DeviceScope on(device);
      if (indices.size() != list.size()) indices = DeviceBuffer<std::int64_t>(list.size());
      if (staged > 0 && staging.size() != list.size()) staging = DeviceBuffer<T>(list.size());
      RELAX_CUDA_CHECK(cudaMemcpy(indices.data(), list.data(), indices.bytes(), cudaMemcpyHostToDevice));
      RELAX_CUDA_CHECK(cudaDeviceSynchronize());
    }

    // Vector `which` from its first owned entry (b for `vb`: read only, whatever the type says).
    T* owned_of(Vec which) {
      return which == vb ? const_cast<T*>(rhs) : v[static_cast<std::size_t>(which)].data() + owned_offset;
    }
  };

  // The solve after b and x are in place; `store_x(part)` queues the copy of its solution out.
  template <class StoreX>
  CgReport run(StoreX&& store_x) {
    const auto start = std::chrono::steady_clock::now();
    CgReport report;
    report.rhs_norm = std::sqrt(reduce([&] { dot(vb, vb); }));
    if (report.rhs_norm == 0.0) {  // refused where b is not 0, as every CG does (every rank alike)
      const double nonzero = reduce([&] { batched<1>({vb}, true, 0, &detail::split_count_nonzero<T>); });
      detail::require(nonzero == 0.0, "b", std::to_string(static_cast<std::int64_t>(nonzero)) + " entries not 0",
                      detail::rhs_norm_underflow_expected);
    }
    detail::solve_with_restarts(
        options_, report,
        [&](const StopCriterion& left, CgReport& r) {
          if constexpr (pipelined) {
            if (r.restarts == 0 && r.switched_at < 0) return run_pipelined(left, r);
          }
          return run_standard_variant(left, r);
        },
        [&] { return true_residual_norm(); });
    each(store_x);
    for (auto& lane : lanes_) lane->stream.synchronize();
    report.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return report;
  }

  // One transfer, with where its packed entries sit in the sender's staging buffer (−1: a run)
  // and, with a collective Comm, its slot in the reader's rank's inbox.
  struct Link {
    int from, to;
    std::int64_t count, first, receive_offset, packed_at, inbox_at;
    bool across;  // between two devices: staged, copied, ordered by events
  };

  // Runs the checks `f`; with a collective Comm every rank learns whether one of them failed
  // `step` and all throw, so none is left waiting in a collective call the others never make.
  template <class F>
  void check_together(const char* step, F&& f) {
    std::exception_ptr local;
    try {
      f();
    } catch (...) {
      local = std::current_exception();
    }
    if constexpr (collective) transport_->agree(local, step);
    if (local) std::rethrow_exception(local);
  }

  // The ranks of a collective Comm: the program's communicator's, or one per device.
  int ranks() const {
    if constexpr (collective) {
      if (transport_->program()) return transport_->ranks();
    }
    return static_cast<int>(lanes_.size());
  }

  // Whether part p (of the split) sends indexed entries across (then it stages them).
  std::size_t staged(std::size_t p) const {
    std::size_t n = 0;
    for (const Link& l : links_)
      if (l.from == static_cast<int>(p) && l.across && l.packed_at >= 0) n += static_cast<std::size_t>(l.count);
    return n;
  }

  // Part g of the split if this process holds it, else null.
  PartState* part_at(int g) const {
    const int i = g - first_held_;
    return i >= 0 && i < static_cast<int>(parts_.size()) ? parts_[static_cast<std::size_t>(i)].get() : nullptr;
  }

  // Every held part's packed indices and staging.
  void set_all_indices() {
    for (std::size_t i = 0; i < parts_.size(); ++i) parts_[i]->set_indices(indices_[i], staged(parts_[i]->index));
  }

  // The rank of part g with a collective Comm: the rank that holds it (the program's
  // communicator), or its device's.
  int rank_of(int g) const {
    if constexpr (collective) {
      if (transport_->program()) return rank_of_part(g, static_cast<int>(op_.layout.parts.size()), transport_->ranks());
    }
    return part_at(g)->lane->rank;
  }

  // Runs `launch()` (which queues kernels writing every part's sums[0 .. count)) and returns
  // the total of sums[0] in part order; `extra` gets the totals of the others.
  template <class Launch>
  double reduce(Launch&& launch, int count = 1, double* extra = nullptr) {
    reduce_async(std::forward<Launch>(launch));
    return collect(count, extra);
  }

  // `reduce` without waiting: the host collects later, while the parts go on. With a collective
  // Comm every device all-gathers every part's sums and adds them in part order itself (so each
  // holds the same totals); the host copies the first device's.
  template <class Launch>
  void reduce_async(Launch&& launch) {
    launch();
    if constexpr (collective) {
      transport_->group([&] {
        for (auto& lane : lanes_)
          transport_->all_gather(lane->local_sums.data(), lane->gathered_sums.data(), std::size_t{4} * sum_slots_,
                                 lane->rank, lane->stream.get());
      });
      for (auto& lane : lanes_) {
        const detail::DeviceScope on(lane->device);
        detail::split_add_parts<<<1, 32, 0, lane->stream.get()>>>(
            lane->gathered_sums.data(), lane->part_order.data(), static_cast<int>(op_.layout.parts.size()),
            lane->totals.data());
        RELAX_CUDA_CHECK_LAUNCH();
      }
      Lane& home = *lanes_.front();
      const detail::DeviceScope on(home.device);
      RELAX_CUDA_CHECK(cudaMemcpyAsync(host_totals_.data(), home.totals.data(), 4 * sizeof(double),
                                       cudaMemcpyDeviceToHost, home.stream.get()));
    }
    for (auto& lane : lanes_) {
      const detail::DeviceScope on(lane->device);
      lane->done.record(lane->stream.get());
    }
  }

  // Waits for every part's sums (queued by `reduce_async`) and adds them in part order (with a
  // collective Comm: reads the totals the devices added in that order).
  double collect(int count, double* extra) {
    for (auto& lane : lanes_) lane->done.synchronize();
    double totals[4] = {0.0, 0.0, 0.0, 0.0};
    if constexpr (collective) {
      std::copy_n(host_totals_.data(), 4, totals);
    } else {
      for (auto& part : parts_)
        for (int i = 0; i < count; ++i) totals[i] += part->sums.data()[i];
    }
    for (int i = 1; i < count; ++i) extra[i - 1] = totals[i];
    return totals[0];
  }

  // Collective Comm: each rank's buffer of its parts' sums (`sum_slots_` parts: the most a rank
  // holds), every rank's after the all-gather, and where part g's sums land among those.
  void prepare_collective_sums() {
    const int total = static_cast<int>(op_.layout.parts.size());
    std::vector<int> slot_of(static_cast<std::size_t>(total), 0), order;
    const int ranks = this->ranks();
    std::vector<int> held(static_cast<std::size_t>(ranks), 0);
    for (int g = 0; g < total; ++g) {  // every part, held here or not: the same table on every rank
      const int r = rank_of(g);
      slot_of[static_cast<std::size_t>(g)] = held[static_cast<std::size_t>(r)]++;
      sum_slots_ = std::max(sum_slots_, slot_of[static_cast<std::size_t>(g)] + 1);
    }
    for (int g = 0; g < total; ++g) order.push_back(rank_of(g) * sum_slots_ + slot_of[static_cast<std::size_t>(g)]);
    for (auto& lane : lanes_) {
      const detail::DeviceScope on(lane->device);
      lane->local_sums = transport_->template buffer<double>(std::size_t{4} * sum_slots_);
      lane->gathered_sums = transport_->template buffer<double>(std::size_t{4} * sum_slots_ * static_cast<std::size_t>(ranks));
      lane->totals = DeviceBuffer<double>(4);
      lane->part_order = DeviceBuffer<int>(order.size());
      RELAX_CUDA_CHECK(cudaMemset(lane->local_sums.data(), 0, lane->local_sums.bytes()));
      RELAX_CUDA_CHECK(cudaMemcpy(lane->part_order.data(), order.data(), lane->part_order.bytes(), cudaMemcpyHostToDevice));
    }
    for (auto& part : parts_) {
      part->slot = slot_of[part->index];
      part->out = part->lane->local_sums.data() + 4 * part->slot;
    }
  }

  // Every part's halo of vector `which` from its neighbours. Each device gathers its parts'
  // outgoing entries in one launch: on one device straight into the reader's halo (a run too),
  // between devices into the sender's staging (a run goes as it is). Between devices the
  // sender then waits until the reader is done with its previous product (which read the halo),
  // copies with `cudaMemcpyPeerAsync`, and the reader's stream waits for the sender's. With a
  // collective Comm the staged entries go in one group of sends and receives instead, each on
  // its own device's stream (the receive follows the reader's product, the next staging the
  // send); a process sends what its parts send and receives what they receive.
  void exchange(Vec which) {
    for (auto& lane : lanes_) {
      const detail::DeviceScope on(lane->device);
      detail::GatherJobs<T> jobs;
      int count = 0;
      std::int64_t largest = 0;
      auto launch = [&] {
        if (count == 0) return;
        detail::gather_kernel<<<dim3(detail::vector_blocks(largest), static_cast<unsigned>(count)), 256, 0,
                                lane->stream.get()>>>(jobs);
        RELAX_CUDA_CHECK_LAUNCH();
        count = 0;
        largest = 0;
      };
      for (const Link& l : links_) {
        PartState* const from = part_at(l.from);
        if (!from || from->lane != lane.get() || l.count == 0) continue;  // another's sender, or nothing to move
        if (l.across && l.packed_at < 0) continue;                         // a run between devices: copied as it is
        detail::GatherJob<T>& j = jobs.job[count++];
        j.count = l.count;
        j.indices = l.packed_at >= 0 ? from->indices.data() + l.packed_at : nullptr;
        j.src = from->owned_of(which) + (l.packed_at >= 0 ? 0 : l.first);
        j.dst = l.across ? from->staging.data() + l.packed_at : receive_at(*part_at(l.to), which, l);
        largest = std::max(largest, l.count);
        if (count == detail::batch_parts) launch();
      }
      launch();
    }
    if constexpr (collective) {
      // Every rank enters each exchange, with or without transfers of its own: a one-sided
      // transport ends it with a barrier of all ranks.
      transport_->exchange_group(lanes_.front()->stream.get(), [&] {
        for (const Link& l : links_) {
          if (!l.across) continue;
          if (PartState* from = part_at(l.from))
            transport_->send(sent_from(*from, which, l), l.count, from->lane->rank, rank_of(l.to),
                             from->lane->stream.get(), l.inbox_at);
          if (PartState* to = part_at(l.to))
            transport_->receive(receive_at(*to, which, l), l.count, to->lane->rank, rank_of(l.from),
                                to->lane->stream.get(), l.inbox_at);
        }
      });
    } else {
      if (!across_devices_) return;
      for (const Link& l : links_) {
        if (!l.across) continue;
        PartState& from = *part_at(l.from);
        PartState& to = *part_at(l.to);
        const detail::DeviceScope on(from.device);
        const cudaStream_t stream = from.lane->stream.get();
        RELAX_CUDA_CHECK(cudaStreamWaitEvent(stream, to.lane->applied.get(), 0));
        RELAX_CUDA_CHECK(cudaMemcpyPeerAsync(receive_at(to, which, l), to.device, sent_from(from, which, l), from.device,
                                             static_cast<std::size_t>(l.count) * sizeof(T), stream));
      }
      for (auto& lane : lanes_) {
        const detail::DeviceScope on(lane->device);
        lane->sent.record(lane->stream.get());
      }
      for (const Link& l : links_) {
        if (!l.across) continue;
        PartState& to = *part_at(l.to);
        const detail::DeviceScope on(to.device);
        RELAX_CUDA_CHECK(cudaStreamWaitEvent(to.lane->stream.get(), part_at(l.from)->lane->sent.get(), 0));
      }
    }
  }

  // Where transfer `l` of vector `which` leaves its sender between devices (staged, or the run
  // itself) and where it lands in its reader's halo.
  static const T* sent_from(PartState& from, Vec which, const Link& l) {
    return l.packed_at >= 0 ? from.staging.data() + l.packed_at : from.owned_of(which) + l.first;
  }
  static T* receive_at(PartState& to, Vec which, const Link& l) {
    return to.v[static_cast<std::size_t>(which)].data() + l.receive_offset;
  }

  // out = A in on every part (in's halo exchanged first): each device's parts in one launch
  // where the part's operator batches (`Part::apply_all`).
  void apply(Vec in, Vec out) {
    exchange(in);
    for (auto& lane : lanes_) {
      const detail::DeviceScope on(lane->device);
      lane->products.clear();
      for (PartState* p : lane->parts)
        lane->products.push_back({p->op, p->v[static_cast<std::size_t>(in)].data(), p->owned_of(out)});
      Part::apply_all(lane->products.data(), static_cast<int>(lane->products.size()), lane->stream.get());
    }
    if (!across_devices_ || collective) return;
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

  // Launches `kernel` once on every device for all its parts (`batch_parts` at a time): part i
  // of a launch runs on the blocks (·, i) with its slice of the vectors `which` and its sums at
  // out[slot]. A reduction (`reduction`) gives every part `dot_blocks` blocks, the grid of
  // `relax::dot`; an update enough for the largest part's entries.
  template <int N, class... Params, class... Args>
  void batched(const std::array<Vec, N>& which, bool reduction, int slot,
               void (*kernel)(detail::PartSlices<T, N>, Params...), Args... args) {
    for (auto& lane : lanes_) {
      const detail::DeviceScope on(lane->device);
      detail::PartSlices<T, N> batch;
      int count = 0;
      std::int64_t largest = 0;
      auto launch = [&] {
        if (count == 0) return;
        const unsigned x = reduction ? detail::dot_blocks : detail::vector_blocks(std::max<std::int64_t>(largest, 1));
        kernel<<<dim3(x, static_cast<unsigned>(count)), detail::dot_block, 0, lane->stream.get()>>>(batch, args...);
        RELAX_CUDA_CHECK_LAUNCH();
        count = 0;
        largest = 0;
      };
      for (PartState* p : lane->parts) {
        detail::PartSlice<T, N>& s = batch.part[count++];
        s.n = p->owned;
        for (int i = 0; i < N; ++i) s.v[i] = p->owned_of(which[static_cast<std::size_t>(i)]);
        s.partials = p->partials.data();
        s.arrivals = p->arrivals.data();
        s.out = p->out + slot;
        largest = std::max(largest, p->owned);
        if (count == detail::batch_parts) launch();
      }
      launch();
    }
  }

  // sums[slot] = (a, b) over every part's owned entries.
  void dot(Vec a, Vec b, int slot = 0) { batched<2>({a, b}, true, slot, &detail::split_dot<T>); }

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
    return std::sqrt(reduce([&] { dot(vr, vr); }));
  }

  void record(CgReport& report) const {
    if (options_.record_history) report.history.push_back({report.iterations, report.relative_residual()});
  }

  // Standard CG from x until `stop` (capping this run's iterations) decides; the arithmetic of
  // `CG<Operator, Unfused>` with its scalars taken on the host from the parts' partials.
  CgStatus run_standard(const StopCriterion& stop, CgReport& report) {
    residual(vr, true);
    double rr = reduce([&] { dot(vr, vr); });
    report.residual_norm = std::sqrt(rr);
    const StopReason first = stop.decide(report.residual_norm, report.rhs_norm, 0);
    if (first != StopReason::go_on) return detail::cg_status_of(first);
    for (std::int64_t it = 1;; ++it) {
      apply(vp, vq);
      const double pq = reduce([&] { dot(vp, vq); });
      const double alpha = rr / pq;
      if (!(pq > 0.0) || !std::isfinite(alpha))  // `cg_axpy`'s decision
        return std::isfinite(rr) && std::isfinite(pq) ? CgStatus::breakdown : CgStatus::non_finite;
      const T step = static_cast<T>(alpha), minus_step = static_cast<T>(-alpha);
      const double rr_next =
          reduce([&] { batched<4>({vp, vq, vx, vr}, true, 0, &detail::split_cg_step<T>, step, minus_step); });
      ++report.iterations;
      const double beta = rr > 0.0 ? rr_next / rr : 0.0;
      if (!std::isfinite(rr_next) || !std::isfinite(beta)) return CgStatus::non_finite;
      batched<2>({vr, vp}, false, 0, &detail::split_cg_xpay<T>, static_cast<T>(beta));
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
        [&] {
          batched<4>({vb, vq, vt, vr}, true, 0, &detail::split_residual_gap<T>);
          dot(vr, vr, 1);
          dot(vw, vw, 2);
          dot(vx, vx, 3);
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

  // Standard CG of this variant: the CPU-free kernel for the CPU-free variants (also their
  // restarts and the pipelined switch), host-controlled otherwise.
  CgStatus run_standard_variant(const StopCriterion& stop, CgReport& report) {
    if constexpr (persistent) return run_persistent(stop, report);
    else return run_standard(stop, report);
  }

  // One run of pipelined CG from x: `reference::detail::cg_pipelined_run`'s rules. Pipelined:
  // the host's loop, the reduction of (r, r) and (w, r) on its way to the host while m = A w is
  // computed. PersistentPipelined: the same loop in one kernel per device from one checkpoint to
  // the next (`detail::split_cg_pipelined`); the host takes the checkpoints and the switch.
  CgStatus run_pipelined(const StopCriterion& stop, CgReport& report) {
    const std::int64_t replace =
        options_.replace_interval > 0 ? options_.replace_interval : (sizeof(T) >= 8 ? 50 : 10);
    const double replace_below = options_.replace_until_for(sizeof(T)) * options_.threshold(report.rhs_norm);
    auto switch_to_standard = [&](std::int64_t it) {
      report.switched_at = report.iterations;
      StopCriterion rest = stop;
      rest.max_count = stop.max_count - it;
      return run_standard_variant(rest, report);
    };
    // η ≤ 0 at iteration `it`: pᵀAp computed directly on the direction r + β p decides between
    // a breakdown and standard CG from here.
    auto eta_not_positive = [&](std::int64_t it, double beta) {
      const bool first = it == 0;
      batched<3>({vr, vp, vt}, false, 0, &detail::split_direction<T>, first, static_cast<T>(beta));
      apply(vt, vq);
      const double pq = reduce([&] { dot(vt, vq); });
      if (!std::isfinite(pq)) return CgStatus::non_finite;
      if (pq <= 0.0) return CgStatus::breakdown;
      return switch_to_standard(it);
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
      if constexpr (cpu_free_pipelined) {
        detail::SplitPipelinedState& h = host_pipelined_.data()[0];
        h = detail::SplitPipelinedState{};
        h.gamma_prev = gamma_prev;
        h.alpha_prev = alpha_prev;
        h.rhs_norm = report.rhs_norm;
        h.replace_below = replace_below;
        h.stop = stop;
        h.it = it;
        h.replace = replace;
        h.replacing = replacing ? 1 : 0;
        exchange(vw);  // the kernel reads w's halo
        launch_cpu_free(h);
        report.iterations += h.launch_iterations;
        if (h.launch_iterations % 2 != 0)  // the current w and z are the second arrays
          each([&](PartState& p) {
            const std::size_t bytes = static_cast<std::size_t>(p.owned) * sizeof(T);
            RELAX_CUDA_CHECK(cudaMemcpyAsync(p.owned_of(vw), p.owned_of(vw2), bytes, cudaMemcpyDeviceToDevice,
                                             p.lane->stream.get()));
            RELAX_CUDA_CHECK(cudaMemcpyAsync(p.owned_of(vz), p.owned_of(vz2), bytes, cudaMemcpyDeviceToDevice,
                                             p.lane->stream.get()));
          });
        it = h.it;
        gamma_prev = h.gamma_prev;
        alpha_prev = h.alpha_prev;
        replacing = h.replacing != 0;
        report.residual_norm = std::sqrt(h.gamma);
        switch (h.outcome) {
          case detail::pipelined_checkpoint:
            --it;  // the loop's ++it brings it back to the checkpoint's iteration
            continue;
          case detail::pipelined_non_finite:
            return CgStatus::non_finite;
          case detail::pipelined_eta:
            return eta_not_positive(it, it == 0 ? 0.0 : h.gamma / h.gamma_prev);
          default: {
            record(report);
            return detail::cg_status_of(stop.decide(report.residual_norm, report.rhs_norm, it));
          }
        }
      } else {
        reduce_async([&] { batched<2>({vr, vw}, true, 0, &detail::split_dot2<T>); });
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
        if (!(eta > 0.0)) return eta_not_positive(it, beta);
        const double alpha = gamma / eta;
        if (!std::isfinite(alpha)) return CgStatus::non_finite;
        const T a = static_cast<T>(alpha), be = static_cast<T>(beta);
        batched<7>({vm, vz, vs, vp, vx, vr, vw}, false, 0, &detail::split_pipelined_update<T>, first, a, be);
        gamma_prev = gamma;
        alpha_prev = alpha;
        ++report.iterations;
      }
    }
  }

  using Rows = typename Part::rows_type;
  using Table = detail::SplitCgTable<T, Rows>;
  using PipelinedTable = detail::SplitPipelinedTable<T, Rows>;

  // A CPU-free kernel (standard, or pipelined) for barriers of the system's scope (the parts
  // span several devices) or of a device's.
  static const void* cpu_free_kernel(bool pipelined_kernel, bool system) {
    using detail::split_cg_persistent;
    using detail::split_cg_pipelined;
    constexpr auto device = cuda::thread_scope_device;
    constexpr auto whole = cuda::thread_scope_system;
    if (pipelined_kernel)
      return system ? reinterpret_cast<const void*>(&split_cg_pipelined<T, Rows, whole>)
                    : reinterpret_cast<const void*>(&split_cg_pipelined<T, Rows, device>);
    return system ? reinterpret_cast<const void*>(&split_cg_persistent<T, Rows, whole>)
                  : reinterpret_cast<const void*>(&split_cg_persistent<T, Rows, device>);
  }

  // Each device's grid: as many blocks as its parts fill with `cg_persistent_points_per_thread`
  // points a thread (as the single-GPU persistent CG sizes its grid), at least one per SM, at
  // most what the occupancy of every kernel the variant launches allows, shared among its parts
  // by their sizes (each at least one); fixed for a given split and device, so the sums are
  // reproducible. Boards, states, the barrier and the transfers are made here; devices reach
  // each other's memory by peer access (over Nvshmem, through NVSHMEM's mapping).
  void prepare_persistent() {
    system_scope_ = lanes_.size() > 1 || (symmetric && ranks() > 1);
    const bool system = system_scope_;
    // A warp a row for every part or for none: with warp rows the standard kernel meets a third
    // barrier an iteration, so parts that chose differently would never meet.
    warp_rows_ = std::all_of(op_.parts.begin(), op_.parts.end(), [](const Part& p) { return p.warp_rows(); });
    if constexpr (symmetric) {  // every PE's parts
      const std::vector<unsigned long long> every = transport_->gather_words(warp_rows_ ? 1 : 0);
      warp_rows_ = std::all_of(every.begin(), every.end(), [](unsigned long long w) { return w != 0; });
    }
    unsigned total = 0;
    check_together("to size its kernel", [&] {
      const std::size_t boards = symmetric ? static_cast<std::size_t>(ranks()) : lanes_.size();
      if (boards > static_cast<std::size_t>(detail::split_cg_max_devices))
        throw invalid_argument(symmetric ? "PEs" : "devices", std::to_string(boards),
                               "at most " + std::to_string(detail::split_cg_max_devices) +
                                   (symmetric ? " PEs" : " distinct devices") + " for the CPU-free CG");
      for (auto& lane : lanes_) {
        const detail::DeviceScope on(lane->device);
        int cooperative = 0;
        RELAX_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, lane->device));
        if (!cooperative)
          throw unavailable_error("relax::MultiCG's CPU-free variants need cooperative launch, which device " +
                                  std::to_string(lane->device) + " does not support; use relax::Unfused");
        // The occupancy queries load the kernels: nothing loads lazily once the kernels wait on each other.
        int per_sm = 0;
        RELAX_CUDA_CHECK(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cpu_free_kernel(false, system), detail::dot_block, 0));
        if constexpr (cpu_free_pipelined) {
          int pipelined_per_sm = 0;
          RELAX_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
              &pipelined_per_sm, cpu_free_kernel(true, system), detail::dot_block, 0));
          per_sm = std::min(per_sm, pipelined_per_sm);
        }
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
                                     " parts per device for the CPU-free CG");
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
    });
    if constexpr (symmetric) {  // one lane: this PE's; its blocks follow the lower PEs'
      const std::vector<unsigned long long> every = transport_->gather_words(lanes_.front()->blocks);
      total = 0;
      for (std::size_t q = 0; q < every.size(); ++q) {
        if (static_cast<int>(q) == transport_->rank()) lanes_.front()->first_block = total;
        total += static_cast<unsigned>(every[q]);
      }
    }
    total_blocks_ = total;
    for (auto& lane : lanes_) {
      const detail::DeviceScope on(lane->device);
      const std::size_t board = std::size_t{cpu_free_pipelined ? 4u : 2u} * total;
      if constexpr (symmetric) lane->board = transport_->template shared<double>(board);
      else lane->board = DeviceBuffer<double>(board);
      lane->state = DeviceBuffer<detail::CgDeviceState>(1);
      if (cpu_free_pipelined) lane->pipelined_state = DeviceBuffer<detail::SplitPipelinedState>(1);
      for (auto& other : lanes_) {
        if (other->device == lane->device || symmetric) continue;
        int can = 0;
        RELAX_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, lane->device, other->device));
        if (!can)
          throw unavailable_error("relax::MultiCG's CPU-free variants: device " + std::to_string(lane->device) +
                                  " cannot access device " + std::to_string(other->device) +
                                  "'s memory (peer access); use relax::Unfused");
        const cudaError_t e = cudaDeviceEnablePeerAccess(other->device, 0);
        if (e != cudaErrorPeerAccessAlreadyEnabled) RELAX_CUDA_CHECK(e);
        (void)cudaGetLastError();
      }
    }
    {
      const detail::DeviceScope on(lanes_.front()->device);
      if constexpr (symmetric) {  // PE 0's is the one; every PE reaches it (and every PE's board)
        barrier_ = transport_->template shared<detail::GridBarrierState>(1);
        check_together("to reach the other PEs' memory", [&] {
          barrier_at_ = transport_->peer(barrier_.data(), 0);
          for (int q = 0; q < ranks(); ++q) (void)transport_->peer(lanes_.front()->board.data(), q);
        });
      } else {
        barrier_ = DeviceBuffer<detail::GridBarrierState>(1);
        barrier_at_ = barrier_.data();
      }
    }
    // Each device's outgoing transfers, grouped by sending part: of r into the readers' two r
    // arrays (standard CG), of w into their two w arrays (pipelined CG).
    for (auto& lane : lanes_) {
      std::vector<detail::SplitCgLink<T>> of_r, of_w;
      for (auto& part : parts_) {
        if (part->lane != lane.get()) continue;
        part->links_begin = static_cast<unsigned>(of_r.size());
        for (const Link& l : links_) {
          if (l.from != static_cast<int>(part->index)) continue;
          detail::SplitCgLink<T> link;
          link.indices = l.packed_at >= 0 ? part->indices.data() + l.packed_at : nullptr;
          link.first = l.first;
          link.count = l.count;
          link.dst[0] = reader_vector(l.to, vr) + l.receive_offset;
          link.dst[1] = reader_vector(l.to, vw) + l.receive_offset;
          of_r.push_back(link);
          if constexpr (cpu_free_pipelined) {
            link.dst[0] = reader_vector(l.to, vw) + l.receive_offset;
            link.dst[1] = reader_vector(l.to, vw2) + l.receive_offset;
            of_w.push_back(link);
          }
        }
        part->links_end = static_cast<unsigned>(of_r.size());
      }
      if (of_r.empty()) continue;
      const detail::DeviceScope on(lane->device);
      auto upload = [](DeviceBuffer<detail::SplitCgLink<T>>& to, const std::vector<detail::SplitCgLink<T>>& list) {
        if (list.empty()) return;
        to = DeviceBuffer<detail::SplitCgLink<T>>(list.size());
        RELAX_CUDA_CHECK(cudaMemcpy(to.data(), list.data(), to.bytes(), cudaMemcpyHostToDevice));
      };
      upload(lane->links, of_r);
      upload(lane->pipelined_links, of_w);
    }
  }

  // Vector `which` of part g (the reader of a transfer) as the CPU-free kernels store into it:
  // its own, or over Nvshmem the vector of the same slot here (the same symmetric address) on
  // the PE that holds g, through NVSHMEM's mapping (every reader, this PE's too).
  T* reader_vector(int g, Vec which) {
    if constexpr (symmetric) {
      const int q = rank_of(g);
      const int slot = g - rank_parts(op_.total(), ranks(), q).first;
      return transport_->peer(parts_[static_cast<std::size_t>(slot)]->v[static_cast<std::size_t>(which)].data(), q);
    }
    return part_at(g)->v[static_cast<std::size_t>(which)].data();
  }

  // A kernel's table for `lane`: `entry(part, e)` fills each of its parts' entries.
  template <class Tab, class Links, class Entry>
  Tab table_of(Lane& lane, const Links& links, Entry&& entry) {
    Tab t;
    for (auto& part : parts_) {
      if (part->lane != &lane) continue;
      auto& e = t.parts[t.count++];
      e.rows = part->op->rows();
      e.warp_rows = warp_rows_;
      e.owned = part->owned;
      e.offset = part->owned_offset;
      e.first_block = part->first_block;
      e.blocks = part->blocks;
      e.links_begin = part->links_begin;
      e.links_end = part->links_end;
      entry(*part, e);
    }
    t.links = links.data();
    if constexpr (symmetric) {  // every PE's board, this PE's its own
      for (int q = 0; q < ranks(); ++q) t.boards[t.board_count++] = transport_->peer(lane.board.data(), q);
      t.home = transport_->rank();
    } else {
      for (auto& other : lanes_) {
        if (other.get() == &lane) t.home = t.board_count;
        t.boards[t.board_count++] = other->board.data();
      }
    }
    t.total_blocks = total_blocks_;
    t.first_block = lane.first_block;
    return t;
  }

  // Vector `which` of a held part as the CPU-free kernels reach it: over a Comm of one process
  // per GPU through the address the other processes' stores come through too (`peer` of its
  // own rank: NVSHMEM's is the local address, NCCL's the window's LSA pointer), so a kernel
  // touches each vector through one address only.
  T* kernel_view(PartState& part, Vec which) {
    T* local = part.v[static_cast<std::size_t>(which)].data();
    if constexpr (symmetric) return transport_->peer(local, transport_->rank());
    else return local;
  }

  Table standard_table(Lane& lane) {
    Table t = table_of<Table>(lane, lane.links, [&](PartState& part, detail::SplitCgPart<T, Rows>& e) {
      e.local_size = part.local_size;
      e.x = kernel_view(part, vx);
      e.r[0] = kernel_view(part, vr);  // the r the start leaves
      e.r[1] = kernel_view(part, vw);
      e.p[0] = kernel_view(part, vp);
      e.p[1] = kernel_view(part, vs);
      e.q = kernel_view(part, vq) + part.owned_offset;
    });
    t.state = lane.state.data();
    return t;
  }

  PipelinedTable pipelined_table(Lane& lane) {
    PipelinedTable t =
        table_of<PipelinedTable>(lane, lane.pipelined_links, [&](PartState& part, detail::SplitPipelinedPart<T, Rows>& e) {
          e.x = kernel_view(part, vx);
          e.r = kernel_view(part, vr);
          e.p = kernel_view(part, vp);
          e.s = kernel_view(part, vs);
          e.z[0] = kernel_view(part, vz);
          e.z[1] = kernel_view(part, vz2);
          e.w[0] = kernel_view(part, vw);
          e.w[1] = kernel_view(part, vw2);
        });
    t.state = lane.pipelined_state.data();
    return t;
  }

  // One launch of a CPU-free kernel on every device, from the host's state `h` (copied to every
  // device's, read back from the first's into `h`): the barrier reset, every device ready before
  // any kernel waits, then one cooperative launch per device. \throws relax::device_loop_error
  // when a barrier did not complete.
  template <class State>
  void launch_cpu_free(State& h) {
    constexpr bool pipelined_kernel = std::is_same_v<State, detail::SplitPipelinedState>;
    auto state_of = [](Lane& lane) {
      if constexpr (pipelined_kernel) return lane.pipelined_state.data();
      else return lane.state.data();
    };
    const bool system = system_scope_;
    // The barrier's owner: the first device, or PE 0 (over Nvshmem every PE's stream meets the
    // others' before and after its reset, so no kernel of the last launch still waits on it and
    // none of this one arrives before it).
    bool owner = true;
    if constexpr (symmetric) owner = transport_->rank() == 0;
    {
      const detail::DeviceScope on(lanes_.front()->device);
      const cudaStream_t stream = lanes_.front()->stream.get();
      if constexpr (symmetric) transport_->barrier(stream);
      if (owner) RELAX_CUDA_CHECK(cudaMemsetAsync(barrier_.data(), 0, sizeof(detail::GridBarrierState), stream));
      if constexpr (symmetric) transport_->barrier(stream);
    }
    for (auto& lane : lanes_) {
      const detail::DeviceScope on(lane->device);
      RELAX_CUDA_CHECK(cudaMemcpyAsync(state_of(*lane), &h, sizeof(h), cudaMemcpyHostToDevice, lane->stream.get()));
    }
    for (auto& lane : lanes_) lane->stream.synchronize();
    const unsigned all = total_blocks_ + absent_blocks_;
    for (auto& lane : lanes_) {
      const detail::DeviceScope on(lane->device);
      auto go = [&](auto barrier) {
        auto t = [&] {
          if constexpr (pipelined_kernel) return pipelined_table(*lane);
          else return standard_table(*lane);
        }();
        void* args[] = {&t, &barrier};
        RELAX_CUDA_CHECK(cudaLaunchCooperativeKernel(cpu_free_kernel(pipelined_kernel, system), dim3(lane->blocks),
                                                     dim3(detail::dot_block), args, 0, lane->stream.get()));
      };
      if (system) go(detail::BasicGridBarrier<cuda::thread_scope_system>{barrier_at_, all, timeout_ns_, lane->first_block});
      else go(detail::GridBarrier{barrier_at_, all, timeout_ns_, lane->first_block});
    }
    {
      Lane& home = *lanes_.front();
      const detail::DeviceScope on(home.device);
      RELAX_CUDA_CHECK(cudaMemcpyAsync(&h, state_of(home), sizeof(h), cudaMemcpyDeviceToHost, home.stream.get()));
      host_barrier_.data()[0] = detail::GridBarrierState{};
      if (owner)
        RELAX_CUDA_CHECK(cudaMemcpyAsync(host_barrier_.data(), barrier_.data(), sizeof(detail::GridBarrierState),
                                         cudaMemcpyDeviceToHost, home.stream.get()));
    }
    for (auto& lane : lanes_) lane->stream.synchronize();
    bool failed = host_barrier_.data()[0].failed != 0;  // its flag where this process holds it,
    if constexpr (pipelined_kernel) failed = failed || h.outcome == detail::pipelined_barrier_failed;
    else failed = failed || h.status == detail::cg_barrier_failed;  // else what this kernel saw
    if (failed)
      throw device_loop_error(std::string(pipelined_kernel ? "split_cg_pipelined" : "split_cg_persistent") +
                              ": a grid barrier did not complete within " + std::to_string(timeout_ns_ / 1'000'000) +
                              " ms (are all blocks of every device's cooperative grid resident? another kernel may be "
                              "holding SMs)");
  }

  // CPU-free standard CG from x until `stop` decides: the host forms r = p = b − A x and their
  // halos, then one kernel per device runs every iteration (multi/cg_kernels.cuh); the host
  // reads the outcome.
  CgStatus run_persistent(const StopCriterion& stop, CgReport& report) {
    residual(vr, true);
    exchange(vr);
    exchange(vp);
    const double rr0 = reduce([&] { dot(vr, vr); });
    report.residual_norm = std::sqrt(rr0);
    const StopReason first = stop.decide(report.residual_norm, report.rhs_norm, 0);
    if (first != StopReason::go_on) return detail::cg_status_of(first);
    detail::CgDeviceState& h = host_state_.data()[0];
    h = detail::CgDeviceState{};
    h.rr = h.rr_prev = rr0;
    h.rhs_norm = report.rhs_norm;
    h.stop = stop;
    launch_cpu_free(h);
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
  std::vector<Link> links_;  // the transfers a held part sends or receives (parts by index in the split)
  std::vector<std::vector<std::int64_t>> indices_;  // each held sender's packed indices
  int first_held_ = 0;  // parts_[i] is part first_held_ + i of the split
  bool across_devices_ = false;  // some transfer goes between two devices
  std::unique_ptr<detail::SplitTransport<Comm>> transport_;
  int sum_slots_ = 0;                      // collective Comm: parts' sums a device holds
  PinnedBuffer<double> host_totals_{4};    // collective Comm: the first device's totals
  // Persistent.
  unsigned total_blocks_ = 0;
  bool warp_rows_ = false;  // every part's rows a warp a row (the CPU-free kernels)
  DeviceBuffer<detail::GridBarrierState> barrier_;  // on the first device (over Nvshmem: every PE's, PE 0's used)
  detail::GridBarrierState* barrier_at_ = nullptr;  // the one the kernels meet at
  bool system_scope_ = false;  // the kernels' barrier spans devices
  PinnedBuffer<detail::CgDeviceState> host_state_{1};
  PinnedBuffer<detail::SplitPipelinedState> host_pipelined_{1};
  PinnedBuffer<detail::GridBarrierState> host_barrier_{1};
  std::uint64_t comm_timeout_ns_;  // the CPU-free variants' waits: the Comm's timeout_ns (0: none)
  unsigned absent_blocks_ = 0;  // test hook
  std::uint64_t timeout_ns_ = comm_timeout_ns_;
};

}  // namespace relax
