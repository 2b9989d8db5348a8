#pragma once
//! \file
//! Where the vectors of a CG on k sub-domains live and what each sub-domain sends its neighbours
//! before an operator product: host code, no CUDA (the device operators of
//! `multi/split_operator.cuh` are built from it, and it is host-tested).
//!
//! Part p owns the global unknowns [global_first, global_first + owned), in part order, so the
//! parts of a global vector are consecutive slices of it. Its local vector (the one A is applied
//! to) has `local_size` entries: the owned ones at `owned_offset`, and around them its halo, the
//! other parts' entries its rows read. A `HaloTransfer` moves `count` owned entries of part
//! `from` into part `to`'s local vector at [receive_offset, receive_offset + count): the entries
//! `indices` (owned local indices, packed in this order) or, with `indices` empty, the run that
//! starts at owned index `first`. Every halo entry of every part is written by exactly one
//! transfer.
//!
//! - A CSR split by rows (`relax::partition`): owned entries first (owned_offset 0), then the
//!   halo, ascending in global column, so each neighbour's entries are one run; a transfer sends
//!   the entries the sender's `sends` list names.
//! - A stencil's box split into slabs along its slowest axis (y in 2D, z in 3D; the slabs of
//!   `relax::Decomposition`): the local vector is the owned rows (planes) with one more line on
//!   each side that has a neighbour, so that the stencil reads its neighbours at their usual
//!   offsets; a transfer sends one line, contiguous.

#include <relax/core/error.hpp>
#include <relax/domain/decomposition.hpp>
#include <relax/domain/grid.hpp>
#include <relax/sparse/partition.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace relax {

//! One part's slice of the global vectors and its local vector.
struct PartLayout {
  std::int64_t global_first = 0;  //!< first global unknown it owns
  std::int64_t owned = 0;         //!< unknowns it owns
  std::int64_t owned_offset = 0;  //!< where they start in its local vector
  std::int64_t local_size = 0;    //!< owned entries and halo
};

//! One transfer of owned entries into another part's halo (see the file's comment).
struct HaloTransfer {
  int from = 0;
  int to = 0;
  std::int64_t count = 0;
  std::int64_t first = 0;                //!< the run's first owned index (when `indices` is empty)
  std::vector<std::int64_t> indices;     //!< owned local indices, packed in this order
  std::int64_t receive_offset = 0;       //!< where they land in `to`'s local vector
};

//! The layout of a CG on k parts: one `PartLayout` per part and every transfer, grouped by sender.
struct SplitLayout {
  std::vector<PartLayout> parts;
  std::vector<HaloTransfer> transfers;

  std::int64_t global_size() const { return parts.empty() ? 0 : parts.back().global_first + parts.back().owned; }

  //! Checks the invariants above (consecutive slices; every transfer inside both parts, its
  //! indices owned; the transfers into a part tile its halo exactly).
  //! \throws relax::invalid_argument naming the part or transfer that breaks one.
  void validate() const {
    detail::require(!parts.empty(), "split layout", 0, "at least one part");
    std::int64_t next = 0;
    std::vector<std::vector<char>> covered(parts.size());
    for (std::size_t p = 0; p < parts.size(); ++p) {
      const PartLayout& l = parts[p];
      detail::require(l.global_first == next && l.owned >= 1, "split layout part", p,
                      "consecutive slices of at least one unknown");
      detail::require(l.owned_offset >= 0 && l.owned_offset + l.owned <= l.local_size, "split layout part", p,
                      "its owned entries inside its local vector");
      next += l.owned;
      covered[p].assign(static_cast<std::size_t>(l.local_size), 0);
      for (std::int64_t k = 0; k < l.owned; ++k) covered[p][static_cast<std::size_t>(l.owned_offset + k)] = 1;
    }
    for (std::size_t t = 0; t < transfers.size(); ++t) {
      const HaloTransfer& h = transfers[t];
      const bool parts_ok = h.from >= 0 && h.to >= 0 && h.from < static_cast<int>(parts.size()) &&
                            h.to < static_cast<int>(parts.size()) && h.from != h.to;
      detail::require(parts_ok && h.count >= 1, "halo transfer", t, "two different parts and at least one entry");
      const PartLayout& from = parts[static_cast<std::size_t>(h.from)];
      const PartLayout& to = parts[static_cast<std::size_t>(h.to)];
      if (h.indices.empty()) {
        detail::require(h.first >= 0 && h.first + h.count <= from.owned, "halo transfer", t,
                        "a run of the sender's owned entries");
      } else {
        detail::require(static_cast<std::int64_t>(h.indices.size()) == h.count, "halo transfer", t,
                        "one index per entry");
        for (const std::int64_t i : h.indices)
          detail::require(i >= 0 && i < from.owned, "halo transfer", t, "indices of the sender's owned entries");
      }
      detail::require(h.receive_offset >= 0 && h.receive_offset + h.count <= to.local_size, "halo transfer", t,
                      "a range inside the receiver's local vector");
      for (std::int64_t k = 0; k < h.count; ++k) {
        char& c = covered[static_cast<std::size_t>(h.to)][static_cast<std::size_t>(h.receive_offset + k)];
        detail::require(c == 0, "halo transfer", t, "halo entries no other transfer (or owned entry) covers");
        c = 1;
      }
    }
    for (std::size_t p = 0; p < parts.size(); ++p)
      for (const char c : covered[p])
        detail::require(c == 1, "split layout part", p, "every halo entry written by a transfer");
  }
};

namespace detail {
//! What the layout needs of one CSR part: its rows, its local columns, its send lists and, per
//! neighbour it reads, the run of its halo that neighbour writes (no matrix entries).
struct CsrPartShape {
  struct Run {
    int part = 0;
    std::int64_t first = 0, count = 0;  //!< local columns [first, first + count)
  };
  int index = 0;
  std::int64_t first_row = 0, rows = 0, columns = 0;
  std::vector<HaloList> sends;
  std::vector<Run> receives;
};

//! Part `p`'s shape. \throws relax::invalid_argument where a receive list is not one run.
template <class T>
CsrPartShape shape_of(const CsrPart<T>& p) {
  CsrPartShape s{p.index, p.first_row, p.rows, p.columns(), p.sends, {}};
  for (const HaloList& r : p.receives) {
    for (std::size_t e = 1; e < r.indices.size(); ++e)
      require(r.indices[e] == r.indices[0] + static_cast<std::int64_t>(e), "partition receive list", r.part,
              "one run of the halo per neighbour");
    s.receives.push_back({r.part, r.indices.empty() ? 0 : r.indices.front(), static_cast<std::int64_t>(r.indices.size())});
  }
  return s;
}

//! The layout of the parts whose shapes are `shapes`, part i at index i.
inline SplitLayout csr_layout_of_shapes(const std::vector<CsrPartShape>& shapes) {
  SplitLayout out;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    require(shapes[i].index == static_cast<int>(i), "partition part", shapes[i].index,
            ("part " + std::to_string(i) + " of " + std::to_string(shapes.size()) + " at its place").c_str());
    out.parts.push_back({shapes[i].first_row, shapes[i].rows, 0, shapes[i].columns});
  }
  for (const CsrPartShape& sender : shapes)
    for (const HaloList& send : sender.sends) {
      require(send.part >= 0 && send.part < static_cast<int>(shapes.size()), "partition send list", send.part,
              "a part of the split");
      const CsrPartShape& reader = shapes[static_cast<std::size_t>(send.part)];
      const auto receive = std::find_if(reader.receives.begin(), reader.receives.end(),
                                        [&](const CsrPartShape::Run& r) { return r.part == sender.index; });
      require(receive != reader.receives.end() && receive->count == static_cast<std::int64_t>(send.indices.size()),
              "partition exchange lists", send.part, "a receive list matching every send list");
      out.transfers.push_back(
          {sender.index, send.part, static_cast<std::int64_t>(send.indices.size()), 0, send.indices, receive->first});
    }
  out.validate();
  return out;
}
}  // namespace detail

//! The layout of the parts of a CSR split by rows (`relax::partition` or
//! `relax::read_matrix_market_part`, every part of one matrix, in part order).
//! \throws relax::invalid_argument where a part's receive list from a neighbour is not one run
//!         of its halo, or the parts do not fit together.
template <class T>
SplitLayout csr_split_layout(const std::vector<CsrPart<T>>& parts) {
  std::vector<detail::CsrPartShape> shapes;
  for (const CsrPart<T>& p : parts) shapes.push_back(detail::shape_of(p));
  return detail::csr_layout_of_shapes(shapes);
}

//! The shapes of `parts` (rows, local columns, exchange lists; no matrix entries) as 64-bit
//! words, so that processes holding different parts of one split can all-gather them and each
//! build the whole layout (`csr_split_layout_of_words`). A record per part: its length, then
//! index, first row, rows, columns, the send lists (count; per list the reader, the entry count
//! and the owned indices) and the receive runs (count; per run the sender, first column, count).
//! \throws relax::invalid_argument where a receive list is not one run.
template <class T>
std::vector<std::int64_t> csr_part_words(const std::vector<CsrPart<T>>& parts) {
  std::vector<std::int64_t> words;
  for (const CsrPart<T>& p : parts) {
    const detail::CsrPartShape s = detail::shape_of(p);
    const std::size_t at = words.size();
    words.push_back(0);
    words.insert(words.end(), {s.index, s.first_row, s.rows, s.columns, static_cast<std::int64_t>(s.sends.size())});
    for (const HaloList& h : s.sends) {
      words.insert(words.end(), {h.part, static_cast<std::int64_t>(h.indices.size())});
      words.insert(words.end(), h.indices.begin(), h.indices.end());
    }
    words.push_back(static_cast<std::int64_t>(s.receives.size()));
    for (const detail::CsrPartShape::Run& r : s.receives) words.insert(words.end(), {r.part, r.first, r.count});
    words[at] = static_cast<std::int64_t>(words.size() - at);
  }
  return words;
}

//! The layout of a CSR split from its parts' words (`csr_part_words`: every part exactly once,
//! records of several processes concatenated in any order): `csr_split_layout` of the parts.
//! \throws relax::invalid_argument for words that are not such records, a part missing or
//!         repeated, or parts that do not fit together.
inline SplitLayout csr_split_layout_of_words(const std::vector<std::int64_t>& words) {
  std::vector<detail::CsrPartShape> shapes;
  std::size_t at = 0;
  auto word = [&](std::size_t end, std::int64_t low, std::int64_t high, const char* what) {
    detail::require(at < end, "CSR part words", at, ("a record's " + std::string(what) + " within it").c_str());
    const std::int64_t w = words[at++];
    detail::require(w >= low && w <= high, "CSR part words", w, ("a " + std::string(what) + " in range").c_str());
    return w;
  };
  constexpr std::int64_t most = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t parts_most = std::numeric_limits<int>::max();
  while (at < words.size()) {
    const std::size_t start = at;
    const std::int64_t length = word(words.size(), 1, static_cast<std::int64_t>(words.size() - start), "length");
    const std::size_t end = start + static_cast<std::size_t>(length);
    detail::CsrPartShape s;
    s.index = static_cast<int>(word(end, 0, parts_most, "part index"));
    s.first_row = word(end, 0, most, "first row");
    s.rows = word(end, 1, most, "row count");
    // Every halo column is some other part's explicit send index, a word of its own: a record
    // claiming more halo columns than there are words lies (and would allocate for them).
    s.columns = word(end, s.rows, s.rows + std::min<std::int64_t>(most - s.rows, static_cast<std::int64_t>(words.size())),
                     "column count");
    const std::int64_t sends = word(end, 0, parts_most, "send list count");
    for (std::int64_t i = 0; i < sends; ++i) {
      HaloList h;
      h.part = static_cast<int>(word(end, 0, parts_most, "reader"));
      const std::int64_t count = word(end, 0, static_cast<std::int64_t>(end - at) - 1, "send count");
      for (std::int64_t e = 0; e < count; ++e) h.indices.push_back(word(end, 0, s.rows - 1, "owned index"));
      s.sends.push_back(std::move(h));
    }
    const std::int64_t receives = word(end, 0, parts_most, "receive run count");
    for (std::int64_t i = 0; i < receives; ++i) {
      detail::CsrPartShape::Run r;
      r.part = static_cast<int>(word(end, 0, parts_most, "sender"));
      r.first = word(end, s.rows, s.columns, "receive run's first column");
      r.count = word(end, 0, s.columns - r.first, "receive run's count");
      s.receives.push_back(r);
    }
    detail::require(at == end, "CSR part words", start, "a record whose length is its content's");
    shapes.push_back(std::move(s));
  }
  std::sort(shapes.begin(), shapes.end(),
            [](const detail::CsrPartShape& a, const detail::CsrPartShape& b) { return a.index < b.index; });
  return detail::csr_layout_of_shapes(shapes);
}

//! The layout of box `global` split into `parts` slabs along its slowest axis, for an operator
//! of radius 1 (one line of halo on each side that has a neighbour).
//! \throws relax::invalid_argument as `relax::Decomposition` does (parts < 1 or more than lines).
inline SplitLayout slab_split_layout(const Extents& global, int parts) {
  const Decomposition d(global, parts, 1);
  const std::int64_t line = global.rank == 3 ? global.nx * global.ny : global.nx;
  SplitLayout out;
  std::vector<Slab> slabs;
  for (int i = 0; i < d.size(); ++i) slabs.push_back(d[i]);
  for (const Slab& s : slabs) {
    const std::int64_t owned = s.owned.count * line;
    const std::int64_t below = s.has_prev ? line : 0;
    out.parts.push_back({s.owned.first * line, owned, below, below + owned + (s.has_next ? line : 0)});
  }
  for (const Slab& s : slabs) {
    const PartLayout& me = out.parts[static_cast<std::size_t>(s.index)];
    // My first line is the previous slab's line above its owned ones; my last, the next one's first.
    if (s.has_prev) {
      const PartLayout& to = out.parts[static_cast<std::size_t>(s.index - 1)];
      out.transfers.push_back({s.index, s.index - 1, line, 0, {}, to.owned_offset + to.owned});
    }
    if (s.has_next) out.transfers.push_back({s.index, s.index + 1, line, me.owned - line, {}, 0});
  }
  out.validate();
  return out;
}

//! One part's blocks in its device's kernel: [first, first + count).
struct BlockShare {
  std::int64_t first = 0, count = 0;
};

//! `blocks` blocks of one kernel shared among parts of `sizes` unknowns, in part order: each
//! part's share in proportion to its size (rounded down), at least one, the last part taking
//! what is left; the same split for the same sizes, so the CPU-free CG's sums are reproducible.
//! \throws relax::invalid_argument for fewer blocks than parts, or no parts.
inline std::vector<BlockShare> share_blocks(const std::vector<std::int64_t>& sizes, std::int64_t blocks) {
  detail::require(!sizes.empty(), "parts", 0, "at least one part");
  detail::require(blocks >= static_cast<std::int64_t>(sizes.size()), "blocks", blocks,
                  ("at least one per part (" + std::to_string(sizes.size()) + ")").c_str());
  std::int64_t total = 0;
  for (const std::int64_t n : sizes) total += n;
  std::vector<BlockShare> out;
  std::int64_t given = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::int64_t rest = static_cast<std::int64_t>(sizes.size() - i - 1);  // parts still to serve
    std::int64_t b = std::max<std::int64_t>(1, blocks * sizes[i] / std::max<std::int64_t>(total, 1));
    b = i + 1 == sizes.size() ? blocks - given : std::min(b, blocks - given - rest);
    out.push_back({given, b});
    given += b;
  }
  return out;
}

//! The parts a rank holds when `parts` parts are dealt to `ranks` processes (one process per GPU):
//! consecutive parts, as even as can be, rank r the r-th run.
struct RankParts {
  int first = 0, count = 0;
};

//! \throws relax::invalid_argument for fewer parts than ranks, no ranks, or a rank not among them.
inline RankParts rank_parts(int parts, int ranks, int rank) {
  detail::require(ranks >= 1, "ranks", ranks, "at least one");
  detail::require(parts >= ranks, "parts", parts, ("at least one per rank (" + std::to_string(ranks) + ")").c_str());
  detail::require(rank >= 0 && rank < ranks, "rank", rank, ("one of the " + std::to_string(ranks) + " ranks").c_str());
  const auto at = [&](int r) { return static_cast<int>(std::int64_t{r} * parts / ranks); };
  return {at(rank), at(rank + 1) - at(rank)};
}

//! The rank that holds part `part` under `rank_parts(parts, ranks, ·)`.
inline int rank_of_part(int part, int parts, int ranks) {
  detail::require(part >= 0 && part < parts, "part", part, ("one of the " + std::to_string(parts) + " parts").c_str());
  int r = static_cast<int>(std::int64_t{part} * ranks / parts);  // a first guess, then the exact run
  while (r > 0 && rank_parts(parts, ranks, r).first > part) --r;
  while (r + 1 < ranks && rank_parts(parts, ranks, r + 1).first <= part) ++r;
  return r;
}

//! Where a one-sided transport (NVSHMEM's puts) lands each transfer: a slot in its reader's
//! rank's inbox, the transfers into one rank's parts one after another in the layout's order, so
//! every rank numbers every transfer alike; and the most entries any rank receives or sends, the
//! inbox and outbox sizes every rank allocates (symmetric memory: the same on every rank).
struct InboxPlan {
  std::vector<std::int64_t> slot;       //!< per transfer of the layout, in its reader's rank's inbox
  std::int64_t largest_inbox = 0;       //!< entries, the most any rank receives per exchange
  std::int64_t largest_outbox = 0;      //!< entries, the most any rank sends per exchange
};

//! The plan of `layout`'s transfers when part g is held by rank `rank_of[g]` of `ranks`.
//! \throws relax::invalid_argument for a rank list not one rank (0 .. ranks − 1) per part.
inline InboxPlan inbox_plan(const SplitLayout& layout, const std::vector<int>& rank_of, int ranks) {
  detail::require(rank_of.size() == layout.parts.size(), "rank_of", rank_of.size(), "one rank per part of the layout");
  for (int r : rank_of) detail::require(r >= 0 && r < ranks, "rank_of", r, "ranks from 0 to ranks - 1");
  std::vector<std::int64_t> in(static_cast<std::size_t>(ranks), 0), out = in;
  InboxPlan plan;
  for (const HaloTransfer& h : layout.transfers) {
    std::int64_t& fill = in[static_cast<std::size_t>(rank_of[static_cast<std::size_t>(h.to)])];
    plan.slot.push_back(fill);
    fill += h.count;
    out[static_cast<std::size_t>(rank_of[static_cast<std::size_t>(h.from)])] += h.count;
  }
  plan.largest_inbox = *std::max_element(in.begin(), in.end());
  plan.largest_outbox = *std::max_element(out.begin(), out.end());
  return plan;
}

}  // namespace relax
