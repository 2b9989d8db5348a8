#pragma once
//! \file
//! Kernels of the fused CG variants (`Fused`, `Graph`, `Persistent`, `Pipelined`). They take the
//! operator as its rows (`Operator::rows()`: `row(k, load)` computes (A v)_k with v read through
//! `load`), so a kernel can apply A to a vector it forms on the fly, and they keep the iteration's
//! scalars and its stopping decision on the device (`CgDeviceState`), so that a solve can run many
//! iterations between two looks from the host, or all of them in one kernel.
//!
//! Every reduction sums a fixed grid of `dot_blocks` blocks in block order (or, in the persistent
//! kernel, its own fixed grid), so results are reproducible run to run.

#include <relax/control/cg_report.hpp>
#include <relax/control/stop.hpp>
#include <relax/primitives/cg_updates.cuh>
#include <relax/primitives/grid_barrier.cuh>
#include <relax/primitives/reduce.cuh>
#include <relax/core/arith.hpp>
#include <relax/stencil/operator.hpp>
#include <relax/strategy/tuning.hpp>

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>

#include <cstdint>

namespace relax::detail {

//! The scalars of a fused CG solve, in device memory.
struct CgDeviceState {
  double rr = 0.0;       //!< (r, r) of the current residual (Pipelined: γ)
  double rr_prev = 0.0;  //!< (r, r) of the previous residual
  double pq = 0.0;       //!< (p, A p) of the current direction (Pipelined: δ = (w, r))
  double alpha_prev = 0.0;  //!< Pipelined: α of the previous iteration
  double norm_a = 0.0;      //!< Pipelined: the largest ‖w‖ / ‖r‖ seen at a checkpoint (≤ ‖A‖)
  long long exact_at = 0;   //!< Pipelined: the iteration at which r was last b − A x
  double rhs_norm = 0.0;    //!< ‖b‖₂, the scale of the stop criterion
  StopCriterion stop;       //!< decided on ‖r‖₂ = √rr; its cap counts the iterations of this run
  long long iterations = 0;  //!< iterations completed
  int status = cg_ok;
  //! Fused: the last completed iteration's x += α p is still to do. The update of x is deferred
  //! to the next iteration's first kernel, which reads p anyway (one pass over p instead of two);
  //! after the last iteration `cg_fused_finish_x` does it.
  int x_pending = 0;
  //! GridResident: ‖b − A x‖² of the iterate its kernel leaves in x (computed there).
  double true_rr = 0.0;
};

//! True when no further iteration may change anything: the stop criterion decided (converged,
//! capped, non-finite), or the iteration broke down. The host takes the same decision on the
//! state it reads back.
RELAX_HOST_DEVICE inline bool cg_done(const CgDeviceState& s) {
  return s.status != cg_ok || s.stop.decide(sqrt(s.rr), s.rhs_norm, s.iterations) != StopReason::go_on;
}

//! p_new = r + β p_old (β = 0 on the first iteration) and q = A p_new, computed from r and p_old
//! (A is applied to r + β p_old formed on the fly, so the direction update costs no pass of its
//! own), and the previous iteration's x += α p_old; then (p_new, q) into `st->pq`.
//! Launch: `dot_blocks` × `dot_block`.
template <class T, class Rows>
__global__ void __launch_bounds__(dot_block)
    cg_fused_direction(Rows a, std::int64_t n, const T* __restrict__ r, const T* __restrict__ p_old,
                       T* __restrict__ p_new, T* __restrict__ q, T* __restrict__ x, CgDeviceState* st,
                       double* partials, unsigned* arrivals) {
  const CgDeviceState s = *st;
  if (cg_done(s)) return;
  const double beta = s.iterations == 0 ? 0.0 : s.rr / s.rr_prev;
  if (!isfinite(beta)) {  // the same decision in every block
    if (blockIdx.x == 0 && threadIdx.x == 0) st->status = cg_non_finite;
    return;
  }
  const T b = static_cast<T>(beta);
  // α of the previous iteration; it passed cg_fused_update's checks with these same operands.
  const T alpha_prev = static_cast<T>(s.x_pending ? s.rr_prev / s.pq : 0.0);
  auto direction = [=](std::int64_t k) { return arith::add(r[k], arith::mul(b, p_old[k])); };
  double sum = 0.0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    if (s.x_pending) x[k] = arith::add(x[k], arith::mul(alpha_prev, p_old[k]));
    const T pk = direction(k);
    const T qk = a.row(k, direction);
    p_new[k] = pk;
    q[k] = qk;
    sum += static_cast<double>(pk) * static_cast<double>(qk);
  }
  finish_sum(block_sum(sum), partials, arrivals, [st](double total) {
    st->pq = total;
    st->x_pending = 0;
  });
}

//! α = rr / pq; r −= α q (x += α p is left pending for the next iteration's first kernel or
//! `cg_fused_finish_x`); then (r, r) becomes rr (and rr moves to rr_prev) and the iteration
//! counts. pᵀAp ≤ 0 or a non-finite α stops the solve with x and r untouched.
template <class T>
__global__ void __launch_bounds__(dot_block)
    cg_fused_update(std::int64_t n, const T* __restrict__ q, T* __restrict__ r, CgDeviceState* st,
                    double* partials, unsigned* arrivals) {
  const CgDeviceState s = *st;
  if (cg_done(s)) return;
  const double alpha = s.rr / s.pq;
  if (!(s.pq > 0.0) || !isfinite(alpha)) {
    if (blockIdx.x == 0 && threadIdx.x == 0)
      st->status = isfinite(s.rr) && isfinite(s.pq) ? cg_breakdown : cg_non_finite;
    return;
  }
  const T a = static_cast<T>(alpha);
  double sum = 0.0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    const T rk = arith::sub(r[k], arith::mul(a, q[k]));
    r[k] = rk;
    sum += static_cast<double>(rk) * static_cast<double>(rk);
  }
  finish_sum(block_sum(sum), partials, arrivals, [st, s](double total) {
    st->rr_prev = s.rr;
    st->rr = total;
    st->iterations = s.iterations + 1;
    st->x_pending = 1;
    if (!isfinite(total)) st->status = cg_non_finite;
  });
}

//! The pending x += α p of the last completed iteration, once a fused solve has stopped; `p` is
//! that iteration's direction.
template <class T>
__global__ void cg_fused_finish_x(std::int64_t n, const T* __restrict__ p, T* __restrict__ x,
                                  const CgDeviceState* st) {
  const CgDeviceState s = *st;
  if (!s.x_pending) return;
  const T a = static_cast<T>(s.rr_prev / s.pq);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride)
    x[k] = arith::add(x[k], arith::mul(a, p[k]));
}

//! The whole solve in one cooperative kernel: the two phases of `cg_fused_direction` and
//! `cg_fused_update` (x's update deferred in the same way) separated by grid-wide barriers, each reduction summed by every block from
//! the partials in block order (so all blocks take the same decisions), and the stopping decision
//! on the device. The state is read once and written back once by block 0.
template <class T, class Rows>
__global__ void __launch_bounds__(dot_block)
    cg_persistent(Rows a, std::int64_t n, T* __restrict__ x, T* __restrict__ r, T* p0, T* p1,
                  T* __restrict__ q, CgDeviceState* st, double* pq_partials, double* rr_partials,
                  GridBarrier barrier) {
  CgDeviceState s = *st;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const T* p_last = p0;  // the direction of the last completed iteration
  while (!cg_done(s)) {
    const T* p_old = s.iterations % 2 == 0 ? p0 : p1;
    T* p_new = s.iterations % 2 == 0 ? p1 : p0;
    const double beta = s.iterations == 0 ? 0.0 : s.rr / s.rr_prev;
    if (!isfinite(beta)) {
      s.status = cg_non_finite;
      break;
    }
    const T b = static_cast<T>(beta);
    const T alpha_prev = static_cast<T>(s.x_pending ? s.rr_prev / s.pq : 0.0);
    auto direction = [=](std::int64_t k) { return arith::add(r[k], arith::mul(b, p_old[k])); };
    double sum = 0.0;
    for (std::int64_t k = first; k < n; k += stride) {
      if (s.x_pending) x[k] = arith::add(x[k], arith::mul(alpha_prev, p_old[k]));  // deferred, as in Fused
      const T pk = direction(k);
      const T qk = a.row(k, direction);
      p_new[k] = pk;
      q[k] = qk;
      sum += static_cast<double>(pk) * static_cast<double>(qk);
    }
    s.x_pending = 0;
    sum = block_sum(sum);
    if (threadIdx.x == 0) pq_partials[blockIdx.x] = sum;
    if (!barrier.arrive_and_wait()) {
      s.status = cg_barrier_failed;
      break;
    }
    s.pq = ordered_sum(pq_partials, gridDim.x);
    const double alpha = s.rr / s.pq;
    if (!(s.pq > 0.0) || !isfinite(alpha)) {
      s.status = isfinite(s.rr) && isfinite(s.pq) ? cg_breakdown : cg_non_finite;
      break;
    }
    const T al = static_cast<T>(alpha);
    sum = 0.0;
    for (std::int64_t k = first; k < n; k += stride) {
      const T rk = arith::sub(r[k], arith::mul(al, q[k]));
      r[k] = rk;
      sum += static_cast<double>(rk) * static_cast<double>(rk);
    }
    sum = block_sum(sum);
    if (threadIdx.x == 0) rr_partials[blockIdx.x] = sum;
    if (!barrier.arrive_and_wait()) {
      s.status = cg_barrier_failed;
      break;
    }
    s.rr_prev = s.rr;
    s.rr = ordered_sum(rr_partials, gridDim.x);
    ++s.iterations;
    s.x_pending = 1;
    p_last = p_new;
    if (!isfinite(s.rr)) s.status = cg_non_finite;
  }
  if (s.x_pending && s.status != cg_barrier_failed) {  // the last iteration's x += α p (own points: no barrier)
    const T al = static_cast<T>(s.rr_prev / s.pq);
    for (std::int64_t k = first; k < n; k += stride) x[k] = arith::add(x[k], arith::mul(al, p_last[k]));
    s.x_pending = 0;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *st = s;
}

//! Chronopoulos–Gear's step on one unknown's values (the registers of the on-chip variants):
//! p = r + β p, s = w + β s, r −= α s, x += α p; on the first iteration p = r and s = w.
template <class T>
__device__ __forceinline__ void cg_single_update(T& p, T& s, T& r, T& x, T w, T alpha, T beta, bool first) {
  using namespace arith;
  p = first ? r : add(r, mul(beta, p));
  s = first ? w : add(w, mul(beta, s));
  r = sub(r, mul(alpha, s));
  x = add(x, mul(alpha, p));
}

//! Chronopoulos–Gear's α before its first iteration, from δ = (A r, r) (γ = (r, r) is the host's),
//! or the status that ends the solve. Shared by `cg_persistent_single` and `cg_cluster_resident`.
__device__ inline void cg_single_start(CgDeviceState& s, double delta) {
  s.pq = delta;
  s.alpha_prev = s.rr / s.pq;
  if (!(s.pq > 0.0) || !isfinite(s.alpha_prev))
    s.status = isfinite(s.rr) && isfinite(s.pq) ? cg_breakdown : cg_non_finite;
}

//! Chronopoulos–Gear after an iteration's reduction (`total`: γ' = (r', r'), δ' = (A r', r')):
//! counts the iteration, then β' (into `beta`) and α' for the next one. False where the solve
//! stops: the criterion decided, or a non-finite or non-positive scalar set the status.
__device__ inline bool cg_single_step(CgDeviceState& s, const SumPair& total, double& beta) {
  ++s.iterations;
  s.rr_prev = s.rr;
  s.rr = total.first;
  s.pq = total.second;
  if (!isfinite(s.rr)) {
    s.status = cg_non_finite;
    return false;
  }
  if (cg_done(s)) return false;
  beta = s.rr / s.rr_prev;
  const double denominator = s.pq - beta * s.rr / s.alpha_prev;  // pᵀAp of the next direction
  const double alpha = s.rr / denominator;
  if (!(denominator > 0.0) || !isfinite(alpha) || !isfinite(beta)) {
    s.status = isfinite(denominator) && isfinite(beta) ? cg_breakdown : cg_non_finite;
    return false;
  }
  s.alpha_prev = alpha;
  return true;
}

//! Chronopoulos–Gear CG (`PersistentSingleReduction`) in one cooperative kernel: one fused
//! reduction, γ = (r, r) and δ = (w, r) with w = A r, and so one grid barrier per iteration
//! (standard CG needs two: (p, A p), then (r, r)). Iteration i, from α, β (β = 0 at i = 0):
//!
//!     p = r + β p,  s = w + β s,  x += α p,  r' = r − α s,  w' = A r',
//!     γ' = (r', r'),  δ' = (w', r'),  β' = γ' / γ,  α' = γ' / (δ' − β' γ' / α).
//!
//! A r' is applied to r' formed on the fly from the neighbours' r, w and s (the same operations
//! as the owner's, so the same bits), so r, w and s alternate between two arrays by iteration
//! and p is only ever read where it was written. The partials alternate too: a block may write
//! iteration i + 1's before a slower block has read iteration i's. Before the loop, w = A r and
//! δ = (w, r) take one more barrier. In exact arithmetic the iterates are standard CG's; the
//! recurrence for α is the one rounding difference. The stopping decision is `cg_done`, as in
//! every fused variant; a denominator δ' − β' γ' / α (pᵀAp) that is not > 0 is a breakdown.
//! `v[0]`, `v[1]`: the two arrays of r, w and s in that order (v[2 k + parity]).
template <class T, class Rows>
__global__ void __launch_bounds__(dot_block, 3)
    cg_persistent_single(Rows a, std::int64_t n, T* __restrict__ x, T* r0, T* r1, T* w0, T* w1, T* s0, T* s1,
                         T* __restrict__ p, CgDeviceState* st, double* partials, GridBarrier barrier) {
  CgDeviceState s = *st;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const unsigned blocks = gridDim.x;
  // partials: [parity][γ | δ][block]
  auto gammas = [&](long long i) { return partials + (i % 2) * 2 * blocks; };
  auto deltas = [&](long long i) { return partials + (i % 2) * 2 * blocks + blocks; };
  // Before the loop: w = A r and δ = (w, r) (γ = (r, r) is the host's).
  {
    double delta = 0.0;
    for (std::int64_t k = first; k < n; k += stride) {
      const T wk = a.row(k, [=](std::int64_t j) { return r0[j]; });
      w0[k] = wk;
      delta += static_cast<double>(wk) * static_cast<double>(r0[k]);
    }
    delta = block_sum(delta);
    if (threadIdx.x == 0) deltas(1)[blockIdx.x] = delta;
    if (!barrier.arrive_and_wait()) s.status = cg_barrier_failed;
    if (s.status == cg_ok) cg_single_start(s, ordered_sum(deltas(1), blocks));
  }
  double beta = 0.0;
  while (s.status == cg_ok && !cg_done(s)) {
    const long long i = s.iterations;
    const T* r = i % 2 == 0 ? r0 : r1;
    const T* w = i % 2 == 0 ? w0 : w1;
    const T* s_old = i % 2 == 0 ? s1 : s0;  // s of iteration i − 1
    T* r_new = i % 2 == 0 ? r1 : r0;
    T* w_new = i % 2 == 0 ? w1 : w0;
    T* s_new = i % 2 == 0 ? s0 : s1;
    const T al = static_cast<T>(s.alpha_prev), be = static_cast<T>(beta);
    const bool first_iteration = i == 0;  // p and s of iteration −1 are 0 (never read)
    auto direction_s = [=](std::int64_t j) { return first_iteration ? w[j] : arith::add(w[j], arith::mul(be, s_old[j])); };
    auto residual = [=](std::int64_t j) { return arith::sub(r[j], arith::mul(al, direction_s(j))); };
    SumPair sums;
    // A batch of a thread's unknowns at a time, every load of the batch before any store: the
    // stores may alias r, w and s for the compiler (the arrays alternate), so a loop that stored
    // each unknown before reading the next waited for one round trip to L2 per unknown.
    constexpr int batch = static_cast<int>(tuning::cg_persistent_points_per_thread);
    for (std::int64_t k0 = first; k0 < n; k0 += batch * stride) {
      T pk[batch], sk[batch], rk[batch], wk[batch], xk[batch];
#pragma unroll
      for (int b = 0; b < batch; ++b) {
        const std::int64_t k = k0 + b * stride;
        if (k >= n) continue;
        pk[b] = first_iteration ? r[k] : arith::add(r[k], arith::mul(be, p[k]));
        sk[b] = direction_s(k);
        rk[b] = arith::sub(r[k], arith::mul(al, sk[b]));
        wk[b] = a.row(k, residual);
        xk[b] = x[k];
      }
#pragma unroll
      for (int b = 0; b < batch; ++b) {  // the unknowns in the same order as one at a time: the same sums
        const std::int64_t k = k0 + b * stride;
        if (k >= n) continue;
        p[k] = pk[b];
        s_new[k] = sk[b];
        x[k] = arith::add(xk[b], arith::mul(al, pk[b]));
        r_new[k] = rk[b];
        w_new[k] = wk[b];
        sums.first += static_cast<double>(rk[b]) * static_cast<double>(rk[b]);
        sums.second += static_cast<double>(wk[b]) * static_cast<double>(rk[b]);
      }
    }
    sums = block_sum2(sums);
    if (threadIdx.x == 0) {
      gammas(i)[blockIdx.x] = sums.first;
      deltas(i)[blockIdx.x] = sums.second;
    }
    if (!barrier.arrive_and_wait()) {
      s.status = cg_barrier_failed;
      break;
    }
    if (!cg_single_step(s, ordered_sum2(gammas(i), deltas(i), blocks), beta)) break;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *st = s;
}

//! Pipelined CG, first kernel of an iteration: γ = (r, r) and δ = (w, r) in one reduction, and
//! m = A w. Launch: `dot_blocks` × `dot_block`; `partials` holds 2 × dot_blocks values.
template <class T, class Rows>
__global__ void __launch_bounds__(dot_block)
    cg_pipelined_reduce(Rows a, std::int64_t n, const T* __restrict__ r, const T* __restrict__ w,
                        T* __restrict__ m, CgDeviceState* st, double* partials, unsigned* arrivals) {
  const CgDeviceState s = *st;
  if (cg_done(s)) return;  // decided at the last reduction (at the start: on r₀, by the host)
  double rr = 0.0, wr = 0.0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    const double rk = static_cast<double>(r[k]);
    rr += rk * rk;
    wr += static_cast<double>(w[k]) * rk;
    m[k] = a.row(k, ArrayLoad<T>{w});
  }
  const double rr_block = block_sum(rr);
  __syncthreads();  // block_sum's storage is reused
  const double wr_block = block_sum(wr);
  finish_sums2(rr_block, wr_block, partials, arrivals, [st](double total_rr, double total_wr) {
    st->rr_prev = st->rr;
    st->rr = total_rr;
    st->pq = total_wr;
  });
}

//! Pipelined CG, second kernel: α and β from γ, δ and the previous iteration's γ and α, then
//! z = m + β z, s = w + β s, p = r + β p, x += α p, r −= α s, w −= α z (Ghysels and Vanroose).
template <class T>
__global__ void __launch_bounds__(dot_block)
    cg_pipelined_update(std::int64_t n, const T* __restrict__ m, T* __restrict__ z, T* __restrict__ sv,
                        T* __restrict__ p, T* __restrict__ x, T* __restrict__ r, T* __restrict__ w,
                        CgDeviceState* st, double* partials, unsigned* arrivals) {
  const CgDeviceState s = *st;
  if (cg_done(s)) return;
  const bool first = s.iterations == 0;
  const double gamma = s.rr, delta = s.pq;
  const double beta = first ? 0.0 : gamma / s.rr_prev;
  const double denominator = first ? delta : delta - beta * gamma / s.alpha_prev;
  const double alpha = gamma / denominator;
  if (!(denominator > 0.0) || !isfinite(alpha) || !isfinite(beta)) {
    // A recurrence pᵀAp ≤ 0 is no proof of indefiniteness: the host checks it on p and A p.
    if (blockIdx.x == 0 && threadIdx.x == 0)
      st->status = isfinite(denominator) && isfinite(beta) ? cg_drift : cg_non_finite;
    return;
  }
  const T al = static_cast<T>(alpha), be = static_cast<T>(beta);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    using namespace arith;
    const T zk = first ? m[k] : add(m[k], mul(be, z[k]));
    const T sk = first ? w[k] : add(w[k], mul(be, sv[k]));
    const T pk = first ? r[k] : add(r[k], mul(be, p[k]));
    z[k] = zk;
    sv[k] = sk;
    p[k] = pk;
    x[k] = add(x[k], mul(al, pk));
    r[k] = sub(r[k], mul(al, sk));
    w[k] = sub(w[k], mul(al, zk));
  }
  finish_sum(0.0, partials, arrivals, [st, s, alpha](double) {
    st->alpha_prev = alpha;
    st->iterations = s.iterations + 1;
  });
}

//! `finish_sum` for four sums at once: `partials` holds 4 × gridDim.x values, the k-th sums
//! after the (k−1)-th; `write(totals)` gets the four totals, summed in block order.
template <class Write>
__device__ void finish_sums4(const double (&block)[4], double* partials, unsigned* arrivals, Write write) {
  if (threadIdx.x == 0)
    for (unsigned k = 1; k < 4; ++k) partials[k * gridDim.x + blockIdx.x] = block[k];  // published by finish_sum
  finish_sum(block[0], partials, arrivals, [partials, write](double first) {
    double totals[4] = {first, 0.0, 0.0, 0.0};
    for (unsigned k = 1; k < 4; ++k)
      for (unsigned b = 0; b < gridDim.x; ++b) totals[k] += __ldcg(partials + k * gridDim.x + b);
    write(totals);
  });
}

//! Pipelined CG's checkpoint, after `ax` = A x: t = b − A x, and in one reduction ‖t − r‖²,
//! ‖x‖², ‖w‖² and ‖r‖² (of the recurrence r); with `replace`, r = t. Then ‖A‖ ≥ ‖w‖ / ‖r‖ is
//! kept, and where `pipelined_gap_exceeds` (`CgOptions::switch_gap`, the reference's
//! `pipelined_checkpoint`) the status becomes `cg_gap`, which ends the run; otherwise, with
//! `replace`, r is b − A x from this iteration on (the host then recomputes w, s, z).
//! Launch: `dot_blocks` × `dot_block`; `partials` holds 4 × dot_blocks values.
template <class T>
__global__ void __launch_bounds__(dot_block)
    cg_pipelined_checkpoint(std::int64_t n, const T* __restrict__ b, const T* __restrict__ ax, T* __restrict__ r,
                            const T* __restrict__ x, const T* __restrict__ w, CgDeviceState* st, double* partials,
                            unsigned* arrivals, double epsilon, double factor, bool replace) {
  const CgDeviceState s = *st;
  if (cg_done(s)) return;
  double sums[4] = {0.0, 0.0, 0.0, 0.0};  // gap², xx, ww, rr
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    const T tk = b[k] - ax[k];
    const double rk = static_cast<double>(r[k]), d = static_cast<double>(tk) - rk;
    const double xk = static_cast<double>(x[k]), wk = static_cast<double>(w[k]);
    sums[0] += d * d;
    sums[1] += xk * xk;
    sums[2] += wk * wk;
    sums[3] += rk * rk;
    if (replace) r[k] = tk;
  }
  double block[4];
  for (int k = 0; k < 4; ++k) {
    block[k] = block_sum(sums[k]);
    __syncthreads();  // block_sum's storage is reused
  }
  finish_sums4(block, partials, arrivals, [st, s, epsilon, factor, replace](const double (&total)[4]) {
    const double norm_a = total[3] > 0.0 ? fmax(s.norm_a, sqrt(total[2] / total[3])) : s.norm_a;
    st->norm_a = norm_a;
    if (pipelined_gap_exceeds(sqrt(total[0]), s.iterations - s.exact_at, norm_a, sqrt(total[1]), s.rhs_norm, epsilon,
                              factor))
      st->status = cg_gap;
    else if (replace)
      st->exact_at = s.iterations;
  });
}

}  // namespace relax::detail
