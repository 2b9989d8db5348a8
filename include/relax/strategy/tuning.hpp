#pragma once
//! \file
//! Tuning constants of the strategies, each with the measurement it came from. Kept apart from
//! the kernels so a retune changes numbers here, not algorithms there. The agents' own constants
//! (the 3D stream's shape and step form) are in agent/tuning.hpp, which this header includes.

#include <relax/agent/tuning.hpp>

#include <cstdint>

namespace relax::tuning {

//! In 2D, `relax::Sync` (32 × 8 threads, 16-byte vectors) updates `sync_deep_rows` rows per
//! thread when that still leaves at least `sync_min_blocks_per_sm` blocks per SM, else one row.
//! Measured on the H200, float32, 2026-11-30 (docs/results/h200/bench_sync.json): 4 rows per
//! thread reach 315 G updates/s (89% of the 4.24 TB/s copy) at N = 16384 against 294 for 1 row;
//! at N = 1024, where 4 rows leave 2 blocks per SM, 1 row is faster (226 against 199).
inline constexpr int sync_deep_rows = 4;
inline constexpr int sync_min_blocks_per_sm = 8;
//! In 3D, `relax::Sync` updates `sync_planes_3d` planes per thread. Measured on the H200,
//! float32, 512³, 2026-12-03 (docs/results/h200/bench_sync3d_local_free.json): 1 plane 312.4 G
//! updates/s, 4 planes 300.5, 8 planes 299.0 (before the walk's vectors left local memory, 4
//! and 8 planes were ahead: 265.9 and 271.5 against 247.5).
inline constexpr int sync_planes_3d = 1;

//! `TemporalBlock<D, ColumnStream>`: warps per block (adjacent strips of one segment, so a block's
//! row loads form one contiguous run: +34% at 16384², bench_stream_v2.json against _v1), and the
//! warps a launch aims at when it sizes row segments (31 per SM on an H200: enough to hide latency,
//! few enough that the D warm-up rows of each segment stay a small overhead).
inline constexpr int stream_warps_per_block = 4;
inline constexpr long long stream_target_warps = 4096;

//! `DeviceLoop<TemporalBlock<D, ColumnStream>>` in 2D: blocks per SM the kernel is compiled for
//! (its launch bounds). Left to itself the compiler gives the persistent kernel 195 to 205
//! registers at D = 8 (the loop's state stays live around the stream), two blocks an SM, and it
//! measured 0.49× the launched stream at 16384² (ten steps, r = 10; 2026-12-01, first run of
//! bench `diffusion_solve/DeviceLoop_Stream8`). Four blocks (128 registers, as the launched
//! stream at D = 8 has) were the choice until the stream loaded its rows a step ahead and the
//! blocks took equal shares of the rows; since then three (168 registers, no spill in the stream,
//! 12 warps an SM) are faster (H200, 2026-12-04, ten steps at r = 10, ms, three / four blocks:
//! 16384² 869 / 917, 4096² 78.3 / 84.3, 2048² 30.6 / 36.5; two blocks 1054 at 16384²).
//! `RELAX_TUNING_STREAM_LOOP_BLOCKS_PER_SM` overrides it (for measuring).
#ifdef RELAX_TUNING_STREAM_LOOP_BLOCKS_PER_SM
inline constexpr int stream_loop_blocks_per_sm = RELAX_TUNING_STREAM_LOOP_BLOCKS_PER_SM;
#else
inline constexpr int stream_loop_blocks_per_sm = 3;
#endif
//! The CPU-free multi-sub-domain streamed loop (`peer_stream_kernel`, 2D): blocks per SM its
//! launch bounds are for. Measured on the H200 (2026-12-01, bench_multi_peer_stream{,_blocks3}.json,
//! D = 8, two slabs): 4 blocks 528 µs a sweep at 16384², 10.95 at 256²; 3 blocks (168 registers,
//! no spills) 564 and 10.31. (It reads b again at each level and splits its rows by slab, so the
//! single-domain loop's change to three blocks does not carry over unmeasured.)
//! `RELAX_TUNING_PEER_STREAM_BLOCKS_PER_SM` overrides it (for measuring).
#ifdef RELAX_TUNING_PEER_STREAM_BLOCKS_PER_SM
inline constexpr int peer_stream_blocks_per_sm = RELAX_TUNING_PEER_STREAM_BLOCKS_PER_SM;
#else
inline constexpr int peer_stream_blocks_per_sm = 4;
#endif
//! The multi-sub-domain streamed loop reads b again at each level (`RhsIn::global`) instead of
//! keeping D + 1 rows of it in registers, so the kernel fits its 128 registers.
#ifdef RELAX_TUNING_STREAM_LOOP_RELOADS_RHS
inline constexpr bool stream_loop_reloads_rhs = RELAX_TUNING_STREAM_LOOP_RELOADS_RHS;
#else
inline constexpr bool stream_loop_reloads_rhs = true;
#endif
//! The single-domain streamed device loop in 2D keeps b in a ring in shared memory (`RhsIn::
//! shared`) rather than reading it again at each level: read again (the form measured, 0.63x
//! the launched stream at 16384², ten steps at r = 10) its row loop issues 633 instructions and
//! 36 loads a row against the launched kernel's 546 and 8 (SASS, D = 8); the ring costs one
//! 16-byte store a row and one 16-byte load a level. Measured on the H200 (2026-12-03, with the
//! column stream's 32-bit row bounds; docs/results/h200/bench_ring_ab_{main,ring}_*.json, ten
//! steps at r = 10): 16384² 1099 ms against the launched stream's 892 (0.81x; 0.63x read
//! again), 4096² 88.5 ms against 108 read again (the launched stream 103).
#ifdef RELAX_TUNING_STREAM_LOOP_RHS_RING
inline constexpr bool stream_loop_rhs_ring = RELAX_TUNING_STREAM_LOOP_RHS_RING;
#else
inline constexpr bool stream_loop_rhs_ring = true;
#endif

//! The 3D stream's shape and step form (warps, rows a warp, stacked tiles, edge padding, the
//! split steps) are the agent's: agent/tuning.hpp, included above.

//! `TemporalBlock<D, ColumnStream>` in 3D, launched (`launch_plane_stream`): from depth
//! `plane_stream_k_min_depth`, and where each resident block's share of the planes is at least
//! `plane_stream_k_min_warmups` warm-ups (2D + 1 steps) long, the planes of all tiles are shared
//! out equally over the resident blocks (stream-K: a block streams its share as one piece per tile
//! the share meets, each piece with its own warm-up); otherwise each tile's planes are cut into
//! `plane_segments` equal segments, a block each. Measured on the H200, float32 (2026-12-04,
//! relax_study_stream_k, docs/results/h200/logs/stream_k_plane_stream_study.txt), time of segments
//! over stream-K: D = 4: 1.10 at 512³ (565 -> 623 G updates/s), 1.07 at 384³ and 768³, 1.05 at 256³
//! and 333 × 200 × 100 (20 planes a block); D = 3: 1.07 at 512³, 0.83 at 500 × 77 × 33 (4 planes a
//! block); D = 2: 0.90 at 512³. Below D = 3 the stream is nearer its memory bound, and blocks that
//! are no longer at the same planes as their neighbours lose the L2 hits of the ghost zone's second
//! reads. (At D = 1 only a 7 µs box was measured: 0.78-0.83 with a block for each of 264, 1.01-1.08
//! with a block a plane as the library launches.)
inline constexpr int plane_stream_k_min_depth = 3;
inline constexpr int plane_stream_k_min_warmups = 2;

//! Stream-K's shares weighted by what a tile's planes cost (`weighted_plane_shares`,
//! strategy/plane_schedule.hpp) instead of equal in planes. The model, relative to a tile whose
//! points all lie in the grid: (1 − `plane_weight_columns_out` · the fraction of the tile's lanes'
//! columns outside the grid) · (1 − `plane_weight_rows_out` · the fraction of its rows outside) ·
//! (1 + `plane_weight_ring_lanes` if its lanes hold a ring column, so that every warp restores
//! points at every level) · (1 + `plane_weight_folded` for a folded tile). Fitted on the H200
//! (2026-12-05, relax_study_plane_balance, docs/results/h200/logs/plane_balance_study.txt: each
//! tile streamed alone by a block, float32, D = 4, 512³ and 768³): an inner tile 852 µs at 512³,
//! a first column of tiles 902 (+5.9%), the last, storing 32 columns, 823, the last row of tiles
//! (19 of 32 rows outside) 748, a folded tile 963; at 768³ +6.2%, 0.993, 0.982 (3 rows outside),
//! +11.9%. With equal shares the slowest block of the folded kernel took 722.5 µs against a mean
//! of 661.7 (the same model, fed the measured costs, gives 723 and 651; weighted, 664).
inline constexpr double plane_weight_columns_out = 0.126;
inline constexpr double plane_weight_rows_out = 0.198;
inline constexpr double plane_weight_ring_lanes = 0.061;
inline constexpr double plane_weight_folded = 0.08;
//! (1 + `plane_weight_stacked` for a stacked tile, `agent/plane_tiling.hpp`: its segments store
//! fewer rows than a whole tile does, beyond what its rows outside the grid account for.) Fitted
//! on an H100 (2026-12-05, relax_study_plane_balance, docs/results/h100/logs/
//! stacked_tiles_and_warmup.txt): at 512³, D = 4, the two stacked tiles cost 0.921 (no ring
//! column) and 0.978 (the ring column) of an inner tile, 0.956 and 0.957 of what the model gives
//! them without this factor; there the other kinds of tile of 512³ cost within 1% of the H200's fit.
inline constexpr double plane_weight_stacked = -0.044;
//! Whether the launched stream-K schedule weights its shares (above): from depth
//! `plane_stream_weighted_min_depth`, where a block's share is at least
//! `plane_stream_weighted_min_planes` planes. Measured on the H200 (2026-12-05,
//! relax_study_plane_balance --shares, docs/results/h200/logs/plane_stream_weighted_shares.txt;
//! time of equal shares over weighted, float32): D = 4: 1.057-1.062 at 512³ (372 planes a block;
//! relax_bench 732.8 -> 776.1 G updates/s), 1.029-1.030 at 768³ (1210), 0.993-0.996 at 256³ (48),
//! 0.973-0.980 at 333 × 200 × 100 (20); D = 3 at 512³ 0.995 (the model was fitted at D = 4).
//! Short shares are many pieces, and the model leaves out a piece's warm-up.
#ifdef RELAX_TUNING_PLANE_STREAM_WEIGHTED
inline constexpr bool plane_stream_weighted = RELAX_TUNING_PLANE_STREAM_WEIGHTED;
#else
inline constexpr bool plane_stream_weighted = true;
#endif
inline constexpr int plane_stream_weighted_min_depth = 4;
inline constexpr int plane_stream_weighted_min_planes = 128;
//! Heads and tails (`PlaneHeadsTable`, strategy/plane_schedule.hpp): where the launch runs
//! stream-K with fewer tiles than resident blocks, from depth `plane_stream_heads_min_depth`,
//! every tile's first share starts at plane 1 together and the tails follow in rounds, so that
//! vertical neighbours stream the same planes at the same time and share their ghost rows
//! through L2. A piece after a block's first is modelled as costing `plane_stream_piece_overhead`
//! planes a level of depth more (its warm-up: blocks of two pieces took 2.1% longer than those of
//! one at 512³, D = 4, 364.6 planes a block, on the H200; 2.3% on an H100). Measured on the H200
//! (2026-12-05, relax_study_plane_balance --shares, docs/results/h200/logs/heads_and_tails.txt;
//! float32, G updates/s, stream-K with equal shares / weighted / heads and tails, bits compared):
//! 512³ D = 4 747 / 786 / 809; D = 3 613 / 610 / 734; 256³ D = 4 579 / 584 / 632 (48 planes a
//! block); 333 × 200 × 100 428 / 435 / 466 (20); relax_bench `TemporalBlock4_stream` at 512³
//! 776.5 -> 795.7 and 798.0 (D = 3: 590.5 -> 664.1). The overhead: 2D planes gave 809.3 at 512³,
//! D = 4, 4D 798.5 (an H100: 713.8 and 705.4, against weighted stream-K's 566.1).
#ifdef RELAX_TUNING_PLANE_STREAM_HEADS
inline constexpr bool plane_stream_heads = RELAX_TUNING_PLANE_STREAM_HEADS;
#else
inline constexpr bool plane_stream_heads = true;
#endif
inline constexpr int plane_stream_heads_min_depth = 3;
inline constexpr double plane_stream_piece_overhead = 2.0;
//! Steals (`agent/plane_claims.hpp`, `use_plane_steals`): after its own pieces (heads-and-tails
//! shares, or whole tiles where the tiles are not fewer than the blocks) a block takes the upper
//! part of another's piece, so that the blocks end together where the shares' cost model is off
//! (at 512³, D = 4 the H200's blocks ended between 606 and 656 µs, mean 636), where a block's
//! share is at least `plane_stream_steals_min_planes` planes. A block claims its planes
//! `plane_stream_steal_chunk` at a time (agent/tuning.hpp); a thief expects its victim to lag `plane_stream_steal_lag`
//! planes behind what it has claimed, and takes at least `plane_stream_steal_least` planes.
//! Measured on the H200 (2026-12-05, relax_study_plane_balance --shares,
//! docs/results/h200/logs/steals.txt; float32, G updates/s, without / with steals): 512³ D = 4
//! heads and tails 809.6 / 822.1, D = 3 736.9 / 741.5; 768³ weighted shares / whole tiles then
//! steals: D = 4 820.7 / 880.7, D = 3 651.8 / 778.8; where the shares are short steals lose
//! (256³, 48 planes a block: 637.7 / 507.6; 333 × 200 × 100, 20: 451.5 / 337.2). relax_bench
//! `TemporalBlock4_stream` at 512³ 798.8 -> 816.2 and 815.6.
#ifdef RELAX_TUNING_PLANE_STREAM_STEALS
inline constexpr bool plane_stream_steals = RELAX_TUNING_PLANE_STREAM_STEALS;
#else
inline constexpr bool plane_stream_steals = true;
#endif
inline constexpr int plane_stream_steals_min_planes = 128;
inline constexpr int plane_stream_steal_lag = 6;
inline constexpr int plane_stream_steal_least = 4;

//! `MultiSolver<DeviceLoop<Sync>, Nvshmem>`: blocks per SM its kernel is compiled for (launch
//! bounds), by rank. NVSHMEM's device library needs relocatable device code, and there ptxas
//! gives the same PTX more registers: the single-domain `DeviceLoop<Sync>` kernels 80 to 96
//! instead of 63 to 80 (CUDA 13.0; that loop measured 1315 µs a sweep at 16384² in the relocatable
//! build against 1105 in the other), and the NVSHMEM kernel left to itself 96 (2D) and 120 to 128
//! (3D) registers, two blocks an SM. Measured on the H200, k = 1 and 2 sub-domains on one PE
//! (2026-12-01, bench_nvshmem_v2_blocks{1,3,4}.json): at 16384², 1494 / 1223 / 1163 µs a sweep for
//! 1 (no bound) / 3 / 4 blocks; at 512³, 694 / 680 / 803 (four blocks spill 150 bytes and more).
inline constexpr int nvshmem_blocks_per_sm_2d = 4;
inline constexpr int nvshmem_blocks_per_sm_3d = 3;
//! The bound of a rank; `RELAX_TUNING_NVSHMEM_BLOCKS_PER_SM` sets both (for measuring).
template <int Rank>
inline constexpr int nvshmem_blocks_per_sm =
#ifdef RELAX_TUNING_NVSHMEM_BLOCKS_PER_SM
    RELAX_TUNING_NVSHMEM_BLOCKS_PER_SM;
#else
    Rank == 3 ? nvshmem_blocks_per_sm_3d : nvshmem_blocks_per_sm_2d;
#endif

//! `MultiSolver<DeviceLoop<Sync>, PeerStore>` (and `Nccl`'s CPU-free form): the blocks per SM its
//! kernel (`peer_sync_kernel`) is compiled for. 0: no bound beyond the block's threads (the PTX
//! of `__launch_bounds__(256, 0)` is that of `(256)`; 1 is not: ptxas then took 126 registers
//! where it takes 116). Unbounded, ptxas gives the 2D kernel with four rows a thread 116
//! registers (two blocks an SM; 2026-12-04), where it had 80 on 2026-12-02, when two slabs at
//! 16384² took 1137 µs a sweep against 1225 now; the same code over NVSHMEM measured 1494 / 1223
//! / 1163 µs for no bound / 3 / 4 blocks (above). Not yet measured for this kernel:
//! `RELAX_TUNING_PEER_SYNC_BLOCKS_PER_SM` sets it (for measuring).
#ifdef RELAX_TUNING_PEER_SYNC_BLOCKS_PER_SM
inline constexpr int peer_sync_blocks_per_sm = RELAX_TUNING_PEER_SYNC_BLOCKS_PER_SM;
#else
inline constexpr int peer_sync_blocks_per_sm = 0;
#endif

//! `DeviceLoop<TemporalBlock<D, OnChip>>`: threads per block (one block per SM, one tile per
//! block). Measured on the H200, float32, 2026-12-01 (docs/results/h200/bench_on_chip_threads.json,
//! µs a sweep with a check every 8 sweeps, 1024 threads against 512): D = 8 at 128²: 0.97 / 0.81,
//! 256²: 1.09 / 0.90, 512²: 1.50 / 1.53, 1024²: 3.06 / 3.09. At 1024 threads a thread has 64
//! registers and the kernel spills; at 512 it has 108 and none. `RELAX_TUNING_RESIDENT_THREADS`
//! overrides it for tuning runs.
#ifdef RELAX_TUNING_RESIDENT_THREADS
inline constexpr int resident_threads = RELAX_TUNING_RESIDENT_THREADS;
#else
inline constexpr int resident_threads = 512;
#endif

//! `DeviceLoop<TemporalBlock<D, InRegisters>>`: rows of the region a thread keeps in registers
//! (each row one 16-byte vector of columns), so a block of `resident_threads` holds a region of
//! up to 128 × (resident_threads / 32 · rows) float cells. Six rows at 512 threads give 128 × 96,
//! which holds 1024² on 130 tiles at D = 8 (tiles of 103 × 79); a thread then keeps 24 cells of u
//! and 24 of b (48 registers of its 128). Not yet measured against other shapes.
//! `Auto`'s on-chip loop keeps its tiles in registers (`DeviceLoop<TemporalBlock<8, InRegisters>>`)
//! from this many interior points an SM (where the frame holds the grid), in shared memory below.
//! Measured on the H200, float32, ten steps at r = 10 (docs/results/h200/bench_registers_v3_blend.json,
//! bench_auto_registers_crossover.json): in registers against shared memory, 256² (496 points an
//! SM) 3.16 / 2.42 ms, 320² (776) 3.29 / 3.04, 384² (1117) 3.38 / 3.43, 448² (1520) 3.59 / 3.95,
//! 512² (1986) 3.75 / 4.30, 1024² (7944) 4.85 / 8.99.
inline constexpr std::int64_t auto_registers_points_per_sm = 1024;

#ifdef RELAX_TUNING_REGISTER_TILE_ROWS
inline constexpr int register_tile_rows = RELAX_TUNING_REGISTER_TILE_ROWS;
#else
inline constexpr int register_tile_rows = 6;
#endif

//! The persistent CG kernels (`Persistent`, `PersistentSingleReduction`): points per thread that
//! size the grid (at least one block per SM, at most what is resident), so a small problem runs
//! on few blocks and its grid barriers are cheaper. Chosen from the barrier's cost (1.10 µs with
//! 132 blocks, 2.12 with 1056; docs/results/h200/bench_barrier_v1.json). Also the batch of
//! unknowns `cg_persistent_single` loads before it stores any. Measured on the H200 (2026-12-03,
//! without the one-block-an-SM floor, bench_cg_points{4,8,16}.json): 4, 8 and 16 a thread took
//! 8.3, 13.6 and 25.0 µs an iteration at 256², float64, against 6.9 at 2.
inline constexpr long long cg_persistent_points_per_thread = 2;

//! `ClusterResident` CG (`solver/cg_cluster.cuh`): threads a block and the most unknowns a thread
//! keeps in registers (x, r, p, s and w of each: 80 registers at 8 unknowns in float64, under
//! the 128 that 512 threads a block leave). One cluster of at most the device's largest
//! cluster (16 blocks on the H200) thus holds 16 · 512 · 8 = 65536 unknowns, 256². Not yet
//! tuned on the GPU.
inline constexpr int cg_cluster_threads = 512;
inline constexpr int cg_cluster_max_points_per_thread = 8;

//! `GridResident` CG (`solver/cg_resident.cuh`): threads a block (one block per SM at most) and
//! the most unknowns a thread keeps in registers (x, r, p, s and w of each: 80 registers at 8 in
//! float64); on the H200, 132 · 256 · 8 = 270336 unknowns (520²). 256 threads so that 256² fills
//! 128 SMs at two unknowns a thread, and a block's reduction is `block_sum2`'s. Measured at this
//! shape only (H200, 2026-12-04, docs/results/h200/bench_cg_grid_resident_v4_*.json: 3.47 µs an
//! iteration at 256², float64); 512 threads at one unknown each not measured. At 8 unknowns a
//! thread ptxas spills 300 bytes in float64 (255 registers).
inline constexpr int cg_resident_threads = 256;
inline constexpr int cg_resident_max_points_per_thread = 8;

//! The residual norm's block shape: the access pattern of the Sync sweep with the row depth that
//! measured fastest for it out of L2 (above); not tuned separately.
inline constexpr int residual_block_x = 32;
inline constexpr int residual_block_y = 8;
inline constexpr int residual_rows = 4;

}  // namespace relax::tuning
