#pragma once
//! \file
//! CG's operator on k sub-domains: each part's rows on its own device, applied to its local
//! vector (owned entries and halo, `multi/split_layout.hpp`), and the layout that says which
//! entries each part sends the others before a product.
//!
//! - `CsrPartOperator<T>`: the rows of one part of a CSR split by rows (`relax::partition`), its
//!   columns local; the SpMV of `CsrOperator` (the same arithmetic, chosen the same way), so each
//!   row sums the same products in the same order as the global SpMV: bit for bit the same y.
//! - `StencilSlabOperator<S>`: the rows of one slab of a stencil's box (`StencilRows<S>` on the
//!   global box, applied to the slab's lines only), reading the neighbours' lines from its halo:
//!   again the global product's bits.
//!
//! Each also has `apply_all`, the products of several of its parts on one device: CSR parts in one
//! launch (the same arithmetic per row), slabs one launch each.
//!
//! `split_csr` and `split_stencil` build a `SplitOperator`: the layout, the devices (one per
//! part, repeats allowed: several parts on one GPU) and the parts, each uploaded to its device.

#include <relax/core/buffer.hpp>
#include <relax/core/cuda_check.hpp>
#include <relax/core/device_scope.hpp>
#include <relax/core/error.hpp>
#include <relax/core/launch.hpp>
#include <relax/core/stream.hpp>
#include <relax/multi/split_layout.hpp>
#include <relax/sparse/csr.hpp>
#include <relax/sparse/device_csr.cuh>
#include <relax/sparse/partition.hpp>
#include <relax/stencil/operator.hpp>
#include <relax/stencil/traits.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace relax {

//! One product of a launch for several parts: y (the part's owned rows) = A_part x (its local
//! vector).
template <class Part>
struct PartProduct {
  const Part* op = nullptr;
  const typename Part::value_type* x = nullptr;
  typename Part::value_type* y = nullptr;
};

namespace detail {

//! The most parts one batched launch serves: each part's pointers travel in the kernel's
//! parameters, so a device with more parts takes several launches.
inline constexpr int batch_parts = 8;

//! One CSR part's product in a batched launch: `rows` owned rows.
template <class T>
struct CsrProduct {
  std::int64_t rows = 0;
  CsrRows<T> a{};
  const T* x = nullptr;
  T* y = nullptr;
};
template <class T>
struct CsrProducts {
  CsrProduct<T> part[batch_parts];
};

//! y = A x for product blockIdx.y of the batch, each on a grid of its own in x, a warp a row
//! (`Warp`, the arithmetic of `spmv_warp_per_row`, its body) or a thread a row (`CsrRows::row`,
//! that of `spmv_thread_per_row`): the same bits. Thread rows read through the ordinary path
//! (on the H200 a whole CG iteration on the StocF-1465 stand-in, 15 entries a row, took 0.208 ms
//! against 0.223 with `spmv_thread_per_row`'s read-only path), warp rows through the read-only
//! path. One
//! kernel a row mode keeps each at `csr_spmv`'s 32 registers (both modes in one kernel took 40:
//! fewer resident blocks, 15–30% slower on the stand-ins of 40 to 83 entries a row).
template <class T, bool Warp>
__global__ void csr_parts_spmv(CsrProducts<T> products) {
  const CsrProduct<T>& p = products.part[blockIdx.y];
  if constexpr (Warp) {
    warp_rows_spmv(p.rows, p.a.row_ptr, p.a.col, p.a.val, p.x, p.y);
  } else {
    const T* x = p.x;
    const auto load = [x](std::int32_t c) { return x[c]; };
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.rows; i += stride)
      p.y[i] = p.a.row(i, load);
  }
}

//! q = A p on the lines [first, first + count) of the slowest axis of `a`'s box (rows in 2D,
//! planes in 3D); p is read as `p[k − shift]` for global unknown k, q written from the slab's
//! first unknown. The walk of `stencil_apply_kernel`, over the slab's lines.
template <class S, class T>
__global__ void slab_apply_kernel(StencilRows<S> a, std::int64_t first, std::int64_t count, const T* __restrict__ p,
                                  std::int64_t shift, T* __restrict__ q) {
  const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x >= a.nx) return;
  const std::int64_t ys = S::rank == 2 ? first : 0, ye = S::rank == 2 ? first + count : a.ny;
  const std::int64_t zs = S::rank == 2 ? 0 : first, ze = S::rank == 2 ? 1 : first + count;
  const std::int64_t q_first = (zs * a.ny + ys) * a.nx;
  const auto load = [p, shift](std::int64_t k) { return p[k - shift]; };
  for (std::int64_t z = zs + blockIdx.z; z < ze; z += gridDim.z)
    for (std::int64_t y = ys + static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; y < ye;
         y += static_cast<std::int64_t>(gridDim.y) * blockDim.y)
      q[(z * a.ny + y) * a.nx + x - q_first] = a.row_at(x, y, z, load);
}

}  // namespace detail

//! One part of a CSR split by rows, on the device that was current when it was made.
template <class T>
class CsrPartOperator {
 public:
  using value_type = T;

  //! Uploads the local matrix of `part` (its columns local: owned, then halo).
  //! \throws relax::invalid_argument if its local columns do not fit 32-bit indices.
  explicit CsrPartOperator(const CsrPart<T>& part) : rows_(part.rows), nnz_(part.nnz()) {
    detail::require(part.columns() <= std::numeric_limits<std::int32_t>::max(), "part columns", part.columns(),
                    "fewer than 2^31 local columns (32-bit column indices)");
    row_ptr_ = DeviceBuffer<std::int64_t>(part.row_ptr.size());
    col_ = DeviceBuffer<std::int32_t>(part.col_idx.size());
    val_ = DeviceBuffer<T>(part.values.size());
    const std::vector<std::int32_t> col(part.col_idx.begin(), part.col_idx.end());
    RELAX_CUDA_CHECK(cudaMemcpy(row_ptr_.data(), part.row_ptr.data(), row_ptr_.bytes(), cudaMemcpyHostToDevice));
    if (nnz_ > 0) {
      RELAX_CUDA_CHECK(cudaMemcpy(col_.data(), col.data(), col_.bytes(), cudaMemcpyHostToDevice));
      RELAX_CUDA_CHECK(cudaMemcpy(val_.data(), part.values.data(), val_.bytes(), cudaMemcpyHostToDevice));
    }
    RELAX_CUDA_CHECK(cudaDeviceSynchronize());  // pageable copies: complete before a non-blocking stream reads
  }

  //! y (its owned rows) = A_local x (the local vector: owned entries, then halo), on `stream`.
  void apply(const T* x, T* y, cudaStream_t stream) const {
    detail::csr_spmv(rows_, nnz_, row_ptr_.data(), col_.data(), val_.data(), x, y, stream);
  }

  //! Every product of `products` (parts on the current device), on `stream`: one launch for the
  //! parts whose rows a thread applies and one for those a warp applies (`batch_parts` at a
  //! time; one part too, so k = 1 and k = 2 run the same kernels), each row's arithmetic that of
  //! `apply`.
  static void apply_all(const PartProduct<CsrPartOperator>* products, int count, cudaStream_t stream) {
    for (const bool warp : {false, true}) {
      detail::CsrProducts<T> batch;
      int n = 0;
      std::int64_t work = 1;
      auto launch = [&] {
        if (n == 0) return;
        constexpr int threads = 256;
        const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((work + threads - 1) / threads, 65535));
        const dim3 grid(blocks, static_cast<unsigned>(n));
        if (warp) detail::csr_parts_spmv<T, true><<<grid, threads, 0, stream>>>(batch);
        else detail::csr_parts_spmv<T, false><<<grid, threads, 0, stream>>>(batch);
        RELAX_CUDA_CHECK_LAUNCH();
        n = 0;
        work = 1;
      };
      for (int i = 0; i < count; ++i) {
        const CsrPartOperator& op = *products[i].op;
        if (op.warp_rows() != warp) continue;
        batch.part[n++] = {op.rows_, op.rows(), products[i].x, products[i].y};
        work = std::max(work, warp ? op.rows_ * 32 : op.rows_);
        if (n == detail::batch_parts) launch();
      }
      launch();
    }
  }

  using rows_type = CsrRows<T>;
  //! Its rows for device code: `row(i, load)` is (A v)_i for owned row i, v read through
  //! `load(local column)` (the CPU-free CG's kernel).
  rows_type rows() const { return {row_ptr_.data(), col_.data(), val_.data()}; }
  //! Whether its rows are long enough for a warp per row (`apply` chooses the same way; the
  //! CPU-free CG's kernels then use `rows().warp_row`).
  bool warp_rows() const { return static_cast<double>(nnz_) >= detail::warp_per_row_min_mean * static_cast<double>(rows_); }

 private:
  std::int64_t rows_ = 0, nnz_ = 0;
  DeviceBuffer<std::int64_t> row_ptr_;
  DeviceBuffer<std::int32_t> col_;
  DeviceBuffer<T> val_;
};

//! The rows of one slab for device code: `row(i, load)` is (A v) at the slab's owned unknown i,
//! v read through `load(local index)`.
template <class S>
struct SlabRows {
  using value_type = typename S::value_type;
  StencilRows<S> global;
  std::int64_t global_first = 0;  //!< global unknown of owned index 0
  std::int64_t shift = 0;         //!< global unknown k is local index k − shift
  template <class Load>
  RELAX_HOST_DEVICE value_type row(std::int64_t i, const Load& load) const {
    const std::int64_t s = shift;
    return global.row(global_first + i, [load, s](std::int64_t k) { return load(k - s); });
  }
};

//! One slab of a stencil's box: the lines [first, first + count) of its slowest axis.
template <class S>
class StencilSlabOperator {
 public:
  using value_type = typename S::value_type;
  using rows_type = SlabRows<S>;

  //! The slab of `layout`'s part on `rows` (the stencil on the global box).
  StencilSlabOperator(const StencilRows<S>& rows, const PartLayout& part) : rows_(rows) {
    line_ = S::rank == 3 ? rows.nx * rows.ny : rows.nx;
    first_ = part.global_first / line_;
    count_ = part.owned / line_;
    shift_ = part.global_first - part.owned_offset;
  }

  //! y (its owned unknowns) = A x, x its local vector (the line below, owned lines, the line above).
  void apply(const value_type* x, value_type* y, cudaStream_t stream) const {
    const dim3 block(32, 8);
    const bool plane = S::rank == 3;
    const dim3 grid(static_cast<unsigned>(detail::tile_count(rows_.nx, block.x)),
                    static_cast<unsigned>(std::min<std::int64_t>(detail::tile_count(plane ? rows_.ny : count_, block.y), 65535)),
                    static_cast<unsigned>(std::min<std::int64_t>(plane ? count_ : 1, 65535)));
    detail::slab_apply_kernel<<<grid, block, 0, stream>>>(rows_, first_, count_, x, shift_, y);
    RELAX_CUDA_CHECK_LAUNCH();
  }

  //! Every product of `products` on `stream`, one launch each (a slab's product is one large
  //! launch already: k = 2 costs a few per cent over k = 1 on the 4096² Poisson slabs).
  static void apply_all(const PartProduct<StencilSlabOperator>* products, int count, cudaStream_t stream) {
    for (int i = 0; i < count; ++i) products[i].op->apply(products[i].x, products[i].y, stream);
  }

  rows_type rows() const { return {rows_, first_ * line_, shift_}; }
  bool warp_rows() const { return false; }  //!< a stencil's rows are short: a thread per row

 private:
  StencilRows<S> rows_;
  std::int64_t line_ = 1, first_ = 0, count_ = 0, shift_ = 0;
};

//! An operator split into parts: what `MultiCG` solves with. The layout describes every part;
//! this process holds the parts [first_held, first_held + parts.size()) of it (all of them,
//! unless the split was made for one rank of several processes: `split_csr_of_rank`).
template <class Part>
struct SplitOperator {
  using part_type = Part;
  using value_type = typename Part::value_type;
  SplitLayout layout;
  std::vector<int> devices;  //!< held part i (part first_held + i) lives on devices[i]
  std::vector<Part> parts;   //!< the held parts
  int first_held = 0;

  int size() const { return static_cast<int>(parts.size()); }              //!< parts held here
  int total() const { return static_cast<int>(layout.parts.size()); }      //!< parts of the split
  bool whole() const { return first_held == 0 && size() == total(); }     //!< every part held here
};

namespace detail {
//! The parts `held` of `layout`, held part i on devices[i], made by `make(part index)`.
template <class Part, class Make>
SplitOperator<Part> make_split(SplitLayout layout, std::vector<int> devices, Make&& make, RankParts held = {0, -1}) {
  require_devices(devices);
  if (held.count < 0) held = {0, static_cast<int>(layout.parts.size())};
  require(devices.size() == static_cast<std::size_t>(held.count), "devices", devices.size(), "one device per part held");
  SplitOperator<Part> out{std::move(layout), std::move(devices), {}, held.first};
  out.parts.reserve(out.devices.size());
  for (std::size_t i = 0; i < out.devices.size(); ++i) {
    const DeviceScope on(out.devices[i]);
    out.parts.push_back(make(static_cast<std::size_t>(held.first) + i));
  }
  return out;
}
}  // namespace detail

//! The parts of a CSR split by rows (every part of one matrix, in part order: `relax::partition`,
//! or `read_matrix_market_part` for each index), part p on `devices[p]`.
//! \throws relax::invalid_argument for bad devices, a device count other than the parts', or
//!         parts that do not fit together.
template <class T>
SplitOperator<CsrPartOperator<T>> split_csr(const std::vector<CsrPart<T>>& parts, std::vector<int> devices) {
  return detail::make_split<CsrPartOperator<T>>(csr_split_layout(parts), std::move(devices),
                                               [&](std::size_t p) { return CsrPartOperator<T>(parts[p]); });
}

//! The square symmetric matrix `a` (checked as `CsrOperator` checks it) split by rows into one
//! part per entry of `devices` (repeats allowed), balanced as `balance` says.
//! \throws relax::invalid_argument for an invalid, non-square or asymmetric matrix, bad devices,
//!         or more parts than rows.
template <class T>
SplitOperator<CsrPartOperator<T>> split_csr(const Csr<T>& a, std::vector<int> devices, Balance balance = Balance::rows,
                                           const CsrSymmetry& symmetry = {}) {
  require_square_symmetric(a, "A", symmetry);
  detail::require_devices(devices);
  const int k = static_cast<int>(devices.size());
  return split_csr(symmetry.symmetrise ? partition(symmetric_part(a), k, balance) : partition(a, k, balance),
                   std::move(devices));
}

//! Rank `rank`'s parts of `a` split by rows into `parts` parts dealt to `ranks` processes
//! (`rank_parts`), on this process's `device`: every process passes the same matrix and counts,
//! so all build the same layout; each uploads only its own parts. With `relax::Nccl` and the
//! program's communicator (`Nccl::comm`, its rank `rank` of `ranks`), `MultiCG` solves on them.
//! \throws relax::invalid_argument as `split_csr`, and for counts `rank_parts` refuses.
template <class T>
SplitOperator<CsrPartOperator<T>> split_csr_of_rank(const Csr<T>& a, int parts, int ranks, int rank, int device,
                                                   Balance balance = Balance::rows, const CsrSymmetry& symmetry = {}) {
  require_square_symmetric(a, "A", symmetry);
  const RankParts held = rank_parts(parts, ranks, rank);
  const std::vector<CsrPart<T>> all =
      symmetry.symmetrise ? partition(symmetric_part(a), parts, balance) : partition(a, parts, balance);
  return detail::make_split<CsrPartOperator<T>>(
      csr_split_layout(all), std::vector<int>(static_cast<std::size_t>(held.count), device),
      [&](std::size_t p) { return CsrPartOperator<T>(all[p]); }, held);
}

namespace detail {
//! Every rank's `mine` (any length), in rank order, through a transport's all-gather of a fixed
//! count of words per rank (`all_gather(source, destination, count, stream)` on device buffers
//! from `buffer(count)`, collective): the lengths first, then the words padded to the longest.
template <class Buffer, class AllGather>
std::vector<std::vector<std::int64_t>> gather_words(const std::vector<std::int64_t>& mine, int ranks, Buffer&& buffer,
                                                   AllGather&& all_gather) {
  Stream stream;
  auto round = [&](std::vector<std::int64_t> words, std::size_t count) {
    words.resize(count, 0);
    DeviceBuffer<std::int64_t> source = buffer(count), destination = buffer(count * static_cast<std::size_t>(ranks));
    std::vector<std::int64_t> out(count * static_cast<std::size_t>(ranks));
    RELAX_CUDA_CHECK(cudaMemcpyAsync(source.data(), words.data(), count * sizeof(std::int64_t), cudaMemcpyHostToDevice,
                                     stream.get()));
    all_gather(source.data(), destination.data(), count, stream.get());
    RELAX_CUDA_CHECK(cudaMemcpyAsync(out.data(), destination.data(), out.size() * sizeof(std::int64_t),
                                     cudaMemcpyDeviceToHost, stream.get()));
    stream.synchronize();
    return out;
  };
  const std::vector<std::int64_t> lengths = round({static_cast<std::int64_t>(mine.size())}, 1);
  const auto longest = static_cast<std::size_t>(*std::max_element(lengths.begin(), lengths.end()));
  const std::vector<std::int64_t> words = round(mine, std::max<std::size_t>(longest, 1));
  std::vector<std::vector<std::int64_t>> every(static_cast<std::size_t>(ranks));
  for (std::size_t r = 0; r < every.size(); ++r) {
    const auto first = words.begin() + static_cast<std::ptrdiff_t>(r * std::max<std::size_t>(longest, 1));
    every[r].assign(first, first + lengths[r]);
  }
  return every;
}

//! Rank `rank`'s parts of a CSR split into `parts` parts dealt to `ranks` processes, from those
//! parts alone (`mine`: parts rank_parts(parts, ranks, rank), in order): every rank's part
//! shapes (`csr_part_words`) go to every rank through `gather`, which takes this rank's words
//! and returns every rank's, in rank order, each rank's first word its status (1: its parts
//! were accepted, 0: refused); each rank builds the whole layout from them. Every rank calls it
//! together, and all throw if one refused its parts.
template <class T, class Gather>
SplitOperator<CsrPartOperator<T>> split_csr_gathered(const std::vector<CsrPart<T>>& mine, int parts, int ranks,
                                                    int rank, int device, Gather&& gather) {
  std::exception_ptr local;
  RankParts held{};
  std::vector<std::int64_t> words{1};
  try {
    held = rank_parts(parts, ranks, rank);
    require(static_cast<int>(mine.size()) == held.count, "parts held", mine.size(),
            ("rank " + std::to_string(rank) + "'s " + std::to_string(held.count) + " parts (rank_parts)").c_str());
    for (int i = 0; i < held.count; ++i)
      require(mine[static_cast<std::size_t>(i)].index == held.first + i, "part index", mine[static_cast<std::size_t>(i)].index,
              ("part " + std::to_string(held.first + i) + " of " + std::to_string(parts) + " at place " + std::to_string(i) +
               " (rank_parts' order)")
                  .c_str());
    const std::vector<std::int64_t> shape = csr_part_words(mine);
    words.insert(words.end(), shape.begin(), shape.end());
  } catch (...) {
    local = std::current_exception();
    words = {0};
  }
  const std::vector<std::vector<std::int64_t>> every = gather(words);
  if (local) std::rethrow_exception(local);
  std::vector<std::int64_t> all;
  for (std::size_t r = 0; r < every.size(); ++r) {
    require(!every[r].empty() && every[r][0] == 1, "rank", r, "a rank whose parts were accepted (it refused its own)");
    all.insert(all.end(), every[r].begin() + 1, every[r].end());
  }
  SplitLayout layout = csr_split_layout_of_words(all);
  require(layout.parts.size() == static_cast<std::size_t>(parts), "parts", layout.parts.size(),
          ("the " + std::to_string(parts) + " parts every rank was given").c_str());
  return make_split<CsrPartOperator<T>>(
      std::move(layout), std::vector<int>(static_cast<std::size_t>(held.count), device),
      [&](std::size_t p) { return CsrPartOperator<T>(mine[p - static_cast<std::size_t>(held.first)]); }, held);
}
}  // namespace detail

namespace detail {
//! The slabs `held` of stencil `s`'s matrix on `e` split into `parts` slabs, held slab i on devices[i].
template <class S>
SplitOperator<StencilSlabOperator<S>> split_stencil_held(const S& s, const Extents& e, int parts,
                                                        std::vector<int> devices, RankParts held) {
  static_assert(S::radius == 1, "relax::split_stencil: stencils of radius 1 (one line of halo)");
  const StencilRows<S> rows = stencil_rows(s, e);
  require_devices(devices);
  SplitLayout layout = slab_split_layout(e, parts);
  const std::vector<PartLayout> slabs = layout.parts;
  return make_split<StencilSlabOperator<S>>(
      std::move(layout), std::move(devices), [&](std::size_t p) { return StencilSlabOperator<S>(rows, slabs[p]); },
      held);
}
}  // namespace detail

//! The matrix of stencil `s` on the box `e` (zero Dirichlet values outside, as
//! `StencilOperator`), split into one slab per entry of `devices` along its slowest axis.
//! \throws relax::invalid_argument for a box the stencil's rank does not match, bad devices, or
//!         more slabs than lines.
template <class S>
SplitOperator<StencilSlabOperator<S>> split_stencil(const S& s, const Extents& e, std::vector<int> devices) {
  const int parts = static_cast<int>(devices.size());
  return detail::split_stencil_held(s, e, parts, std::move(devices), {0, -1});
}

//! Rank `rank`'s slabs of `s`'s matrix on `e` split into `parts` slabs dealt to `ranks` processes
//! (`rank_parts`), on this process's `device`: the stencil's counterpart of `split_csr_of_rank`.
//! \throws relax::invalid_argument as `split_stencil`, and for counts `rank_parts` refuses.
template <class S>
SplitOperator<StencilSlabOperator<S>> split_stencil_of_rank(const S& s, const Extents& e, int parts, int ranks, int rank,
                                                           int device) {
  const RankParts held = rank_parts(parts, ranks, rank);
  return detail::split_stencil_held(s, e, parts, std::vector<int>(static_cast<std::size_t>(held.count), device), held);
}

}  // namespace relax
