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
//!
//! `split_cg_pipelined` (`MultiCG<Part, PersistentPipelined>`, below) is pipelined CG's loop with
//! one barrier an iteration. Both kernels apply CSR rows that are long on average a warp per row
//! (`each_product`), other rows a thread per row: on stand-ins of 47 and 83 entries a row a thread
//! per row made the CPU-free CG 0.59× and 0.53× the host-controlled one, whose SpMV already took a
//! warp per row (`docs/results/h200/bench_multi_cg.json`). With warp rows the standard kernel
//! forms p (halo included) first and meets a third barrier before the product, which then loads
//! p once an entry instead of r and the old p.

#include <relax/core/arith.hpp>
#include <relax/primitives/grid_barrier.cuh>
#include <relax/primitives/reduce.cuh>
#include <relax/solver/cg_kernels.cuh>
#include <relax/sparse/device_csr.cuh>

#include <cstdint>
#include <type_traits>

namespace relax::detail {

//! Parts of one device's kernel, at most.
inline constexpr int split_cg_max_parts = 8;
//! Devices whose kernels share one barrier, at most (each block writes its partials on all).
inline constexpr int split_cg_max_devices = 8;

//! Whether `Rows` has `warp_row` (a warp per row: CSR rows).
template <class Rows>
struct has_warp_row : std::false_type {};
template <class T>
struct has_warp_row<CsrRows<T>> : std::true_type {};

//! `f(e, v)` for every e in [0, count) with v = (A u)_{index(e)}, u read through `load`: a thread
//! per e, or with `warp` (rows that have `warp_row`) a warp per row. Each warp then takes 32
//! consecutive e's, one row after another, lane j keeping row j's v, and calls f once per lane
//! for its own e: the work around the product stays coalesced (f called by lane 0 alone, for
//! every row, made the pipelined kernel 1.7x slower on the 47-entry stand-in,
//! `bench_multi_cg_iter_c36d9b5_3.json`). `first` and `stride`: this thread's place among the
//! threads of its part (whole warps).
template <class Rows, class Index, class Load, class F>
__device__ __forceinline__ void each_product(const Rows& rows, bool warp, std::int64_t count, std::int64_t first,
                                             std::int64_t stride, const Index& index, const Load& load, F&& f) {
  if constexpr (has_warp_row<Rows>::value) {
    if (warp) {
      const int lane = static_cast<int>(threadIdx.x % 32);
      for (std::int64_t base = first / 32 * 32; base < count; base += stride) {
        const int n = static_cast<int>(count - base < 32 ? count - base : 32);
        decltype(rows.warp_row(index(base), load, lane)) mine{};
        for (int j = 0; j < n; ++j) {
          const auto v = __shfl_sync(0xffffffffu, rows.warp_row(index(base + j), load, lane), 0);
          if (lane == j) mine = v;
        }
        if (lane < n) f(base + lane, mine);
      }
      return;
    }
  }
  for (std::int64_t e = first; e < count; e += stride) f(e, rows.row(index(e), load));
}

//! `f(e, v)` for every e in [0, count) as `each_product` computes it, but with `warp` one e a
//! warp (lane 0 calls f), for a sender's halo rows: there are few of them, and 32 rows a warp left
//! most warps idle and a tail of 32 dependent rows on the rest (the pipelined kernel's k = 2 cost
//! of 34-43% on the small long-row stand-ins, `bench_multi_cg_iter_cpufree_long_rows_3e2e89f.json`).
//! The same arithmetic, so the same bits.
template <class Rows, class Index, class Load, class F>
__device__ __forceinline__ void each_product_spread(const Rows& rows, bool warp, std::int64_t count, std::int64_t first,
                                                    std::int64_t stride, const Index& index, const Load& load, F&& f) {
  if constexpr (has_warp_row<Rows>::value) {
    if (warp) {
      const int lane = static_cast<int>(threadIdx.x % 32);
      for (std::int64_t e = first / 32; e < count; e += stride / 32) {  // warp-uniform
        const auto v = rows.warp_row(index(e), load, lane);
        if (lane == 0) f(e, v);
      }
      return;
    }
  }
  for (std::int64_t e = first; e < count; e += stride) f(e, rows.row(index(e), load));
}

//! One part in its device's kernel: its rows, its local vectors (owned entries at `offset`),
//! its blocks and its outgoing transfers.
template <class T, class Rows>
struct SplitCgPart {
  Rows rows;
  bool warp_rows = false;  //!< a warp per row (the part's `warp_rows()`)
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

//! One device's kernel: its parts (`Entry`: `SplitCgPart` or `SplitPipelinedPart`), their
//! outgoing transfers, every device's copy of the blocks' partials (`board_values` × `total_blocks`
//! doubles each) and the state the host reads back.
template <class Entry, class T, class State>
struct SplitKernelTable {
  Entry parts[split_cg_max_parts];
  int count = 0;
  const SplitCgLink<T>* links = nullptr;
  double* boards[split_cg_max_devices] = {};  //!< every device's copy of the partials
  int board_count = 0;
  int home = 0;               //!< this device's board
  unsigned total_blocks = 0;  //!< every kernel's blocks
  unsigned first_block = 0;   //!< this kernel's block 0 among them
  State* state = nullptr;     //!< this device's copy; the kernel's block 0 writes the outcome
};

//! Standard CG's board: (p, q) partials, then (r, r) partials, `total_blocks` each.
template <class T, class Rows>
using SplitCgTable = SplitKernelTable<SplitCgPart<T, Rows>, T, CgDeviceState>;

//! The part this block of the kernel works on (parts hold consecutive blocks).
template <class Table>
__device__ inline int split_part_of_block(const Table& t) {
  int me = 0;
  while (me + 1 < t.count && blockIdx.x >= t.parts[me + 1].first_block) ++me;
  return me;
}

//! Blocks per SM the kernel is compiled for: 4, as many as the single-domain `cg_persistent`
//! gets (64 registers). Left to itself ptxas gave this kernel 128 registers, so 2 blocks an SM.
inline constexpr int split_cg_min_blocks = 4;

template <class T, class Rows, cuda::thread_scope Scope>
__global__ void __launch_bounds__(dot_block, split_cg_min_blocks)
    split_cg_persistent(SplitCgTable<T, Rows> t, BasicGridBarrier<Scope> barrier) {
  const int me = split_part_of_block(t);
  // The part's fields in registers (the table is indexed by a run-time part, so it lives in
  // local memory: read once, not in the loops; the first version read them there and took
  // 0.575 ms an iteration at 4096² against 0.373 for the single-domain Persistent).
  const SplitCgPart<T, Rows>& part = t.parts[me];
  const Rows rows = part.rows;
  const bool warp = has_warp_row<Rows>::value && part.warp_rows;  // compile-time false for stencil rows
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
  const double* const pq_home = t.boards[t.home];
  const double* const rr_home = pq_home + total_blocks;
  auto publish = [&](bool pq, double sum) {
    sum = block_sum(sum);
    if (threadIdx.x == 0)
      for (int d = 0; d < t.board_count; ++d) t.boards[d][(pq ? 0 : total_blocks) + global_block] = sum;
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
    if (!warp) {
      for (std::int64_t k = first; k < owned; k += stride) {
        if (s.x_pending) x[off + k] = arith::add(x[off + k], arith::mul(alpha_prev, p_old[off + k]));
        const T pk = direction(off + k);
        const T qk = rows.row(k, direction);
        p_new[off + k] = pk;
        q[k] = qk;
        sum += static_cast<double>(pk) * static_cast<double>(qk);
      }
    } else {  // long rows: p first, then the product a warp a row, reading p (one load an entry)
      for (std::int64_t k = first; k < owned; k += stride) {
        if (s.x_pending) x[off + k] = arith::add(x[off + k], arith::mul(alpha_prev, p_old[off + k]));
        p_new[off + k] = direction(off + k);
      }
    }
    for (std::int64_t h = first; h < halo; h += stride) {  // the halo's direction, formed here too
      const std::int64_t j = h < off ? h : h + owned;
      p_new[j] = direction(j);
    }
    if (warp) {
      // Every part's p, halo included, before any row reads it: a third barrier an iteration,
      // cheaper on long rows than forming p on the fly (two loads an entry).
      if (!barrier.arrive_and_wait()) {
        s.status = cg_barrier_failed;
        break;
      }
      const T* const p_read = p_new;
      each_product(rows, true, owned, first, stride, [](std::int64_t k) { return k; },
                   [=](std::int64_t c) { return p_read[c]; }, [&](std::int64_t k, T qk) {
                     q[k] = qk;
                     sum += static_cast<double>(p_read[off + k]) * static_cast<double>(qk);
                   });
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
  if (blockIdx.x == 0 && threadIdx.x == 0) *t.state = s;  // every kernel its device's copy: the same decisions
}

// ---------------------------------------------------------------------------------------------
// The CPU-free pipelined CG (`MultiCG<Part, PersistentPipelined>`).

//! What ended a launch of `split_cg_pipelined`.
enum SplitPipelinedOutcome : int {
  pipelined_stopped = 0,     //!< the stop criterion decided (converged, capped or diverged)
  pipelined_checkpoint,      //!< the iteration is a multiple of the checkpoint interval
  pipelined_eta,             //!< η ≤ 0: the host checks pᵀAp and goes on with standard CG
  pipelined_non_finite,      //!< a scalar is NaN or infinite
  pipelined_barrier_failed,  //!< a grid barrier did not complete in time
};

//! The host loop's variables of pipelined CG (`MultiCG<..., Pipelined>::run_pipelined`), handed
//! to the kernel at a launch and read back at its end.
struct SplitPipelinedState {
  double gamma = 0.0, delta = 0.0;  //!< (r, r) and (w, r) of iteration `it`
  double gamma_prev = 0.0, alpha_prev = 0.0;
  double rhs_norm = 0.0;       //!< ‖b‖₂
  double replace_below = 0.0;  //!< residual replacement continues while √γ is above this
  StopCriterion stop;          //!< decided on √γ at iteration `it` of this run
  long long it = 0;            //!< the run's iteration
  long long replace = 1;       //!< the checkpoint interval (> 0)
  long long launch_iterations = 0;  //!< iterations this launch completed (odd: w, z in the second arrays)
  int replacing = 1;
  int outcome = pipelined_stopped;
};

//! One part in the pipelined kernel: its rows and local vectors (owned entries at `offset`); w and
//! z alternate between two arrays by the launch's iteration parity (w's halo is read).
template <class T, class Rows>
struct SplitPipelinedPart {
  Rows rows;
  bool warp_rows = false;
  std::int64_t owned = 0, offset = 0;
  T* x = nullptr;
  T* r = nullptr;
  T* p = nullptr;
  T* s = nullptr;
  T* z[2] = {nullptr, nullptr};
  T* w[2] = {nullptr, nullptr};
  unsigned first_block = 0, blocks = 0;
  unsigned links_begin = 0, links_end = 0;  //!< transfers of w, `dst[parity]` the readers' w arrays
};

//! The pipelined kernel's board: [parity][γ | δ][total_blocks].
template <class T, class Rows>
using SplitPipelinedTable = SplitKernelTable<SplitPipelinedPart<T, Rows>, T, SplitPipelinedState>;

//! Ghysels–Vanroose pipelined CG on the parts of one device, one grid barrier an iteration (the
//! host-controlled `Pipelined`'s arithmetic and decisions, `reference::cg_pipelined`'s loop):
//! after the barrier every block adds all blocks' partials of γ = (r, r) and δ = (w, r) in one
//! order and takes the same decisions; then in one pass over its rows m = A w (w's halo is
//! current), z = m + β z, s = w + β s, p = r + β p, x += α p, r −= α s, w −= α z, and the
//! partials of the next γ and δ; each sender forms the new w on its outgoing entries the same way
//! (the same operations on the same values, so the same bits: m's row and z) and stores them into
//! the readers' next w arrays. The reduction thus travels with the halo of w at one barrier, where
//! standard CG needs two. The launch ends at a checkpoint, a stop, η ≤ 0 or a non-finite scalar;
//! the host takes the checkpoint's residual replacement and the switch to standard CG.
template <class T, class Rows, cuda::thread_scope Scope>
__global__ void __launch_bounds__(dot_block, split_cg_min_blocks)
    split_cg_pipelined(SplitPipelinedTable<T, Rows> t, BasicGridBarrier<Scope> barrier) {
  const int me = split_part_of_block(t);
  const SplitPipelinedPart<T, Rows>& part = t.parts[me];
  const Rows rows = part.rows;
  const bool warp = has_warp_row<Rows>::value && part.warp_rows;  // compile-time false for stencil rows
  const std::int64_t owned = part.owned, off = part.offset;
  T* const x = part.x;
  T* const r = part.r;
  T* const p = part.p;
  T* const s = part.s;
  T* const z0 = part.z[0];
  T* const z1 = part.z[1];
  T* const w0 = part.w[0];
  T* const w1 = part.w[1];
  const unsigned links_begin = part.links_begin, links_end = part.links_end;
  const std::int64_t stride = static_cast<std::int64_t>(part.blocks) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x - part.first_block) * blockDim.x + threadIdx.x;
  const unsigned global_block = t.first_block + blockIdx.x;
  const unsigned total_blocks = t.total_blocks;
  auto publish = [&](long long parity, SumPair v) {
    v = block_sum2(v);
    if (threadIdx.x == 0)
      for (int d = 0; d < t.board_count; ++d) {
        double* const board = t.boards[d] + parity * 2 * total_blocks;
        board[global_block] = v.first;
        board[total_blocks + global_block] = v.second;
      }
  };
  SplitPipelinedState st = *t.state;
  long long j = 0;  // this launch's iterations: w and z of iteration j in the arrays of parity j % 2
  {
    SumPair v;
    for (std::int64_t k = first; k < owned; k += stride) {
      const double rk = static_cast<double>(r[off + k]);
      v.first += rk * rk;
      v.second += static_cast<double>(w0[off + k]) * rk;
    }
    publish(0, v);
  }
  bool met = barrier.arrive_and_wait();
  if (!met) st.outcome = pipelined_barrier_failed;
  while (met) {
    const double* const board = t.boards[t.home] + (j % 2) * 2 * total_blocks;
    const SumPair g = ordered_sum2(board, board + total_blocks, total_blocks);
    const double gamma = g.first, delta = g.second;
    st.gamma = gamma;
    st.delta = delta;
    st.replacing = st.replacing && sqrt(gamma) > st.replace_below;
    if (!isfinite(gamma) || !isfinite(delta)) {
      st.outcome = pipelined_non_finite;
      break;
    }
    if (st.stop.decide(sqrt(gamma), st.rhs_norm, st.it) != StopReason::go_on) {
      st.outcome = pipelined_stopped;
      break;
    }
    const bool first_it = st.it == 0;
    const double beta = first_it ? 0.0 : gamma / st.gamma_prev;
    const double eta = first_it ? delta : delta - beta * gamma / st.alpha_prev;
    if (!isfinite(eta) || !isfinite(beta)) {
      st.outcome = pipelined_non_finite;
      break;
    }
    if (!(eta > 0.0)) {
      st.outcome = pipelined_eta;
      break;
    }
    const double alpha = gamma / eta;
    if (!isfinite(alpha)) {
      st.outcome = pipelined_non_finite;
      break;
    }
    const T a = static_cast<T>(alpha), be = static_cast<T>(beta);
    const bool odd = j % 2 != 0;
    const T* const w = odd ? w1 : w0;
    const T* const z = odd ? z1 : z0;
    T* const w_next = odd ? w0 : w1;
    T* const z_next = odd ? z0 : z1;
    // z of owned row i from m = (A w)_i: the owner's and every sender's the same operations.
    auto z_of = [=](std::int64_t i, T m) { return first_it ? m : arith::add(m, arith::mul(be, z[off + i])); };
    auto w_load = [=](std::int64_t c) { return w[c]; };
    SumPair v;
    each_product(rows, warp, owned, first, stride, [](std::int64_t k) { return k; }, w_load, [&](std::int64_t k, T m) {
      const std::int64_t l = off + k;
      const T wk = w[l], rk = r[l];
      const T zk = z_of(k, m);
      const T sk = first_it ? wk : arith::add(wk, arith::mul(be, s[l]));
      const T pk = first_it ? rk : arith::add(rk, arith::mul(be, p[l]));
      const T r_new = arith::sub(rk, arith::mul(a, sk));
      const T w_new = arith::sub(wk, arith::mul(a, zk));
      z_next[l] = zk;
      s[l] = sk;
      p[l] = pk;
      x[l] = arith::add(x[l], arith::mul(a, pk));
      r[l] = r_new;
      w_next[l] = w_new;
      v.first += static_cast<double>(r_new) * static_cast<double>(r_new);
      v.second += static_cast<double>(w_new) * static_cast<double>(r_new);
    });
    for (unsigned n = links_begin; n < links_end; ++n) {  // the readers' halos of the next w
      const SplitCgLink<T> link = t.links[n];
      T* const dst = odd ? link.dst[0] : link.dst[1];
      auto owned_of = [link](std::int64_t e) { return link.indices ? link.indices[e] : link.first + e; };
      each_product_spread(rows, warp, link.count, first, stride, owned_of, w_load, [&](std::int64_t e, T m) {
        const std::int64_t i = owned_of(e);
        dst[e] = arith::sub(w[off + i], arith::mul(a, z_of(i, m)));
      });
    }
    publish((j + 1) % 2, v);
    st.gamma_prev = gamma;
    st.alpha_prev = alpha;
    ++st.it;
    ++j;
    if (!barrier.arrive_and_wait()) {
      st.outcome = pipelined_barrier_failed;
      break;
    }
    if (st.it % st.replace == 0) {
      st.outcome = pipelined_checkpoint;
      break;
    }
  }
  st.launch_iterations = j;
  if (blockIdx.x == 0 && threadIdx.x == 0) *t.state = st;  // every kernel its device's copy
}

}  // namespace relax::detail
