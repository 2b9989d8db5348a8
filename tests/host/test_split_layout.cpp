// The layout of a CG on k sub-domains (relax::SplitLayout): a CSR's parts and a box's slabs give
// consecutive owned slices, local vectors whose halo every transfer fills exactly once, and halo
// entries that are the global vector's entries the part's rows read; checked against a host
// construction (for each part, the set of off-part columns its rows read, ascending). Layouts
// that break an invariant are refused by name.
#include <catch2/catch.hpp>

#include "../support/matrices.hpp"
#include "../support/real_matrices.hpp"

#include <relax/cpu/cg.hpp>
#include <relax/multi/split_layout.hpp>
#include <relax/sparse/distribute.hpp>
#include <relax/sparse/matrix_market.hpp>
#include <relax/sparse/partition.hpp>
#include <relax/stencil/poisson.hpp>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace {

// Each part's local vector of global vector x, filled from the layout alone: owned entries at
// owned_offset, each transfer's entries at its receive offset.
std::vector<std::vector<double>> local_vectors(const relax::SplitLayout& l, const std::vector<double>& x) {
  std::vector<std::vector<double>> local(l.parts.size());
  for (std::size_t p = 0; p < l.parts.size(); ++p) {
    local[p].assign(static_cast<std::size_t>(l.parts[p].local_size), -1.0);
    std::copy_n(x.begin() + l.parts[p].global_first, l.parts[p].owned, local[p].begin() + l.parts[p].owned_offset);
  }
  for (const relax::HaloTransfer& h : l.transfers)
    for (std::int64_t e = 0; e < h.count; ++e) {
      const std::int64_t owned = h.indices.empty() ? h.first + e : h.indices[static_cast<std::size_t>(e)];
      local[static_cast<std::size_t>(h.to)][static_cast<std::size_t>(h.receive_offset + e)] =
          x[static_cast<std::size_t>(l.parts[static_cast<std::size_t>(h.from)].global_first + owned)];
    }
  return local;
}

std::vector<double> index_vector(std::int64_t n) {
  std::vector<double> x(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) x[static_cast<std::size_t>(k)] = static_cast<double>(k);
  return x;
}

void check_csr_layout(const relax::Csr<double>& a, int k, relax::Balance balance) {
  INFO(k << " parts");
  const auto parts = relax::partition(a, k, balance);
  const relax::SplitLayout l = relax::csr_split_layout(parts);
  REQUIRE(l.global_size() == a.rows);
  // With x_k = k, part p's halo entry h must be the global column the host construction finds:
  // the off-part columns of p's rows, once each, ascending.
  const auto local = local_vectors(l, index_vector(a.rows));
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const std::int64_t lo = parts[p].first_row, hi = lo + parts[p].rows;
    std::set<std::int64_t> halo;
    for (std::int64_t i = lo; i < hi; ++i)
      for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e)
        if (a.col_idx[e] < lo || a.col_idx[e] >= hi) halo.insert(a.col_idx[e]);
    CHECK(l.parts[p].owned_offset == 0);
    REQUIRE(l.parts[p].local_size == parts[p].rows + static_cast<std::int64_t>(halo.size()));
    std::int64_t at = parts[p].rows;
    for (const std::int64_t c : halo) CHECK(local[p][static_cast<std::size_t>(at++)] == static_cast<double>(c));
    // And the part's SpMV on that local vector is the global rows' (the columns it reads).
    std::vector<double> y(static_cast<std::size_t>(parts[p].rows)), want(static_cast<std::size_t>(a.rows));
    parts[p].multiply(local[p].data(), y.data());
    const std::vector<double> x = index_vector(a.rows);
    a.multiply(x.data(), want.data());
    CHECK(std::memcmp(y.data(), want.data() + lo, y.size() * sizeof(double)) == 0);
  }
}

}  // namespace

TEST_CASE("a CSR's split layout: every halo entry is the column its rows read, filled by one transfer",
          "[split_layout][partition]") {
  for (int k : {1, 2, 3, 5}) {
    check_csr_layout(relax::testing::scaled_poisson(9, 1.0), k, relax::Balance::rows);
    check_csr_layout(relax::testing::dense_spd(30, 7), k, relax::Balance::nonzeros);
  }
  check_csr_layout(relax::testing::read_real_matrix(RELAX_TEST_DATA_DIR, "bcsstk01"), 4, relax::Balance::rows);
  check_csr_layout(relax::testing::scaled_poisson(4, 0.0), 16, relax::Balance::rows);  // one row per part
}

TEST_CASE("a box's slab layout: one line of halo per neighbour, the neighbours' edge lines", "[split_layout]") {
  for (const relax::Extents& e : {relax::Extents(7, 10), relax::Extents(1, 3), relax::Extents(4, 3, 5)}) {
    const std::int64_t line = e.rank == 3 ? e.nx * e.ny : e.nx;
    const std::int64_t lines = e.rank == 3 ? e.nz : e.ny;
    for (int k = 1; k <= lines; ++k) {
      INFO(e.to_text() << ", " << k << " slabs");
      const relax::SplitLayout l = relax::slab_split_layout(e, k);
      REQUIRE(static_cast<int>(l.parts.size()) == k);
      CHECK(l.global_size() == line * lines);
      CHECK(static_cast<int>(l.transfers.size()) == 2 * (k - 1));
      const auto local = local_vectors(l, index_vector(line * lines));
      for (int p = 0; p < k; ++p) {
        const relax::PartLayout& part = l.parts[static_cast<std::size_t>(p)];
        CHECK(part.owned % line == 0);
        CHECK(part.owned_offset == (p > 0 ? line : 0));
        CHECK(part.local_size == part.owned + (p > 0 ? line : 0) + (p + 1 < k ? line : 0));
        // The local vector is the global one's lines from one below the slab to one above it.
        const std::int64_t from = part.global_first - part.owned_offset;
        for (std::int64_t i = 0; i < part.local_size; ++i)
          CHECK(local[static_cast<std::size_t>(p)][static_cast<std::size_t>(i)] == static_cast<double>(from + i));
      }
    }
  }
  CHECK_THROWS_WITH(relax::slab_split_layout(relax::Extents(5, 3), 4), Catch::Contains("parts"));
}

TEST_CASE("split layouts that break an invariant are refused by name", "[split_layout][validation]") {
  const relax::SplitLayout good = relax::slab_split_layout(relax::Extents(3, 4), 2);
  REQUIRE_NOTHROW(good.validate());
  relax::SplitLayout gap = good;
  gap.parts[1].global_first += 1;
  CHECK_THROWS_WITH(gap.validate(), Catch::Contains("consecutive"));
  relax::SplitLayout twice = good;
  twice.transfers.push_back(twice.transfers.front());
  CHECK_THROWS_WITH(twice.validate(), Catch::Contains("no other transfer"));
  relax::SplitLayout missing = good;
  missing.transfers.pop_back();
  CHECK_THROWS_WITH(missing.validate(), Catch::Contains("every halo entry"));
  relax::SplitLayout outside = good;
  outside.transfers[0].first = 100;
  CHECK_THROWS_WITH(outside.validate(), Catch::Contains("owned entries"));
  relax::SplitLayout self = good;
  self.transfers[0].to = self.transfers[0].from;
  CHECK_THROWS_WITH(self.validate(), Catch::Contains("two different parts"));
  relax::SplitLayout none;
  CHECK_THROWS_WITH(none.validate(), Catch::Contains("at least one part"));
  // A CSR part whose receive list from one neighbour is not one run of its halo.
  auto parts = relax::partition(relax::testing::scaled_poisson(5, 0.0), 3);
  for (auto& p : parts)
    for (auto& r : p.receives)
      if (r.indices.size() > 1) std::swap(r.indices[0], r.indices[1]);
  CHECK_THROWS_WITH(relax::csr_split_layout(parts), Catch::Contains("one run"));
}

TEST_CASE("a kernel's blocks shared among the parts of a device: by size, each at least one, all used",
          "[split_layout]") {
  const auto check = [](const std::vector<std::int64_t>& sizes, std::int64_t blocks) {
    INFO(sizes.size() << " parts, " << blocks << " blocks");
    const std::vector<relax::BlockShare> s = relax::share_blocks(sizes, blocks);
    REQUIRE(s.size() == sizes.size());
    std::int64_t next = 0;
    for (const relax::BlockShare& b : s) {
      CHECK(b.first == next);
      CHECK(b.count >= 1);
      next += b.count;
    }
    CHECK(next == blocks);
    return s;
  };
  CHECK(check({100}, 132).front().count == 132);
  const auto even = check({500, 500}, 132);
  CHECK(even[0].count == 66);
  CHECK(even[1].count == 66);
  const auto odd = check({334, 333, 333}, 528);  // by size, rounded down, the last takes the rest
  CHECK(odd[0].count == 176);
  CHECK(odd[1].count == 175);
  CHECK(odd[2].count == 177);
  const auto tiny = check({1, 1000000, 1}, 3);  // every part keeps one block
  CHECK(tiny[1].count == 1);
  check({0, 0}, 2);
  check({7, 1, 1, 1, 1, 1, 1, 1}, 8);
  CHECK_THROWS_WITH(relax::share_blocks({5, 5, 5}, 2), Catch::Contains("at least one per part"));
  CHECK_THROWS_WITH(relax::share_blocks({}, 4), Catch::Contains("at least one part"));
}

TEST_CASE("parts dealt to ranks: consecutive runs, as even as can be, each part's rank found back",
          "[split_layout]") {
  for (int ranks = 1; ranks <= 5; ++ranks)
    for (int parts = ranks; parts <= 13; ++parts) {
      INFO(parts << " parts, " << ranks << " ranks");
      int next = 0, fewest = parts, most = 0;
      for (int r = 0; r < ranks; ++r) {
        const relax::RankParts held = relax::rank_parts(parts, ranks, r);
        CHECK(held.first == next);
        CHECK(held.count >= 1);
        fewest = std::min(fewest, held.count);
        most = std::max(most, held.count);
        for (int p = held.first; p < held.first + held.count; ++p) CHECK(relax::rank_of_part(p, parts, ranks) == r);
        next = held.first + held.count;
      }
      CHECK(next == parts);
      CHECK(most - fewest <= 1);
    }
  const relax::RankParts seven = relax::rank_parts(7, 3, 1);
  CHECK(seven.first == 2);
  CHECK(seven.count == 2);
  CHECK_THROWS_WITH(relax::rank_parts(2, 3, 0), Catch::Contains("parts"));
  CHECK_THROWS_WITH(relax::rank_parts(4, 2, 2), Catch::Contains("rank"));
  CHECK_THROWS_WITH(relax::rank_parts(4, 0, 0), Catch::Contains("ranks"));
  CHECK_THROWS_WITH(relax::rank_of_part(4, 4, 2), Catch::Contains("part"));
}

TEST_CASE("inbox slots of a one-sided transport: each rank's arrivals side by side, sized for every rank",
          "[split_layout]") {
  const relax::Csr<double> a = relax::testing::dense_spd(60);  // every part reads every other
  for (int ranks = 1; ranks <= 4; ++ranks)
    for (int parts = ranks; parts <= 7; ++parts) {
      INFO(parts << " parts, " << ranks << " ranks");
      const relax::SplitLayout csr = relax::csr_split_layout(relax::partition(a, parts));
      const relax::SplitLayout slabs = relax::slab_split_layout(relax::Extents(9, 31), parts);
      for (const relax::SplitLayout* l : {&csr, &slabs}) {
        std::vector<int> rank_of;
        for (int g = 0; g < parts; ++g) rank_of.push_back(relax::rank_of_part(g, parts, ranks));
        const relax::InboxPlan plan = relax::inbox_plan(*l, rank_of, ranks);
        REQUIRE(plan.slot.size() == l->transfers.size());
        // Per rank: the entries it receives and sends, and which inbox entries its arrivals cover.
        std::vector<std::int64_t> in(static_cast<std::size_t>(ranks), 0), out = in;
        std::vector<std::vector<int>> covered(static_cast<std::size_t>(ranks));
        for (const relax::HaloTransfer& h : l->transfers) {
          in[static_cast<std::size_t>(rank_of[static_cast<std::size_t>(h.to)])] += h.count;
          out[static_cast<std::size_t>(rank_of[static_cast<std::size_t>(h.from)])] += h.count;
        }
        for (std::size_t r = 0; r < covered.size(); ++r) covered[r].assign(static_cast<std::size_t>(in[r]), 0);
        for (std::size_t t = 0; t < l->transfers.size(); ++t) {
          const relax::HaloTransfer& h = l->transfers[t];
          auto& mine = covered[static_cast<std::size_t>(rank_of[static_cast<std::size_t>(h.to)])];
          REQUIRE(plan.slot[t] >= 0);
          REQUIRE(plan.slot[t] + h.count <= static_cast<std::int64_t>(mine.size()));
          for (std::int64_t e = 0; e < h.count; ++e) ++mine[static_cast<std::size_t>(plan.slot[t] + e)];
        }
        for (const auto& mine : covered)  // every arrival slot filled by exactly one transfer
          CHECK(std::all_of(mine.begin(), mine.end(), [](int c) { return c == 1; }));
        CHECK(plan.largest_inbox == *std::max_element(in.begin(), in.end()));
        CHECK(plan.largest_outbox == *std::max_element(out.begin(), out.end()));
      }
    }
  const relax::SplitLayout l = relax::slab_split_layout(relax::Extents(5, 8), 4);
  CHECK_THROWS_WITH(relax::inbox_plan(l, {0, 0, 1}, 2), Catch::Contains("one rank per part"));
  CHECK_THROWS_WITH(relax::inbox_plan(l, {0, 0, 1, 2}, 2), Catch::Contains("ranks from 0"));
}

namespace {

void check_same_layout(const relax::SplitLayout& got, const relax::SplitLayout& want) {
  REQUIRE(got.parts.size() == want.parts.size());
  for (std::size_t p = 0; p < want.parts.size(); ++p) {
    CHECK(got.parts[p].global_first == want.parts[p].global_first);
    CHECK(got.parts[p].owned == want.parts[p].owned);
    CHECK(got.parts[p].owned_offset == want.parts[p].owned_offset);
    CHECK(got.parts[p].local_size == want.parts[p].local_size);
  }
  REQUIRE(got.transfers.size() == want.transfers.size());
  for (std::size_t t = 0; t < want.transfers.size(); ++t) {
    CHECK(got.transfers[t].from == want.transfers[t].from);
    CHECK(got.transfers[t].to == want.transfers[t].to);
    CHECK(got.transfers[t].count == want.transfers[t].count);
    CHECK(got.transfers[t].first == want.transfers[t].first);
    CHECK(got.transfers[t].indices == want.transfers[t].indices);
    CHECK(got.transfers[t].receive_offset == want.transfers[t].receive_offset);
  }
}

// The words of `ranks` processes, each holding its rank's parts (`rank_parts`), concatenated
// last rank first: an order other than the parts'.
template <class Part>
std::vector<std::int64_t> gathered_words(const std::vector<Part>& parts, int ranks) {
  std::vector<std::int64_t> all;
  for (int r = ranks - 1; r >= 0; --r) {
    const relax::RankParts mine = relax::rank_parts(static_cast<int>(parts.size()), ranks, r);
    const std::vector<Part> held(parts.begin() + mine.first, parts.begin() + mine.first + mine.count);
    const std::vector<std::int64_t> words = relax::csr_part_words(held);
    all.insert(all.end(), words.begin(), words.end());
  }
  return all;
}

}  // namespace

TEST_CASE("a CSR's layout from its parts' words, gathered from the processes in any order, is the parts' layout",
          "[split_layout][partition]") {
  for (const relax::Csr<double>& a : {relax::testing::scaled_poisson(9, 1.0), relax::testing::dense_spd(30, 7)})
    for (int k : {1, 2, 3, 5})
      for (int ranks = 1; ranks <= k; ++ranks) {
        INFO(a.rows << " rows, " << k << " parts, " << ranks << " ranks");
        const auto parts = relax::partition(a, k, relax::Balance::nonzeros);
        check_same_layout(relax::csr_split_layout_of_words(gathered_words(parts, ranks)), relax::csr_split_layout(parts));
      }
  // Parts read on their own from a file (each process its rows only), against the whole matrix's.
  const std::string path = std::string(RELAX_TEST_DATA_DIR) + "/suitesparse/1138_bus.mtx";
  const auto a = relax::read_matrix_market<double>(path);
  for (int k : {2, 4}) {
    INFO("1138_bus, " << k << " parts read on their own");
    std::vector<relax::CsrPart<double>> read;
    for (int p = 0; p < k; ++p) read.push_back(relax::read_matrix_market_part<double>(path, k, p));
    check_same_layout(relax::csr_split_layout_of_words(gathered_words(read, k)),
                      relax::csr_split_layout(relax::partition(a, k, relax::Balance::rows)));
  }
}

TEST_CASE("CSR part words that are not a split's records are refused by name", "[split_layout][validation]") {
  const auto parts = relax::partition(relax::testing::scaled_poisson(6, 0.0), 3, relax::Balance::rows);
  const std::vector<std::int64_t> words = relax::csr_part_words(parts);
  using Catch::Contains;
  std::vector<std::int64_t> cut(words.begin(), words.end() - 1);  // the last record one word short
  CHECK_THROWS_WITH(relax::csr_split_layout_of_words(cut), Contains("CSR part words"));
  std::vector<std::int64_t> longer = words;
  longer[0] += 1;  // the first record claims a word of the next
  CHECK_THROWS_WITH(relax::csr_split_layout_of_words(longer), Contains("CSR part words"));
  std::vector<std::int64_t> twice = words;  // part 0 again, part 2 missing
  const std::vector<std::int64_t> first = relax::csr_part_words(std::vector<relax::CsrPart<double>>{parts[0]});
  twice.resize(words.size() - static_cast<std::size_t>(relax::csr_part_words(std::vector<relax::CsrPart<double>>{parts[2]}).size()));
  twice.insert(twice.end(), first.begin(), first.end());
  CHECK_THROWS_WITH(relax::csr_split_layout_of_words(twice), Contains("partition part"));
  std::vector<std::int64_t> bad_index = words;
  bad_index[6] = 99;  // part 0's first send list names a reader outside the split
  CHECK_THROWS_WITH(relax::csr_split_layout_of_words(bad_index), Contains("partition send list"));
  CHECK_THROWS_WITH(relax::csr_split_layout_of_words({-1}), Contains("length"));
  // A record that claims 2^62 columns (25 rows): its halo would be 2^62 entries that no send list
  // can hold; refused by name (it was a std::bad_alloc, allocating for them).
  CHECK_THROWS_WITH(relax::csr_split_layout_of_words({7, 0, 0, 25, std::int64_t{1} << 62, 0, 0}),
                    Contains("column count"));
}
