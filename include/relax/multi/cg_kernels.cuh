#pragma once
//! \file
//! The kernel of the CPU-free CG on k sub-domains (`MultiCG<Part, Persistent>`): one cooperative
//! kernel per device runs every iteration of the parts on that device, its blocks split among
//! them; the blocks of every device's kernel share one grid barrier, and no host is in the loop.
//!
//! It is `cg_persistent`'s iteration (solver/cg_kernels.cuh), two barriers per iteration, with
//! the exchange folded into it:
//! - phase 1: p_new = r + β p_old and q = A p_new formed on the fly over the local vectors (the
//!   halo of r and p_old is current), the deferred x += α p_old; each part also forms p_new on its
//!   own halo (the owner forms the same entries from the same values, so they agree bit for bit);
//!   the blocks' partials of (p, q), then the barrier;
//! - phase 2: r_new = r − α q over the owned entries, and for every outgoing transfer the sender
//!   forms the same r_new entries and stores them straight into the reader's halo (r alternates
//!   between two arrays by iteration, so no store races a read); the partials of (r, r), then the
//!   barrier.
//! Every block adds all blocks' partials (every part's, in part order) in the same order, so all
//! take the same decision (`cg_done`) from the same scalars, and a solve repeats bit for bit.

#include <relax/core/arith.hpp>
#include <relax/primitives/grid_barrier.cuh>
#include <relax/primitives/reduce.cuh>
#include <relax/solver/cg_kernels.cuh>

#include <cstdint>

namespace relax::detail {

//! Parts of one device's kernel, at most.
inline constexpr int split_cg_max_parts = 8;
//! Devices whose kernels share one barrier, at most (each block writes its partials on all).
inline constexpr int split_cg_max_devices = 8;

//! One part in its device's kernel: its rows, its local vectors (owned entries at `offset`),
//! its blocks and its outgoing transfers.
template <class T, class Rows>
struct SplitCgPart {
  Rows rows;
  std::int64_t owned = 0, offset = 0, local_size = 0;
  T* x = nullptr;
  T* r[2] = {nullptr, nullptr};  //!< by iteration parity
  T* p[2] = {nullptr, nullptr};
  T* q = nullptr;                //!< owned entries
  unsigned first_block = 0, blocks = 0;  //!< within this kernel's grid
  unsigned links_begin = 0, links_end = 0;
};

//! One outgoing transfer of r: `count` owned entries (`indices`, or the run from `first`) into
//! the reader's r arrays at `dst[parity]` (already offset to the receive position).
template <class T>
struct SplitCgLink {
  const std::int64_t* indices = nullptr;
  std::int64_t first = 0, count = 0;
  T* dst[2] = {nullptr, nullptr};
};

template <class T, class Rows>
struct SplitCgTable {
  SplitCgPart<T, Rows> parts[split_cg_max_parts];
  int count = 0;
  const SplitCgLink<T>* links = nullptr;
  double* pq_boards[split_cg_max_devices] = {};  //!< every device's copy of the partials
  double* rr_boards[split_cg_max_devices] = {};
  int boards = 0;
  int home = 0;               //!< this device's board
  unsigned total_blocks = 0;  //!< every kernel's blocks
  unsigned first_block = 0;   //!< this kernel's block 0 among them
  CgDeviceState* state = nullptr;  //!< this device's copy; block 0 overall writes the outcome
};

//! Blocks per SM the kernel is compiled for: 4, as many as the single-domain `cg_persistent`
//! gets (64 registers). Left to itself ptxas gave this kernel 128 registers, so 2 blocks an SM.
inline constexpr int split_cg_min_blocks = 4;

template <class T, class Rows, cuda::thread_scope Scope>
__global__ void __launch_bounds__(dot_block, split_cg_min_blocks)
    split_cg_persistent(SplitCgTable<T, Rows> t, BasicGridBarrier<Scope> barrier) {
  int me = 0;
  while (me + 1 < t.count && blockIdx.x >= t.parts[me + 1].first_block) ++me;
  // The part's fields in registers (the table is indexed by a run-time part, so it lives in
  // local memory: read once, not in the loops; the first version read them there and took
  // 0.575 ms an iteration at 4096² against 0.373 for the single-domain Persistent).
  const SplitCgPart<T, Rows>& part = t.parts[me];
  const Rows rows = part.rows;
  const std::int64_t owned = part.owned, off = part.offset, halo = part.local_size - part.owned;
  T* const x = part.x;
  T* const r0 = part.r[0];
  T* const r1 = part.r[1];
  T* const p0 = part.p[0];
  T* const p1 = part.p[1];
  T* const q = part.q;
  const unsigned links_begin = part.links_begin, links_end = part.links_end;
  const std::int64_t stride = static_cast<std::int64_t>(part.blocks) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x - part.first_block) * blockDim.x + threadIdx.x;
  const unsigned global_block = t.first_block + blockIdx.x;
  const unsigned total_blocks = t.total_blocks;
  const double* const pq_home = t.pq_boards[t.home];
  const double* const rr_home = t.rr_boards[t.home];
  auto publish = [&](bool pq, double sum) {
    sum = block_sum(sum);
    if (threadIdx.x == 0)
      for (int d = 0; d < t.boards; ++d) (pq ? t.pq_boards[d] : t.rr_boards[d])[global_block] = sum;
  };
  CgDeviceState s = *t.state;
  const T* p_last = p0;
  while (!cg_done(s)) {
    const bool odd = s.iterations % 2 != 0;
    const T* r = odd ? r1 : r0;
    const T* p_old = odd ? p1 : p0;
    T* p_new = odd ? p0 : p1;
    T* r_new = odd ? r0 : r1;
    const double beta = s.iterations == 0 ? 0.0 : s.rr / s.rr_prev;
    if (!isfinite(beta)) {
      s.status = cg_non_finite;
      break;
    }
    const T b = static_cast<T>(beta);
    const T alpha_prev = static_cast<T>(s.x_pending ? s.rr_prev / s.pq : 0.0);
    auto direction = [=](std::int64_t j) { return arith::add(r[j], arith::mul(b, p_old[j])); };
    double sum = 0.0;
    for (std::int64_t k = first; k < owned; k += stride) {
      if (s.x_pending) x[off + k] = arith::add(x[off + k], arith::mul(alpha_prev, p_old[off + k]));
      const T pk = direction(off + k);
      const T qk = rows.row(k, direction);
      p_new[off + k] = pk;
      q[k] = qk;
      sum += static_cast<double>(pk) * static_cast<double>(qk);
    }
    for (std::int64_t h = first; h < halo; h += stride) {  // the halo's direction, formed here too
      const std::int64_t j = h < off ? h : h + owned;
      p_new[j] = direction(j);
    }
    s.x_pending = 0;
    publish(true, sum);
    if (!barrier.arrive_and_wait()) {
      s.status = cg_barrier_failed;
      break;
    }
    s.pq = ordered_sum(pq_home, total_blocks);
    const double alpha = s.rr / s.pq;
    if (!(s.pq > 0.0) || !isfinite(alpha)) {
      s.status = isfinite(s.rr) && isfinite(s.pq) ? cg_breakdown : cg_non_finite;
      break;
    }
    const T al = static_cast<T>(alpha);
    sum = 0.0;
    for (std::int64_t k = first; k < owned; k += stride) {
      const T rk = arith::sub(r[off + k], arith::mul(al, q[k]));
      r_new[off + k] = rk;
      sum += static_cast<double>(rk) * static_cast<double>(rk);
    }
    for (unsigned l = links_begin; l < links_end; ++l) {  // the readers' halos of r_new
      const SplitCgLink<T> link = t.links[l];
      T* const dst = odd ? link.dst[0] : link.dst[1];
      for (std::int64_t e = first; e < link.count; e += stride) {
        const std::int64_t i = link.indices ? link.indices[e] : link.first + e;
        dst[e] = arith::sub(r[off + i], arith::mul(al, q[i]));
      }
    }
    publish(false, sum);
    if (!barrier.arrive_and_wait()) {
      s.status = cg_barrier_failed;
      break;
    }
    s.rr_prev = s.rr;
    s.rr = ordered_sum(rr_home, total_blocks);
    ++s.iterations;
    s.x_pending = 1;
    p_last = p_new;
    if (!isfinite(s.rr)) s.status = cg_non_finite;
  }
  if (s.x_pending && s.status != cg_barrier_failed) {  // the last iteration's x += α p (own entries)
    const T al = static_cast<T>(s.rr_prev / s.pq);
    for (std::int64_t k = first; k < owned; k += stride) x[off + k] = arith::add(x[off + k], arith::mul(al, p_last[off + k]));
    s.x_pending = 0;
  }
  if (global_block == 0 && threadIdx.x == 0) *t.state = s;
}

}  // namespace relax::detail
