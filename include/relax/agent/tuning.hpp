#pragma once
//! \file
//! Tuning constants of the block-level agents, each with the measurement it came from: the 3D
//! plane stream's shape and step form (`agent/plane_stream.cuh`). The strategies' constants, and
//! the launch policies that use these, are in strategy/tuning.hpp.

namespace relax::tuning {

//! `TemporalBlock<D, ColumnStream>` in 3D (`agent/plane_stream.cuh`): warps per block and rows
//! per warp of the streamed tile (ghost rows included, so 32 − 2D rows are stored). Four rows a
//! warp keep a lane's north and south neighbours in its own registers for all but its first and
//! last row. A scheduler's register file is shared by the warps on it, so 8 warps allow 255
//! registers a thread (8 × 4 at D = 4: 231, no spill), 12 warps 168, 16 warps 128. Measured on
//! the H200, float32, 512³, G updates/s (2026-12-03, docs/results/h200/bench_plane_queue_v2*.json):
//! 8 × 4: 441.6 / 493.2 / 513.7 at D = 2 / 3 / 4 (562.9 at D = 4 after a later fix); 12 × 3:
//! 503.8 at D = 3, D = 4 does not fit its shared memory; 16 × 2: 448.4 / 480.9 at D = 2 / 3;
//! 8 × 5 spills. The first form (24 warps of one row) measured 362 at D = 4.
//! `RELAX_TUNING_PLANE_STREAM_WARPS` and `RELAX_TUNING_PLANE_STREAM_ROWS_PER_WARP` override them
//! (for measuring).
#ifdef RELAX_TUNING_PLANE_STREAM_WARPS
inline constexpr int plane_stream_warps = RELAX_TUNING_PLANE_STREAM_WARPS;
#else
inline constexpr int plane_stream_warps = 8;
#endif
#ifdef RELAX_TUNING_PLANE_STREAM_ROWS_PER_WARP
inline constexpr int plane_stream_rows_per_warp = RELAX_TUNING_PLANE_STREAM_ROWS_PER_WARP;
#else
inline constexpr int plane_stream_rows_per_warp = 4;
#endif
//! Whether the launched 3D stream stacks the last row of tiles' whole tiles where their rows fit
//! in half the warps (`agent/plane_tiling.hpp`; 512², D = 4: 94 tiles instead of 96). Measured
//! only on an H100 (2026-12-05, docs/results/h100/logs/stacked_tiles_and_warmup.txt, with the
//! warm-up change of the same day): at 512³, D = 4, equal shares 579 G updates/s against 577 for
//! folding alone; the weighted shares 570 against 578-582 (the H200 fitted the weights, and there
//! folding gains where on the H100 it loses). `RELAX_TUNING_PLANE_STREAM_STACK=0` turns it off (for
//! measuring it on the H200).
#ifdef RELAX_TUNING_PLANE_STREAM_STACK
inline constexpr bool plane_stream_stack = RELAX_TUNING_PLANE_STREAM_STACK;
#else
inline constexpr bool plane_stream_stack = true;
#endif

//! Whether the 3D stream's edge rows keep a padding slot above the first warp and below the last
//! (`agent/plane_stream.cuh`). 12 warps of 3 rows fit D = 4 in an H200's shared memory only
//! without it (222 KiB; 238 with it); the form measured so far (8 × 4) has it.
//! `RELAX_TUNING_PLANE_STREAM_EDGE_PADDING=0` drops it (for measuring, with the shape above; the
//! study relax_study_lean_stream runs 12 × 3 without padding beside the library's 8 × 4).
#ifdef RELAX_TUNING_PLANE_STREAM_EDGE_PADDING
inline constexpr bool plane_stream_edge_padding = RELAX_TUNING_PLANE_STREAM_EDGE_PADDING;
#else
inline constexpr bool plane_stream_edge_padding = true;
#endif

//! `TemporalBlock<D, ColumnStream>` in 3D (`agent/plane_stream.cuh`): whether pairs of steps whose
//! planes all lie in the box run a copy of the step without the per-level plane check (the
//! "plane outside the box keeps its value" case: 16 MOVs, a compare pair and a branch a level).
//! Static counts, float32, a pair of such steps in the library's stream-K kernel (CUDA 13.0,
//! sm_90; docs/results/sass/plane_stream_split_switch.txt; the study relax_study_lean_stream's
//! Split, lean_plane_stream_steps.txt, within 3 instructions): D = 4, 2007 -> 1632 instructions
//! (-19%; 227 -> 237 registers), D = 3, 1699 -> 1318. The copy costs registers
//! where there are few: a stencil that reads a coefficient field spills more at D = 4 (the test's
//! VariableDiffusion7: 240 -> 504 bytes). Measured on the H200 (2026-12-05, float32, 512³,
//! stream-K; docs/results/h200/logs/plane_stream_split_and_lean_study.txt): the library's D = 4
//! stream 629 -> 685 G updates/s (bench, whole tree built with the switch on), the study's Split
//! form 697 against the library's 629-632 in the same run (D = 3: 625 against 576-579). So on for
//! the launched kernels (`launch_plane_stream`); `RELAX_TUNING_PLANE_STREAM_SPLIT=0` turns it off.
#ifdef RELAX_TUNING_PLANE_STREAM_SPLIT
inline constexpr bool plane_stream_split = RELAX_TUNING_PLANE_STREAM_SPLIT;
#else
inline constexpr bool plane_stream_split = true;
#endif
//! The same for the 3D passes of the streamed device loop and `PeerStore` (`stream_group`,
//! `stream_item` in strategy/device_loop.cuh). Their device tests pass with it on (the same
//! 2026-12-05 run), but their speed with it was not measured, and it adds spills to kernels that
//! already have some (the float32 loop 108 -> 116 bytes, float64 laddered 116 -> 136): off, as
//! measured before; `RELAX_TUNING_PLANE_STREAM_SPLIT_LOOPS=1` turns it on.
#ifdef RELAX_TUNING_PLANE_STREAM_SPLIT_LOOPS
inline constexpr bool plane_stream_split_loops = RELAX_TUNING_PLANE_STREAM_SPLIT_LOOPS;
#else
inline constexpr bool plane_stream_split_loops = false;
#endif

//! `RELAX_TUNING_PLANE_STREAM_LEAN_IO` is gone: the 3D stream's copies and stores from offsets
//! of a lane's rows computed once, reading rows, vectors and planes clamped into the grid with no
//! test a copy, had fewer instructions (common code of the four steps of `plane_stream_w_kernel`,
//! float32, D = 4: 1257, 888, 859, 786 -> 966, 788, 752, 683) and were bit-identical in the host
//! tests' emulated block, but on a GPU (an H100, 2026-12-05; docs/performance-notes.md, "The lean
//! copies on a GPU") slower (512³ D = 4 stream-K 578.2 -> 426.8 G updates/s) and wrong in float64
//! (70 × 33 × 21, 7 sweeps at D = 3), cause not found. The form is in the history: the `Lean`
//! parameter of `stream_planes`, last at commit 2ccb2a9. Asking for it is an error rather than
//! silently nothing.
#if defined(RELAX_TUNING_PLANE_STREAM_LEAN_IO)
#error "relax: RELAX_TUNING_PLANE_STREAM_LEAN_IO was removed (it ran float64 wrong on a GPU; see agent/tuning.hpp)"
#endif

//! The planes a block of the 3D stream claims at a time when it streams with claim words (the
//! agent's `ClaimedEnd`); the steals' other constants and their measurements are in
//! strategy/tuning.hpp (`plane_stream_steals`).
inline constexpr int plane_stream_steal_chunk = 8;

}  // namespace relax::tuning
