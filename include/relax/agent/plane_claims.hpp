#pragma once
//! \file
//! Stealing planes in the launched 3D stream: the arithmetic of the claim words (host and device,
//! so that the host tests run the protocol the kernel runs).
//!
//! The heads-and-tails shares (`PlaneHeadsTable`) are equal in modelled cost, and the model is
//! off by a few percent per tile: at 512³, D = 4 on the H200 the blocks ended between 606 and 656
//! µs (mean 636), and the launch lasts as long as the last. With steals a block that has streamed
//! its shares takes the upper part of a piece with planes to spare (`plane_stream_s_kernel`), so
//! the blocks end together whatever the model says.
//!
//! Each block owns one claim word, for the piece it streams: its tile, `next` (the first plane it
//! has not claimed) and `end` (one past the piece's last plane). The owner claims its planes a
//! chunk at a time (an atomic add to `next`) before it stores them; a thief cuts `end` down to a
//! plane `mid` at or above `next` (a compare-and-swap of the whole word) and streams [mid, end) as
//! a piece of its own. Every plane is so claimed once: the owner's add and the thief's swap are on
//! one word, and each takes only planes the other has not taken. A word whose `next` is at or past
//! its `end` is spent; the owner's last claim spends it (it claims once more when it runs out), so
//! a launch leaves every word spent, and the next launch may use the words without clearing them.
//!
//! No word repeats while a thief may hold an old copy of it: a block's pieces on one tile are
//! disjoint plane ranges, and a word that can be stolen from has `next` strictly inside its piece
//! (above its first plane, below its end).

#include <relax/config.hpp>

#include <cstdint>

namespace relax::detail {

//! A claim word's fields: tile (16 bits), next (24), end (24).
struct PlaneClaim {
  std::int64_t tile, next, end;
};

inline constexpr int plane_claim_plane_bits = 24;
inline constexpr std::uint64_t plane_claim_plane_mask = (std::uint64_t{1} << plane_claim_plane_bits) - 1;
//! Tiles and planes a claim word holds: tiles below 2^16; planes up to nz + 1 + two chunks below
//! 2^24 (`plane_steals_fit`).
inline constexpr std::int64_t plane_claim_max_tiles = std::int64_t{1} << 16;
inline constexpr std::int64_t plane_claim_max_plane = std::int64_t{plane_claim_plane_mask};

RELAX_HOST_DEVICE inline std::uint64_t pack_plane_claim(const PlaneClaim& c) {
  return static_cast<std::uint64_t>(c.tile) << (2 * plane_claim_plane_bits) |
         static_cast<std::uint64_t>(c.next) << plane_claim_plane_bits | static_cast<std::uint64_t>(c.end);
}

RELAX_HOST_DEVICE inline PlaneClaim unpack_plane_claim(std::uint64_t w) {
  return {static_cast<std::int64_t>(w >> (2 * plane_claim_plane_bits)),
          static_cast<std::int64_t>(w >> plane_claim_plane_bits & plane_claim_plane_mask),
          static_cast<std::int64_t>(w & plane_claim_plane_mask)};
}

//! What the owner adds to its word to claim `chunk` planes more.
RELAX_HOST_DEVICE inline std::uint64_t plane_claim_increment(int chunk) {
  return static_cast<std::uint64_t>(chunk) << plane_claim_plane_bits;
}

//! The word an owner publishes for its piece [z0, z1) of `tile`, its first chunk claimed.
RELAX_HOST_DEVICE inline std::uint64_t plane_claim_published(std::int64_t tile, std::int64_t z0, std::int64_t z1,
                                                             int chunk) {
  return pack_plane_claim({tile, z0 + chunk < z1 ? z0 + chunk : z1, z1});
}

//! The owner's claimed end after its add returned `old` (the word before the add): it holds
//! planes up to `old.next + chunk`, at most `old.end`; nothing more where the word was spent.
RELAX_HOST_DEVICE inline std::int64_t plane_claimed_end(std::uint64_t old, std::int64_t claimed, int chunk) {
  const PlaneClaim c = unpack_plane_claim(old);
  if (c.next >= c.end) return claimed;
  return c.next + chunk < c.end ? c.next + chunk : c.end;
}

//! The planes a thief would take from `word` (0: none). The victim is taken to be `lag` planes
//! behind its claimed `next` (a claim runs ahead of the stream), and its planes left are split
//! where both sides cost the same, the thief's side costing `overhead` planes more (its warm-up);
//! the thief takes them only if they are at least `least` planes.
RELAX_HOST_DEVICE inline std::int64_t plane_steal_planes(std::uint64_t word, int overhead, int lag, int least) {
  const PlaneClaim c = unpack_plane_claim(word);
  const std::int64_t left = c.end - c.next;
  if (left <= 0) return 0;
  std::int64_t taken = (left + lag - overhead) / 2;
  if (taken > left) taken = left;
  return taken >= least ? taken : 0;
}

//! The victim's word after a thief takes its last `planes` planes.
RELAX_HOST_DEVICE inline std::uint64_t plane_claim_cut(std::uint64_t word, std::int64_t planes) {
  PlaneClaim c = unpack_plane_claim(word);
  c.end -= planes;
  return pack_plane_claim(c);
}

//! Whether a box of `tiles` tiles and `nz` planes fits the claim words with chunks of `chunk`.
RELAX_HOST_DEVICE inline bool plane_steals_fit(std::int64_t tiles, std::int64_t nz, int chunk) {
  return tiles < plane_claim_max_tiles && nz + 1 + 2 * std::int64_t{chunk} <= plane_claim_max_plane;
}

}  // namespace relax::detail
