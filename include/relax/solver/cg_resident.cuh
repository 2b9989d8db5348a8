#pragma once
//! \file
//! The kernel of `relax::GridResident`: Chronopoulos–Gear CG (the recurrences and per-unknown
//! operations of `cg_persistent_single`) in one cooperative grid of at most one block per SM, each
//! thread keeping x, r, p, s and w of its unknowns in registers for the whole solve.
//!
//! `cg_persistent_single` reads and writes five vectors of every unknown in each iteration and
//! recomputes each neighbour's r' from three more (ncu at 256², float64: 936 instructions a warp
//! an iteration, 12.7 cycles apart). Here a block owns a contiguous range of unknowns, and an
//! iteration touches global memory only where the rows of A reach outside it:
//!
//! - each block publishes r', w' and s of its unknowns (two parities of each, as in
//!   `cg_persistent_single`), and recomputes a neighbour's r' = r − α (w + β s) from what that
//!   neighbour published an iteration earlier: the owner's operations on the owner's operands, so
//!   the same bits, and one grid barrier an iteration;
//! - the block's window, the range of unknowns its rows reach (found once, at the start), is
//!   kept in shared memory: right after the barrier every thread starts asynchronous copies of the
//!   neighbours' r, w and s in it while warp 0 adds the blocks' partial sums, and once α and β
//!   are known the window holds r' of every unknown the rows read. A block whose window does not
//!   fit in its shared memory reads the neighbours from global memory in its rows instead;
//! - warp 0 adds the partials of every block in one fixed order (lane l the blocks l, l + 32,
//!   ..., then the lanes by an XOR butterfly), so every block takes the same decision on the same
//!   bits.
//!
//! The partials and the published vectors alternate between two parities by iteration: a block
//! writes those of iteration i + 2 only after the barrier of iteration i + 1, which no block
//! passes before every block has read those of iteration i.

#include <relax/agent/async_copy.cuh>
#include <relax/core/arith.hpp>
#include <relax/primitives/grid_barrier.cuh>
#include <relax/primitives/reduce.cuh>
#include <relax/solver/cg_kernels.cuh>
#include <relax/stencil/operator.hpp>
#include <relax/strategy/tuning.hpp>

#include <cstdint>

namespace relax::detail {

static_assert(tuning::cg_resident_threads == dot_block, "GridResident's block reduction is block_sum2 (dot_block threads)");

//! Unknowns a block of the grid-resident kernel owns at `M` per thread.
template <int M>
inline constexpr std::int64_t resident_cg_points = std::int64_t{tuning::cg_resident_threads} * M;

//! Shared-memory arrays of the grid-resident kernel: the window's r' and the neighbours' r, w and
//! s staged beside it, `capacity` unknowns each.
inline constexpr int resident_window_arrays = 4;

//! What the blocks of `cg_grid_resident` publish for each other's rows: r, w and s of every
//! unknown, in two parities.
template <class T>
struct ResidentVectors {
  T* r[2];
  T* w[2];
  T* s[2];
  //! The vectors of parity `p`, chosen by selects: an array indexed at run time would go to
  //! local memory.
  struct Parity {
    T* r;
    T* w;
    T* s;
  };
  __device__ Parity operator[](int p) const {
    return p != 0 ? Parity{r[1], w[1], s[1]} : Parity{r[0], w[0], s[0]};
  }
};

//! A row of A a thread applies at every iteration, located once: the unknown's index, and for a
//! stencil its coordinates, so that the row costs no division (the generic row splits k at
//! every call).
template <class Rows>
struct ResidentRow {
  std::int64_t k = 0;
  ResidentRow() = default;
  __device__ ResidentRow(const Rows&, std::int64_t unknown) : k(unknown) {}
  template <class Load>
  __device__ auto apply(const Rows& a, const Load& load) const {
    return a.row(k, load);
  }
};
template <class S>
struct ResidentRow<StencilRows<S>> {
  int x = 0, y = 0, z = 0;  // the grid-resident kernel holds fewer than 2³¹ unknowns
  ResidentRow() = default;
  __device__ ResidentRow(const StencilRows<S>& a, std::int64_t unknown) {
    const std::int64_t plane = a.nx * a.ny, at_z = unknown / plane, in_plane = unknown - at_z * plane;
    z = static_cast<int>(at_z);
    y = static_cast<int>(in_plane / a.nx);
    x = static_cast<int>(in_plane - std::int64_t{y} * a.nx);
  }
  template <class Load>
  __device__ auto apply(const StencilRows<S>& a, const Load& load) const {
    return a.row_at(x, y, S::rank == 2 ? 0 : z, load);
  }
};

//! The sum over every block of the grid of the partials in `partials` (one (γ, δ) per block), in
//! the same order and so with the same bits in every block: called by every thread of the block,
//! after the grid barrier that published them; `slot` is block-shared. Also waits for the
//! calling thread's asynchronous copies, which the block barrier then shares.
__device__ inline SumPair resident_all_reduce(const double2* partials, unsigned blocks, SumPair* slot) {
  if (threadIdx.x < 32) {
    double gamma = 0.0, delta = 0.0;
    for (unsigned b = threadIdx.x; b < blocks; b += 32) {
      const double2 v = __ldcg(partials + b);  // written by other SMs: through L2
      gamma += v.x;
      delta += v.y;
    }
    // The butterfly gives every lane the same tree (a + b and b + a are the same bits).
    for (int offset = 16; offset > 0; offset /= 2) {
      gamma += __shfl_xor_sync(0xffffffffu, gamma, offset);
      delta += __shfl_xor_sync(0xffffffffu, delta, offset);
    }
    if (threadIdx.x == 0) *slot = SumPair{gamma, delta};
  }
  wait_copies<0>();
  __syncthreads();
  return *slot;  // rewritten only after the next iteration's block reduction (two block barriers on)
}

//! A whole CG solve (`GridResident`) from x: launch `ceil(n / resident_cg_points<M>)` blocks (at
//! most one per SM) of `tuning::cg_resident_threads` threads cooperatively, with
//! `resident_window_arrays · capacity · sizeof(T)` bytes of dynamic shared memory,
//! `capacity` ≥ `resident_cg_points<M>`. Block b owns unknowns [b P, min(n, (b + 1) P)) with
//! P = `resident_cg_points<M>`; thread t of it unknowns b P + m · threads + t, m < M. The kernel
//! does what the host does around the other fused variants, so a solve is one launch and one
//! read: r = b − A x, ‖b‖ and (r, r) before the first decision (the state's `stop` and a zero
//! count on entry), and at the end ‖b − A x‖² of the iterate it leaves in x (`true_rr`); block 0
//! writes the state back. `partials`: two (γ, δ) per block ([parity][block]).
template <class T, class Rows, int M>
__global__ void __launch_bounds__(tuning::cg_resident_threads, 1)
    cg_grid_resident(Rows a, std::int64_t n, T* x, const T* __restrict__ b, ResidentVectors<T> v, CgDeviceState* st,
                     double2* partials, GridBarrier barrier, int capacity) {
  using arith::add;
  using arith::mul;
  using arith::sub;
  constexpr int threads = tuning::cg_resident_threads;
  constexpr std::int64_t P = resident_cg_points<M>;
  extern __shared__ __align__(16) unsigned char window_bytes[];
  __shared__ SumPair total;
  __shared__ long long reach[2];  // the least and the greatest unknown the block's rows read
  const unsigned blocks = gridDim.x;
  const std::int64_t lo = std::int64_t{blockIdx.x} * P;
  const std::int64_t owned_count = n - lo < P ? n - lo : P;
  const std::int64_t first = lo + threadIdx.x;
  // Unknown j is this block's (one unsigned compare: j − lo wraps for j < lo).
  auto owned = [=](std::int64_t j) {
    return static_cast<std::uint64_t>(j - lo) < static_cast<std::uint64_t>(owned_count);
  };
  auto held = [=](int m) { return threadIdx.x + std::int64_t{m} * threads < owned_count; };

  // The window: [lo − before, lo + owned_count + after), or the block's own unknowns alone
  // where it does not fit.
  if (threadIdx.x == 0) reach[0] = reach[1] = lo;
  __syncthreads();
#pragma unroll
  for (int m = 0; m < M; ++m) {
    if (!held(m)) continue;
    std::int64_t least = lo, greatest = lo;
    (void)a.row(first + std::int64_t{m} * threads, [&](std::int64_t j) {
      least = j < least ? j : least;
      greatest = j > greatest ? j : greatest;
      return T(0);
    });
    atomicMin(&reach[0], static_cast<long long>(least));
    atomicMax(&reach[1], static_cast<long long>(greatest));
  }
  __syncthreads();
  const std::int64_t reach_lo = reach[0], reach_hi = reach[1] + 1 > lo + owned_count ? reach[1] + 1 : lo + owned_count;
  const bool windowed = reach_hi - reach_lo <= capacity;
  const std::int64_t wlo = windowed ? reach_lo : lo;
  // The window's neighbours: `before` unknowns below the block's own, `after` above them; halo
  // entry e is at window position e (e < before) or e + owned_count.
  const int before = static_cast<int>(lo - wlo);
  const int halo = windowed ? static_cast<int>(reach_hi - reach_lo - owned_count) : 0;
  auto position = [=](int e) { return e < before ? e : e + static_cast<int>(owned_count); };
  T* const ext = reinterpret_cast<T*>(window_bytes);  // r' of the window (unknown j at j − wlo)
  T* const raw_r = ext + capacity;                    // the neighbours' r, w and s, staged
  T* const raw_w = raw_r + capacity;
  T* const raw_s = raw_w + capacity;
  T* const own = ext + before;
  // The neighbours' r, w (and s, from the second iteration on) of the window, copied without a
  // register holding them while warp 0 sums the partials.
  auto stage = [&](const typename ResidentVectors<T>::Parity& source, bool with_s) {
    for (int e = threadIdx.x; e < halo; e += threads) {
      const int at = position(e);
      const std::int64_t j = wlo + at;
      copy_async<sizeof(T)>(raw_r + at, source.r + j);
      copy_async<sizeof(T)>(raw_w + at, source.w + j);
      if (with_s) copy_async<sizeof(T)>(raw_s + at, source.s + j);
    }
    commit_copies();
  };
  // (A v)_k for the thread's m-th row, v read where the block keeps it: the window, or (a block
  // whose window does not fit) its own unknowns and `outside(j)` for the rest.
  auto apply = [&](const ResidentRow<Rows>& row, auto&& outside) {
    return windowed ? row.apply(a, [&](std::int64_t j) { return ext[j - wlo]; })
                    : row.apply(a, [&](std::int64_t j) { return owned(j) ? ext[j - wlo] : outside(j); });
  };
  // A block's two partial sums of a round, into the partials of the round's parity (rounds
  // alternate, as the published vectors do), and after the grid barrier every block's, summed.
  unsigned rounds = 0;  // grid barriers passed
  auto publish_partial = [&](const SumPair& mine) {
    const SumPair block = block_sum2(mine);
    if (threadIdx.x == 0) partials[(rounds & 1) * blocks + blockIdx.x] = make_double2(block.first, block.second);
  };
  auto all_reduce = [&] { return resident_all_reduce(partials + ((rounds - 1) & 1) * blocks, blocks, &total); };
  auto barrier_round = [&] { return barrier.arrive_and_wait_round(rounds++); };
  // The vector `v` of the window's neighbours, read from global memory (published before the
  // last barrier, or the input x).
  auto load_window = [&](const T* v) {
    for (int e = threadIdx.x; e < halo; e += threads) ext[position(e)] = v[wlo + position(e)];
  };
  // The thread's rows, located once (held(m) or not: a row past the block's unknowns is never applied).
  ResidentRow<Rows> rows[M];
#pragma unroll
  for (int m = 0; m < M; ++m) rows[m] = ResidentRow<Rows>(a, held(m) ? first + std::int64_t{m} * threads : lo);
  // (b − A x)_k of each of the thread's unknowns (the operations of `cg_start`), handed to
  // `each(m, k, residual)`: x (the thread's `xv`, its neighbours' in global memory) is first put
  // in the window.
  auto true_residuals = [&](const T (&xs)[M], auto&& each) {
#pragma unroll
    for (int m = 0; m < M; ++m)
      if (held(m)) own[m * threads + threadIdx.x] = xs[m];
    load_window(x);
    __syncthreads();
#pragma unroll
    for (int m = 0; m < M; ++m) {
      if (!held(m)) continue;
      const std::int64_t k = first + std::int64_t{m} * threads;
      each(m, k, sub(b[k], apply(rows[m], [&](std::int64_t j) { return x[j]; })));
    }
  };

  CgDeviceState s = *st;
  T xv[M], rv[M], pv[M], sv[M], wv[M];
  // Round 0: r = b − A x, ‖b‖² and γ = (r, r); r published (parity 0).
  {
    SumPair mine;
#pragma unroll
    for (int m = 0; m < M; ++m) {
      xv[m] = held(m) ? x[first + std::int64_t{m} * threads] : T(0);
      pv[m] = sv[m] = wv[m] = rv[m] = T(0);
    }
    true_residuals(xv, [&](int m, std::int64_t k, T r) {
      const T bk = b[k];
      rv[m] = r;
      v[0].r[k] = r;
      mine.first += static_cast<double>(bk) * static_cast<double>(bk);
      mine.second += static_cast<double>(r) * static_cast<double>(r);
    });
    publish_partial(mine);
    if (!barrier_round()) s.status = cg_barrier_failed;
    const SumPair sums = all_reduce();
    s.rhs_norm = sqrt(sums.first);
    s.rr = s.rr_prev = sums.second;
    s.true_rr = sums.second;  // the iterate's true residual while it is x
  }
  // Round 1: w = A r and δ = (w, r); w published (parity 0); then α.
  if (s.status == cg_ok && !cg_done(s)) {
    SumPair mine;
#pragma unroll
    for (int m = 0; m < M; ++m)
      if (held(m)) own[m * threads + threadIdx.x] = rv[m];
    load_window(v[0].r);
    __syncthreads();
#pragma unroll
    for (int m = 0; m < M; ++m) {
      if (!held(m)) continue;
      const std::int64_t k = first + std::int64_t{m} * threads;
      wv[m] = apply(rows[m], [&](std::int64_t j) { return v[0].r[j]; });
      v[0].w[k] = wv[m];
      mine.second += static_cast<double>(wv[m]) * static_cast<double>(rv[m]);
    }
    publish_partial(mine);
    if (!barrier_round()) s.status = cg_barrier_failed;
    stage(v[0], false);
    const SumPair sums = all_reduce();
    if (s.status == cg_ok) cg_single_start(s, sums.second);
  }
  double beta = 0.0;
  while (s.status == cg_ok && !cg_done(s)) {
    const long long i = s.iterations;
    const int in = static_cast<int>(i & 1), out = in ^ 1;
    const bool first_iteration = i == 0;  // p and s of iteration −1 are 0 (never read)
    const T al = static_cast<T>(s.alpha_prev), be = static_cast<T>(beta);
    // r' = r − α (w + β s) from r, w and s (s read only after the first iteration), the
    // operations of every variant of this family.
    auto next_residual = [=](const T* r_j, const T* w_j, const T* s_j) {
      return sub(*r_j, mul(al, first_iteration ? *w_j : add(*w_j, mul(be, *s_j))));
    };
#pragma unroll
    for (int m = 0; m < M; ++m) {  // as cg_persistent_single, on the registers
      cg_single_update(pv[m], sv[m], rv[m], xv[m], wv[m], al, be, first_iteration);
      if (held(m)) own[m * threads + threadIdx.x] = rv[m];  // every read of the last r ended at the last barrier
    }
    for (int e = threadIdx.x; e < halo; e += threads) {  // the window's neighbours, as their owners do
      const int at = position(e);
      ext[at] = next_residual(raw_r + at, raw_w + at, raw_s + at);
    }
    __syncthreads();
    const auto source = v[in], target = v[out];
    // A neighbour outside the window: its r' from what its owner published.
    auto neighbour = [=](std::int64_t j) { return next_residual(source.r + j, source.w + j, source.s + j); };
    SumPair mine;
#pragma unroll
    for (int m = 0; m < M; ++m) {
      if (!held(m)) continue;
      const std::int64_t k = first + std::int64_t{m} * threads;
      wv[m] = apply(rows[m], neighbour);
      target.r[k] = rv[m];
      target.w[k] = wv[m];
      target.s[k] = sv[m];
      mine.first += static_cast<double>(rv[m]) * static_cast<double>(rv[m]);
      mine.second += static_cast<double>(wv[m]) * static_cast<double>(rv[m]);
    }
    publish_partial(mine);
    if (!barrier_round()) {
      s.status = cg_barrier_failed;
      break;
    }
    stage(target, true);
    if (!cg_single_step(s, all_reduce(), beta)) break;
  }
  // Every block takes the same decisions, so all leave the loop at the same iteration. Where x
  // moved, two more rounds give its true residual: x published (in x itself), then ‖b − A x‖².
#pragma unroll
  for (int m = 0; m < M; ++m)
    if (held(m)) x[first + std::int64_t{m} * threads] = xv[m];
  if (s.iterations > 0 && s.status != cg_barrier_failed) {
    SumPair mine;
    if (barrier_round()) {
      true_residuals(xv, [&](int, std::int64_t, T t) { mine.first += static_cast<double>(t) * static_cast<double>(t); });
      publish_partial(mine);
      if (barrier_round()) s.true_rr = all_reduce().first;
      else s.status = cg_barrier_failed;
    } else {
      s.status = cg_barrier_failed;
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *st = s;
}

}  // namespace relax::detail
