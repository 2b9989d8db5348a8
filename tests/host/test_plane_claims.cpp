// Steals in the launched 3D stream (agent/plane_claims.hpp): the claim words' fields, the owner's
// claims and the thieves' cuts, and the protocol the kernel runs (plane_stream_s_kernel), played
// by blocks taking turns in a random order: every plane of every tile is stored once, whatever
// the order, and the launch leaves every word spent.
#include <catch2/catch.hpp>

#include <relax/agent/plane_claims.hpp>
#include <relax/strategy/plane_schedule.hpp>
#include <relax/strategy/tuning.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

using namespace relax::detail;

TEST_CASE("claim words: fields, claims, cuts and the planes a thief takes", "[plane_claims]") {
  const PlaneClaim c{65535, 16777215 - 40, 16777215};
  const PlaneClaim back = unpack_plane_claim(pack_plane_claim(c));
  CHECK(back.tile == c.tile);
  CHECK(back.next == c.next);
  CHECK(back.end == c.end);

  // A piece [5, 100) of tile 3 is published with its first chunk of 8 claimed.
  std::uint64_t w = plane_claim_published(3, 5, 100, 8);
  CHECK(unpack_plane_claim(w).next == 13);
  CHECK(plane_claim_published(3, 5, 9, 8) == pack_plane_claim({3, 9, 9}));  // a short piece: spent at once
  // The owner's add returns the word before it: planes 13..21 are its, then the word is cut at 25.
  CHECK(plane_claimed_end(w, 13, 8) == 21);
  w += plane_claim_increment(8);
  w = plane_claim_cut(w, 75);
  CHECK(unpack_plane_claim(w).end == 25);
  CHECK(plane_claimed_end(w, 21, 8) == 25);  // only up to the cut
  w += plane_claim_increment(8);
  CHECK(plane_claimed_end(w, 25, 8) == 25);  // spent: nothing more

  // A thief splits what is left where both sides cost the same: 80 planes left, a lag of 6, a
  // warm-up of 8: it takes 39 (the victim streams 80 + 6 - 39 = 47, the thief 39 + 8).
  const std::uint64_t v = pack_plane_claim({7, 20, 100});
  CHECK(plane_steal_planes(v, 8, 6, 4) == 39);
  CHECK(plane_steal_planes(v, 8, 0, 4) == 36);
  CHECK(plane_steal_planes(pack_plane_claim({7, 20, 29}), 8, 6, 4) == 0);  // (9 + 6 - 8) / 2 = 3 < 4
  CHECK(plane_steal_planes(pack_plane_claim({7, 20, 31}), 8, 6, 4) == 4);
  CHECK(plane_steal_planes(pack_plane_claim({7, 20, 20}), 8, 6, 4) == 0);  // spent
  CHECK(plane_steal_planes(pack_plane_claim({7, 30, 20}), 8, 6, 4) == 0);  // overspent
  CHECK(plane_steal_planes(pack_plane_claim({7, 20, 22}), 0, 60, 1) == 2);  // never more than is left

  CHECK(plane_steals_fit(65535, 1000, 8));
  CHECK_FALSE(plane_steals_fit(65536, 1000, 8));
  CHECK(plane_steals_fit(1, plane_claim_max_plane - 17, 8));
  CHECK_FALSE(plane_steals_fit(1, plane_claim_max_plane - 16, 8));
}

namespace {

// One block of the kernel, as far as claims go: it streams its own pieces, then steals. A turn
// is one of its actions: store a claimed plane, claim (an add on its word), publish a piece, scan
// the words for a victim, or swap a cut into the victim's word with what the scan saw.
struct Block {
  std::vector<PlanePiece> own;  // its pieces, in order
  std::size_t next_own = 0;
  bool streaming = false, stealing = false, done = false;
  std::int64_t tile = 0, z = 0, claimed = 0;  // the piece's tile, its next plane to store, its claimed end
  bool claim_in_flight = false;
  std::uint64_t claim_old = 0;
  int victim = -1;  // a scan's choice, and the word it saw
  std::uint64_t seen = 0;
  std::size_t attempts = 0;
};

struct Played {
  std::vector<int> stored;  // per plane of every tile (tile · nz + z − 1)
  std::int64_t steals = 0;
  bool spent = true;
};

Played play(std::int64_t tiles, std::int64_t nz, std::vector<Block> blocks, std::mt19937& random, int chunk,
            int overhead, int lag, int least) {
  Played out;
  out.stored.assign(static_cast<std::size_t>(tiles * nz), 0);
  std::vector<std::uint64_t> words(blocks.size(), 0);  // zeros: spent
  auto start = [&](std::size_t k, std::int64_t tile, std::int64_t z0, std::int64_t z1) {
    Block& b = blocks[k];
    words[k] = plane_claim_published(tile, z0, z1, chunk);
    b.streaming = true;
    b.tile = tile;
    b.z = z0;
    b.claimed = unpack_plane_claim(words[k]).next;
  };
  for (std::size_t left = blocks.size(); left > 0;) {
    const std::size_t k = std::uniform_int_distribution<std::size_t>(0, blocks.size() - 1)(random);
    Block& b = blocks[k];
    if (b.done || random() % 3 < k % 3) continue;  // blocks at three speeds
    if (b.streaming) {
      // The kernel claims ahead (when 6 steps are left) and takes the answer two step pairs
      // later; here a claim may be issued at any time, and answered at any later turn.
      const bool claim_now = !b.claim_in_flight && (b.z == b.claimed || random() % 4 == 0);
      if (b.claim_in_flight && random() % 2 == 0) {
        b.claimed = plane_claimed_end(b.claim_old, b.claimed, chunk);
        b.claim_in_flight = false;
        if (b.claimed == b.z && unpack_plane_claim(b.claim_old).next >= unpack_plane_claim(b.claim_old).end)
          b.streaming = false;  // nothing more: the piece is over
      } else if (claim_now) {
        b.claim_old = words[k];
        words[k] += plane_claim_increment(chunk);
        b.claim_in_flight = true;
      } else if (b.z < b.claimed) {
        ++out.stored[static_cast<std::size_t>(b.tile * nz + b.z - 1)];
        ++b.z;
      }
      continue;
    }
    if (!b.stealing) {
      if (b.next_own < b.own.size()) {
        const PlanePiece p = b.own[b.next_own++];
        start(k, p.tile, p.z0, p.z1);
      } else {
        b.stealing = true;
      }
      continue;
    }
    if (b.victim < 0) {  // scan as the kernel's steal_planes: of the pieces with at least half
                         // the most planes to take, the one at the block's turn
      std::int64_t most = 0;
      for (std::size_t v = 0; v < words.size(); ++v) most = std::max(most, plane_steal_planes(words[v], overhead, lag, least));
      if (most == 0) {
        b.done = true;
        --left;
        continue;
      }
      std::vector<std::size_t> candidates;
      for (std::size_t v = 0; v < words.size(); ++v) {
        const std::int64_t planes = plane_steal_planes(words[v], overhead, lag, least);
        if (planes > 0 && 2 * planes >= most) candidates.push_back(v);
      }
      const std::size_t v = candidates[(k + b.attempts++) % candidates.size()];
      b.victim = static_cast<int>(v);
      b.seen = words[v];
      continue;
    }
    // The swap, against what the scan saw (the kernel reloads the word first: a later copy).
    const std::uint64_t w = b.seen;
    const std::int64_t planes = plane_steal_planes(w, overhead, lag, least);
    if (planes > 0 && words[static_cast<std::size_t>(b.victim)] == w) {
      words[static_cast<std::size_t>(b.victim)] = plane_claim_cut(w, planes);
      const PlaneClaim c = unpack_plane_claim(w);
      ++out.steals;
      b.attempts = 0;  // the kernel counts its tries afresh at each steal
      start(k, c.tile, c.end - planes, c.end);
    }
    b.victim = -1;
  }
  for (std::uint64_t w : words) out.spent = out.spent && unpack_plane_claim(w).next >= unpack_plane_claim(w).end;
  return out;
}

}  // namespace

TEST_CASE("steals: every plane of every tile stored once, in any order of the blocks' turns", "[plane_claims]") {
  using relax::tuning::plane_stream_steal_lag;
  using relax::tuning::plane_stream_steal_least;
  struct Case {
    std::int64_t tiles, nz;
    int blocks;
  };
  // Fewer tiles than blocks (heads and tails), one tile, more tiles than blocks, short boxes.
  const Case cases[] = {{94, 64, 132}, {1, 64, 132}, {7, 33, 16}, {20, 9, 6}, {3, 1, 8}, {5, 200, 5}};
  std::mt19937 random(12);
  for (const Case& c : cases) {
    for (const bool heads : {false, true}) {
      if (heads && c.tiles >= c.blocks) continue;
      INFO("tiles " << c.tiles << ", nz " << c.nz << ", blocks " << c.blocks << (heads ? ", heads and tails" : ", whole tiles"));
      std::vector<Block> blocks(static_cast<std::size_t>(c.blocks));
      if (heads) {
        const PlaneHeadsTable h =
            heads_and_tails_shares(std::vector<double>(static_cast<std::size_t>(c.tiles), 1.0), c.nz, c.blocks, 8.0);
        for (int k = 0; k < c.blocks; ++k) {
          PlaneHeadsCursor cursor;
          PlanePiece p;
          while (next_heads_piece(h, k, c.blocks, c.tiles, c.nz, cursor, p)) blocks[k].own.push_back(p);
        }
      } else {
        for (std::int64_t t = 0; t < c.tiles; ++t) blocks[t % c.blocks].own.push_back({t, 1, c.nz + 1});
      }
      std::int64_t steals = 0;
      for (int round = 0; round < 20; ++round) {
        const Played p = play(c.tiles, c.nz, blocks, random, 8, 8, plane_stream_steal_lag, plane_stream_steal_least);
        for (std::size_t i = 0; i < p.stored.size(); ++i) {
          INFO("tile " << i / c.nz << ", plane " << i % c.nz + 1);
          REQUIRE(p.stored[i] == 1);
        }
        CHECK(p.spent);
        steals += p.steals;
      }
      // The protocol was exercised, not only the static pieces (heads and tails of one tile on
      // 132 blocks are pieces of a plane or two, each spent when published).
      if (c.nz >= 64 && !(heads && c.tiles == 1)) CHECK(steals > 0);
    }
  }
}
