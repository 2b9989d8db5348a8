// The sweep engine on boxes of any extents: every kernel against the reference backend on
// rectangular, degenerate and 3D boxes (partial tiles on every axis), a stencil that reads a
// coefficient field by global index under every strategy, the 3D diffusion problem through the
// solver, and the device evaluation of the stop criterion against the host's.
#include <catch2/catch.hpp>

#include "gpu_runs.hpp"
#include "grids.hpp"
#include "runs.hpp"
#include "stop_sequences.hpp"
#include "variable.hpp"

#include <relax/control/feedback.hpp>
#include <relax/control/ladder.hpp>
#include <relax/core/buffer.hpp>
#include <relax/cpu/diffusion.hpp>
#include <relax/reference/tiled.hpp>
#include <relax/solver/diffusion.cuh>
#include <relax/solver/solver.cuh>
#include <relax/stencil/stencil5.hpp>
#include <relax/stencil/stencil7.hpp>
#include <relax/strategy/column_stream.cuh>

#include <exception>
#include <limits>
#include <string>
#include <thread>
#include <vector>

using relax::DeviceGrid;
using relax::Extents;
using relax::HostGrid;
namespace ref = relax::reference;

namespace {

const Extents boxes_2d[] = {Extents(1, 1), Extents(1, 57), Extents(57, 1), Extents(70, 1000),
                            Extents(1000, 70), Extents(129, 3)};
const Extents boxes_3d[] = {Extents(33, 17, 5), Extents(5, 17, 33), Extents(1, 1, 64), Extents(1, 1, 1),
                            Extents(130, 9, 7)};

// `count` sweeps of random data with `Strategy` on the GPU against `schedule` on the host.
template <class Strategy, class S, class Schedule = ref::SyncSchedule>
void check_sweeps(const S& host_stencil, const S& device_stencil, const Extents& e, relax::Batch batch,
                  const Schedule& schedule = {}) {
  using T = typename S::value_type;
  HostGrid<T> u(e), b(e);
  relax::testing::fill_random(u, 11 + e.nx + 3 * e.ny, 0.0, 10.0);
  relax::testing::fill_random(b, 13 + e.nz);
  relax::Stream stream;
  DeviceGrid<T> du = relax::to_device(u, stream), scratch = relax::to_device(u, stream);
  const DeviceGrid<T> db = relax::to_device(b, stream);
  relax::Sweeper<Strategy>::run(device_stencil, du, scratch, db, batch, stream);
  const HostGrid<T> got = relax::to_host(du, stream);
  HostGrid<T> host_scratch = u;
  ref::sweeps(host_stencil, u, host_scratch, b, schedule, batch.sweeps, ref::Exec::openmp());
  INFO("box " << e.to_text() << ", sweeps " << batch.sweeps << ", D " << batch.depth
              << ", differing points " << relax::testing::count_differences(got, u));
  CHECK(relax::testing::same_bits(got, u));
  relax::MaxNormSlot<T> slot;
  CHECK(relax::residual_norm(device_stencil, du, db, slot, stream) == ref::residual_norm(host_stencil, u, b));
  CHECK(relax::rhs_norm(device_stencil, du, db, slot, stream) == ref::rhs_norm(host_stencil, u, b));
}

template <class Strategy, class S, class Schedule = ref::SyncSchedule>
void check_sweeps(const S& s, const Extents& e, relax::Batch batch, const Schedule& schedule = {}) {
  check_sweeps<Strategy>(s, s, e, batch, schedule);
}

// One launch of the 3D stream of depth D under each schedule (segments, stream-K with equal and
// with weighted shares, heads and tails, the chosen one) against D synchronous sweeps on the
// host, bit for bit; returns whether the chosen one is stream-K (false, and nothing run, where
// the device's shared memory holds no queue of depth D). Heads and tails run wherever the tiles
// are fewer than the blocks (every box below on an H200 but 1200 × 800 × 3 at D = 4), with heads
// of no plane where the planes are fewer than the blocks.
using relax::detail::PlaneSchedule;
constexpr PlaneSchedule static_schedules[] = {PlaneSchedule::segments, PlaneSchedule::stream_k, PlaneSchedule::weighted,
                                              PlaneSchedule::heads, PlaneSchedule::chosen};
constexpr PlaneSchedule steals_schedules[] = {PlaneSchedule::heads_and_steals, PlaneSchedule::tiles_and_steals};

template <int D, std::size_t N>
bool check_plane_schedules(const Extents& e, const PlaneSchedule (&schedules)[N], int repeats = 1) {
  using T = float;
  using S = relax::Stencil7<T>;
  namespace detail = relax::detail;
  if (D > relax::Sweeper<relax::TemporalBlock<D, relax::ColumnStream>>::template deepest_depth<S, T>()) return false;
  const S s(10.0);
  HostGrid<T> u(e), b(e);
  relax::testing::fill_random(u, 17 + e.nx + 5 * e.nz, 0.0, 10.0);
  relax::testing::fill_random(b, 19 + e.ny);
  relax::Stream stream;
  const DeviceGrid<T> du = relax::to_device(u, stream), db = relax::to_device(b, stream);
  HostGrid<T> want = u, host_scratch = u;
  ref::sweeps(s, want, host_scratch, b, ref::SyncSchedule{}, D, ref::Exec::openmp());
  for (PlaneSchedule schedule : schedules)
    for (int repeat = 0; repeat < repeats; ++repeat) {
      DeviceGrid<T> out = relax::to_device(u, stream);
      relax::detail::launch_plane_stream<D>(s, du, out, db, stream, schedule);
      const HostGrid<T> got = relax::to_host(out, stream);
      INFO("box " << e.to_text() << ", D " << D << ", schedule " << static_cast<int>(schedule) << ", repeat "
                  << repeat << ", differing points " << relax::testing::count_differences(got, want));
      CHECK(relax::testing::same_bits(got, want));
    }
  // The launches left every claim word spent (the next launch relies on it).
  std::vector<unsigned long long> words(relax::detail::PlaneHeadsTable::capacity);
  RELAX_CUDA_CHECK(cudaMemcpyAsync(words.data(), relax::detail::plane_claim_words(stream),
                                   words.size() * sizeof(words[0]), cudaMemcpyDeviceToHost, stream));
  RELAX_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (unsigned long long w : words) {
    const relax::detail::PlaneClaim c = relax::detail::unpack_plane_claim(w);
    CHECK(c.next >= c.end);
  }
  const detail::Shape g = detail::shape_of(du.layout());
  const std::int64_t tiles = detail::plane_stream_tiling<D, T>(g).tiles;
  return detail::use_plane_stream_k(
      tiles, g.nz, D,
      detail::plane_stream_resident<detail::plane_stream_k_kernel<D, S, T>, detail::plane_stream_shared_bytes<T>(D)>(D));
}

}  // namespace

TEST_CASE("SyncMatchesReference on rectangular, degenerate and 3D boxes", "[engine][sync][sanitize]") {
  for (const Extents& e : boxes_2d) {
    check_sweeps<relax::Sync>(relax::Stencil5<float>(10.0), e, {3});
    check_sweeps<relax::SyncTile<32, 8, 4>>(relax::Stencil5<float>(1.0), e, {2});
    check_sweeps<relax::Sync>(relax::Stencil5<double>(10.0), e, {2});
  }
  for (const Extents& e : boxes_3d) {
    check_sweeps<relax::Sync>(relax::Stencil7<float>(10.0), e, {3});
    check_sweeps<relax::Sync>(relax::Stencil7<double>(10.0), e, {2});
    check_sweeps<relax::SyncTile<64, 4>>(relax::Stencil7<float>(1.0), e, {3});  // two warps a row
    check_sweeps<relax::SyncTile<32, 8, 4>>(relax::Stencil7<float>(1.0), e, {2});
    check_sweeps<relax::SyncTile<64, 4, 1>>(relax::Stencil7<double>(10.0), e, {2});
  }
}

TEST_CASE("TemporalBlock is exact on rectangular and 3D boxes; BlockAsync matches its emulation",
          "[engine][tiled][sanitize]") {
  for (const Extents& e : boxes_2d)
    for (int d : {1, 2, 3, 4}) {
      check_sweeps<relax::TemporalBlock<relax::dynamic, relax::ColumnStream>>(relax::Stencil5<float>(10.0), e,
                                                                              {2 * d + 1, d});
      check_sweeps<relax::TemporalBlock<relax::dynamic>>(relax::Stencil5<float>(10.0), e, {2 * d + 1, d});
      check_sweeps<relax::BlockAsync<relax::dynamic>>(relax::Stencil5<float>(10.0), e, {2 * d + 1, d},
                                                      ref::TiledSchedule{32, 8, d, false});
    }
  // The resident device loops at fixed depths (batches of D sweeps and a shorter last one).
  for (const Extents& e : boxes_2d) {
    check_sweeps<relax::DeviceLoop<relax::TemporalBlock<3, relax::InRegisters>>>(relax::Stencil5<float>(10.0), e, {11});
    check_sweeps<relax::DeviceLoop<relax::TemporalBlock<8, relax::InRegisters>>>(relax::Stencil5<float>(1.0), e, {17});
    check_sweeps<relax::DeviceLoop<relax::TemporalBlock<2, relax::InRegisters>>>(relax::Stencil5<double>(10.0), e, {5});
  }
  for (const Extents& e : boxes_3d)
    for (int d : {1, 2, 3, 4}) {
      check_sweeps<relax::TemporalBlock<relax::dynamic, relax::ColumnStream>>(relax::Stencil7<float>(10.0), e,
                                                                              {2 * d + 1, d});
      check_sweeps<relax::TemporalBlock<relax::dynamic, relax::Tile<32, 8, 4>>>(relax::Stencil7<float>(10.0), e,
                                                                                {2 * d + 1, d});
      check_sweeps<relax::TemporalBlock<relax::dynamic, relax::Tile<32, 4, 3>>>(relax::Stencil7<float>(1.0), e,
                                                                                {d + 2, d});
      check_sweeps<relax::BlockAsync<relax::dynamic>>(relax::Stencil7<float>(10.0), e, {2 * d + 1, d},
                                                      ref::TiledSchedule{32, 8, d, false, 4});
    }
}

// Fewer planes than resident blocks (a block a plane), one plane, one row and one column, boxes
// whose stream-K shares cross tiles mid-way (partial tiles on every axis), one whose shares
// hold several whole tiles of 3 planes, and one where the launch chooses stream-K on an H200.
// Folded tiles (agent/plane_tiling.hpp) in every box of more than one row of tiles but
// 1200 × 800 × 3 (whose last tiles store 120 columns). At D = 4: 130 × 200 × 9 folds its 10
// rest columns 6 rows of tiles at a time (30 of 32 lanes), then the last 3; 176 × 60 × 5 its 56
// rest columns 2 at a time (16 lanes each), then a last one alone; 1 × 300 × 4 its one column
// 10 at a time; 144 × 100 × 7 its 24 rest columns 4 at a time (8 lanes each: the whole warp),
// then a last one alone. Stacked tiles (the last row of tiles' whole tiles, one above the other
// in a block's warps): 250 × 49 at D = 4 (two of 3 warps each, two warps idle), 370 × 30 at
// D = 2 (three of 2 warps), 3 and 4 (two of 3 and of 4 warps, and a last tile alone), 370 × 40
// at D = 1 and 2.
const Extents schedule_boxes[] = {Extents(33, 17, 5),    Extents(1, 1, 64),     Extents(1, 1, 1),
                                  Extents(130, 1, 7),    Extents(250, 49, 61),  Extents(121, 25, 300),
                                  Extents(1200, 800, 3), Extents(250, 49, 400), Extents(130, 200, 9),
                                  Extents(176, 60, 5),   Extents(1, 300, 4),    Extents(144, 100, 7),
                                  Extents(370, 30, 6),   Extents(370, 40, 5)};

TEST_CASE("the 3D stream's schedules (segments, stream-K, weighted, heads and tails) are exact on awkward boxes",
          "[engine][tiled][3d][sanitize]") {
  for (const Extents& e : schedule_boxes) {
    check_plane_schedules<1>(e, static_schedules);
    check_plane_schedules<2>(e, static_schedules);
    const bool chosen3 = check_plane_schedules<3>(e, static_schedules);
    const bool chosen4 = check_plane_schedules<4>(e, static_schedules);
    // 250 × 49 × 400 on 132 SMs: 6 tiles of 400 planes at D = 4 (2 whole tiles across 2 rows of
    // tiles, the last row's 2 stacked in one, and the folded last tiles), 2400 >= 132 · 2 · 9; 5
    // tiles at D = 3, 2000 >= 132 · 2 · 7. The other boxes have fewer than two warm-ups a block.
    if (relax::current_sm_count() == 132 && e.nz == 400) {
      CHECK(chosen3);
      CHECK(chosen4);
    } else if (relax::current_sm_count() == 132) {
      CHECK_FALSE(chosen3);
      CHECK_FALSE(chosen4);
    }
  }
}

// The boxes of the schedules test above (`schedule_boxes`), with steals: heads and tails then
// steals, and whole tiles then steals (where the tiles are not fewer than the blocks too), three
// launches each, since which block takes what changes from launch to launch.
TEST_CASE("the 3D stream's steals are exact on awkward boxes", "[engine][tiled][3d][steals]") {
  for (const Extents& e : schedule_boxes) {
    check_plane_schedules<1>(e, steals_schedules, 3);
    check_plane_schedules<2>(e, steals_schedules, 3);
    check_plane_schedules<3>(e, steals_schedules, 3);
    check_plane_schedules<4>(e, steals_schedules, 3);
  }
}

TEST_CASE("the 3D stream's claim words: one buffer a stream, none while capturing", "[engine][3d][steals]") {
  relax::Stream first, second;
  unsigned long long* const words = relax::detail::plane_claim_words(first);
  CHECK(words != nullptr);
  CHECK(relax::detail::plane_claim_words(first) == words);
  CHECK(relax::detail::plane_claim_words(second) != words);
  CHECK(relax::detail::plane_claim_words(second) != nullptr);
  // A graph's replays could run side by side on one buffer: a launch being captured gets none.
  RELAX_CUDA_CHECK(cudaStreamBeginCapture(first, cudaStreamCaptureModeThreadLocal));
  unsigned long long* const captured = relax::detail::plane_claim_words(first);
  cudaGraph_t graph = nullptr;
  RELAX_CUDA_CHECK(cudaStreamEndCapture(first, &graph));
  if (graph != nullptr) RELAX_CUDA_CHECK(cudaGraphDestroy(graph));
  CHECK(captured == nullptr);
}

// A stream's first launch with steals allocates its words. Another stream may be being captured
// in global mode at that moment, by this thread or by another; the words take no part in that
// capture, so making them must leave it whole (its graph instantiates and runs).
TEST_CASE("the 3D stream's claim words: made during another stream's capture, they leave it whole",
          "[engine][3d][steals]") {
  int device = 0;
  RELAX_CUDA_CHECK(cudaGetDevice(&device));
  relax::DeviceBuffer<float> target(64);
  (void)relax::detail::current_context_id();  // its driver entry points are found once, here
  for (const bool other_thread : {false, true}) {
    INFO((other_thread ? "made by another thread" : "made by the capturing thread"));
    relax::Stream captured, fresh;
    RELAX_CUDA_CHECK(cudaStreamBeginCapture(captured, cudaStreamCaptureModeGlobal));
    const cudaError_t memset = cudaMemsetAsync(target.data(), 0, target.bytes(), captured);
    unsigned long long* words = nullptr;
    std::string failure;
    const auto make = [&] {
      try {
        if (other_thread) RELAX_CUDA_CHECK(cudaSetDevice(device));
        words = relax::detail::plane_claim_words(fresh);
      } catch (const std::exception& error) {
        failure = error.what();
      }
    };
    if (other_thread) {
      std::thread(make).join();
    } else {
      make();
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(captured, &graph);
    cudaGraphExec_t exec = nullptr;
    const cudaError_t instantiated = graph != nullptr ? cudaGraphInstantiate(&exec, graph, 0) : ended;
    const cudaError_t launched = exec != nullptr ? cudaGraphLaunch(exec, captured) : instantiated;
    RELAX_CUDA_CHECK(cudaStreamSynchronize(captured));
    RELAX_CUDA_CHECK(cudaStreamSynchronize(fresh));
    if (exec != nullptr) RELAX_CUDA_CHECK(cudaGraphExecDestroy(exec));
    if (graph != nullptr) RELAX_CUDA_CHECK(cudaGraphDestroy(graph));
    (void)cudaGetLastError();  // a failure above must not reach a later launch check
    INFO(failure);
    CHECK(failure.empty());
    CHECK(words != nullptr);
    CHECK(memset == cudaSuccess);
    CHECK(ended == cudaSuccess);
    CHECK(instantiated == cudaSuccess);
    CHECK(launched == cudaSuccess);
  }
}

// Few enough launches for the sanitizers: a box of more blocks than tiles whose pieces are long
// enough to steal from, one tile, and more tiles than blocks.
TEST_CASE("the 3D stream's steals under the sanitizers", "[engine][tiled][3d][steals][sanitize]") {
  for (const Extents& e : {Extents(250, 49, 61), Extents(1, 1, 64), Extents(1200, 800, 3)}) {
    check_plane_schedules<1>(e, steals_schedules);
    check_plane_schedules<4>(e, steals_schedules);
  }
}

TEST_CASE("a stencil with a coefficient field read by global index runs under every strategy",
          "[engine][user_stencil][sanitize]") {
  const Extents e(150, 77);
  const std::vector<float> field = relax::testing::variable_couplings(e.nx, e.ny);
  relax::DeviceBuffer<float> device_field(field.size());
  RELAX_CUDA_CHECK(cudaMemcpy(device_field.data(), field.data(), device_field.bytes(), cudaMemcpyHostToDevice));
  // Auto is told the coupling at (0, 0) (host_coupling): it cannot read the device field on the host.
  const relax::testing::VariableDiffusion5 host{field.data(), e.nx, field[0]}, device{device_field.data(), e.nx, field[0]};
  check_sweeps<relax::Sync>(host, device, e, {5});
  check_sweeps<relax::TemporalBlock<4>>(host, device, e, {9});
  check_sweeps<relax::TemporalBlock<8, relax::ColumnStream>>(host, device, e, {17});
  check_sweeps<relax::BlockAsync<4>>(host, device, e, {9}, ref::TiledSchedule{32, 8, 4, false});
  check_sweeps<relax::Auto>(host, device, e, {6});  // in L2: Auto's tree picks an exact strategy
  check_sweeps<relax::DeviceLoop<relax::TemporalBlock<4, relax::OnChip>>>(host, device, e, {9});
  check_sweeps<relax::DeviceLoop<relax::TemporalBlock<4, relax::InRegisters>>>(host, device, e, {9});
  check_sweeps<relax::DeviceLoop<relax::Sync>>(host, device, e, {5});
  check_sweeps<relax::DeviceLoop<relax::TemporalBlock<8, relax::ColumnStream>>>(host, device, e, {17});
  check_sweeps<relax::DeviceLoop<relax::BlockAsync<4>>>(host, device, e, {9}, ref::TiledSchedule{32, 8, 4, false});
  // Adaptive runs the family and depth of each batch (a controller's choice); its sync family is
  // BlockAsync<1>, whose iterates are Sync's.
  check_sweeps<relax::Adaptive>(host, device, e, {5, 1, relax::Family::sync});
  check_sweeps<relax::Adaptive>(host, device, e, {9, 4, relax::Family::temporal});
  check_sweeps<relax::Adaptive>(host, device, e, {9, 4, relax::Family::blockasync}, ref::TiledSchedule{32, 8, 4, false});
}

TEST_CASE("a 3D stencil with a coefficient field read by global index runs under every strategy",
          "[engine][user_stencil][3d][sanitize]") {
  const Extents e(61, 29, 23);
  const std::vector<float> field = relax::testing::variable_couplings(e.nx, e.ny, e.nz);
  relax::DeviceBuffer<float> device_field(field.size());
  RELAX_CUDA_CHECK(cudaMemcpy(device_field.data(), field.data(), device_field.bytes(), cudaMemcpyHostToDevice));
  const relax::testing::VariableDiffusion7 host{field.data(), e.nx, e.ny}, device{device_field.data(), e.nx, e.ny};
  check_sweeps<relax::Sync>(host, device, e, {5});
  check_sweeps<relax::TemporalBlock<4, relax::Tile<32, 8, 4>>>(host, device, e, {9});
  check_sweeps<relax::TemporalBlock<4, relax::ColumnStream>>(host, device, e, {9});
  check_sweeps<relax::TemporalBlock<3, relax::ColumnStream>>(host, device, e, {7});
  check_sweeps<relax::BlockAsync<4, relax::Tile<32, 8, 4>>>(host, device, e, {9},
                                                            ref::TiledSchedule{32, 8, 4, false, 4});
  check_sweeps<relax::Auto>(host, device, e, {6});
  check_sweeps<relax::DeviceLoop<relax::TemporalBlock<3, relax::OnChip>>>(host, device, e, {11});
  check_sweeps<relax::DeviceLoop<relax::Sync>>(host, device, e, {5});
  check_sweeps<relax::DeviceLoop<relax::TemporalBlock<4, relax::ColumnStream>>>(host, device, e, {9});
  check_sweeps<relax::DeviceLoop<relax::BlockAsync<4, relax::Tile<32, 8, 4>>>>(host, device, e, {9},
                                                                             ref::TiledSchedule{32, 8, 4, false, 4});
  check_sweeps<relax::Adaptive>(host, device, e, {5, 1, relax::Family::sync});
  check_sweeps<relax::Adaptive>(host, device, e, {9, 4, relax::Family::temporal});
  check_sweeps<relax::Adaptive>(host, device, e, {9, 4, relax::Family::blockasync},
                                ref::TiledSchedule{32, 8, 4, false, 4});
}

TEST_CASE("the 3D stream is exact at every depth, on boxes with partial tiles on every axis",
          "[engine][tiled][3d]") {
  // 32 - 2D stored rows (eight warps of four rows) and 128 - 2 ceil4(D) stored columns per tile,
  // plane segments sized at launch; the deepest D is what the plane queue's shared memory allows
  // (4 on an H200).
  using Stream = relax::TemporalBlock<relax::dynamic, relax::ColumnStream>;
  const int deepest = relax::Sweeper<Stream>::deepest_depth<relax::Stencil7<float>, float>();
  REQUIRE(deepest >= 4);
  for (const Extents& e : {Extents(250, 45, 70), Extents(121, 17, 3), Extents(7, 130, 11), Extents(240, 16, 9)})
    for (int d = 1; d <= deepest; ++d)
      check_sweeps<Stream>(relax::Stencil7<float>(3.0), e, {2 * d + 3, d});
  // float64 (two points a lane's vector): each depth alone, then launches of D and a remainder.
  for (const Extents& e : {Extents(70, 33, 21), Extents(33, 17, 5)})
    for (int d = 1; d <= 3; ++d) {
      check_sweeps<Stream>(relax::Stencil7<double>(3.0), e, {d, d});
      check_sweeps<Stream>(relax::Stencil7<double>(3.0), e, {2 * d + 1, d});
    }
  if (deepest < 8) {
    const Extents e(40, 30, 20);
    HostGrid<float> u(e);
    relax::Stream stream;
    DeviceGrid<float> du = relax::to_device(u, stream), scratch = relax::to_device(u, stream);
    CHECK_THROWS_WITH(relax::Sweeper<Stream>::run(relax::Stencil7<float>(1.0), du, scratch, du,
                                                  relax::Batch{deepest + 1, deepest + 1}, stream),
                      Catch::Contains("plane queue fits in shared memory"));
  }
}

namespace {
template <class Strategy, class Controller = relax::Fixed>
relax::RunReport gpu_run_3d(const relax::DiffusionParams& p, HostGrid<float>& final_state,
                            Controller controller = relax::Fixed(8)) {
  return relax::testing::gpu_diffusion<relax::Stencil7<float>, Strategy>(p, final_state, controller);
}
}  // namespace

TEST_CASE("the 3D diffusion problem: the GPU solver equals the reference step for step",
          "[engine][3d][solver]") {
  const auto src = GENERATE(relax::Source::point, relax::Source::gaussian);
  for (const Extents& e : {Extents(40, 40, 40), Extents(33, 17, 9)}) {
    relax::DiffusionParams p;
    p.dims = 3;
    p.nx = e.nx;
    p.ny = e.ny;
    p.nz = e.nz;
    p.r = 10.0;
    p.source = src;
    INFO("box " << e.to_text() << ", source " << relax::to_string(src));
    HostGrid<float> want_u, sync_u, temporal_u, async_u, auto_u;
    const auto want = ref::run_diffusion<float>(p, 8, {}, ref::Exec::openmp(), &want_u);
    REQUIRE(want.converged());
    relax::testing::check_same_run(gpu_run_3d<relax::Sync>(p, sync_u), sync_u, want, want_u);
    relax::testing::check_same_run(gpu_run_3d<relax::TemporalBlock<4, relax::Tile<32, 8, 4>>>(p, temporal_u),
                                   temporal_u, want, want_u);
    relax::testing::check_same_run(gpu_run_3d<relax::TemporalBlock<4, relax::ColumnStream>>(p, temporal_u),
                                   temporal_u, want, want_u);
    relax::testing::check_same_run(gpu_run_3d<relax::Auto>(p, auto_u), auto_u, want, want_u);
    HostGrid<float> async_want_u;
    const auto async_want = ref::run_diffusion<float>(p, 8, {}, ref::Exec::openmp(), &async_want_u, {},
                                                      ref::TiledSchedule{32, 8, 2, false, 4});
    relax::testing::check_same_run(gpu_run_3d<relax::BlockAsync<2>>(p, async_u), async_u, async_want,
                                   async_want_u);
    // A 32 x 8 x 4 tile's ghost zone fits in the H200's shared memory up to D = 7.
    HostGrid<float> ladder_u, adaptive_u;
    relax::Ladder ladder_control(relax::Ladder::Direction::ascending);
    ladder_control.depths = {1, 2, 4, 7};
    const auto ladder = gpu_run_3d<relax::TemporalBlock<relax::dynamic, relax::Tile<32, 8, 4>>>(
        p, ladder_u, ladder_control);
    relax::testing::check_same_run(ladder, ladder_u, want, want_u);
    const auto adaptive = gpu_run_3d<relax::Adaptive>(p, adaptive_u, relax::Feedback{});
    CHECK(adaptive.converged());
  }
}

TEST_CASE("a Ladder deeper than a 3D tile's shared memory allows is refused, naming its depths",
          "[engine][3d][validation]") {
  relax::DiffusionParams p;
  p.dims = 3;
  p.n = 16;
  HostGrid<float> u;
  using Tiled3d = relax::TemporalBlock<relax::dynamic, relax::Tile<32, 8, 4>>;
  auto run = [&] { (void)gpu_run_3d<Tiled3d>(p, u, relax::Ladder(relax::Ladder::Direction::ascending)); };
  CHECK_THROWS_WITH(run(), Catch::Contains("Ladder::depths = 8") && Catch::Contains("D <= 7"));
}

TEST_CASE("every strategy refuses a grid with a ring wider than one cell", "[engine][validation]") {
  // On a two-cell ring the sweeps would take ring cells for interior points (Shape addresses a
  // one-cell ring): refused, naming u.
  const relax::Stencil5<float> s(1.0);
  const relax::GridLayout wide = relax::GridLayout::of<float>(Extents(70, 33), 2);
  DeviceGrid<float> u(wide), scratch(wide), b(wide);
  // (Catch2 v2's `a && b` keeps pointers to a and b: the two matchers are named, and joined in
  // each check.)
  const auto invalid_u = Catch::Contains("invalid u = ");
  const auto one_cell = Catch::Contains("one-cell ring");
  CHECK_THROWS_WITH(relax::Sweeper<relax::Sync>::run(s, u, scratch, b, {1}, nullptr), invalid_u && one_cell);
  CHECK_THROWS_WITH((relax::Sweeper<relax::TemporalBlock<2, relax::ColumnStream>>::run(s, u, scratch, b, {2}, nullptr)),
                    invalid_u && one_cell);
  CHECK_THROWS_WITH((relax::Sweeper<relax::TemporalBlock<2>>::run(s, u, scratch, b, {2}, nullptr)),
                    invalid_u && one_cell);
  CHECK_THROWS_WITH((relax::Sweeper<relax::BlockAsync<2>>::run(s, u, scratch, b, {2}, nullptr)),
                    invalid_u && one_cell);
}

TEST_CASE("3D sweeps per step stay flat in N", "[engine][3d][solver]") {
  std::vector<double> per_step;
  for (std::int64_t n : {32, 64, 128}) {
    relax::DiffusionParams p;
    p.dims = 3;
    p.n = n;
    p.r = 10.0;
    HostGrid<float> u;
    const auto run = gpu_run_3d<relax::Sync>(p, u);
    REQUIRE(run.converged());
    per_step.push_back(double(run.sweeps()) / double(run.steps.size()));
  }
  INFO("sweeps per step " << per_step[0] << ", " << per_step[1] << ", " << per_step[2]);
  CHECK(per_step[2] <= 1.3 * per_step[0]);
  CHECK(per_step[2] >= 0.7 * per_step[0]);
}

namespace {
__global__ void device_decisions(relax::StopCriterion c, double rhs_norm, const double* norms, int count,
                                 std::int64_t step, int* out) {
  for (int k = 0; k < count; ++k) {
    const relax::StopReason r = c.decide(norms[k], rhs_norm, static_cast<std::int64_t>(k + 1) * step);
    out[k] = static_cast<int>(r);
    if (r != relax::StopReason::go_on) break;
  }
}
}  // namespace

namespace {
__global__ void device_levels(relax::LadderRule rule, const double* rhos, int count, int* out) {
  int level = 0;
  for (int k = 0; k < count; ++k) out[k] = level = rule.advance(level, rhos[k]);
}
}  // namespace

TEST_CASE("the device evaluation of the ladder steps as the host Ladder does", "[engine][ladder][sanitize]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> rhos = {1.0, 0.5, 2e-2, 9e-3, 0.1, nan, 5e-4, 1e-3, 2e-5, 1.0};
  for (const auto direction : {relax::Ladder::Direction::ascending, relax::Ladder::Direction::descending}) {
    relax::Ladder host(direction, 8);
    host.begin_solve();
    relax::DeviceBuffer<double> d_rhos(rhos.size());
    relax::DeviceBuffer<int> out(rhos.size());
    RELAX_CUDA_CHECK(cudaMemcpy(d_rhos.data(), rhos.data(), d_rhos.bytes(), cudaMemcpyHostToDevice));
    device_levels<<<1, 1>>>(host.rule(), d_rhos.data(), static_cast<int>(rhos.size()), out.data());
    RELAX_CUDA_CHECK_LAUNCH();
    std::vector<int> got(rhos.size());
    RELAX_CUDA_CHECK(cudaMemcpy(got.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost));
    std::vector<int> want, depths_got, depths_want;
    for (std::size_t k = 0; k < rhos.size(); ++k) {
      host.observe({static_cast<std::int64_t>(8 * (k + 1)), rhos[k]});
      want.push_back(static_cast<int>(host.level()));
      depths_want.push_back(host.depth());
      depths_got.push_back(host.rule().depth(got[k]));
    }
    CHECK(got == want);
    CHECK(depths_got == depths_want);
    CHECK(want == std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2, 3, 3});  // latched; NaN passes nothing
  }
}

TEST_CASE("the device evaluation of the stop criterion decides as the host does", "[engine][stop][sanitize]") {
  for (const auto& seq : relax::testing::stop_sequences()) {
    INFO(seq.name);
    const int count = static_cast<int>(seq.norms.size());
    relax::DeviceBuffer<double> norms(seq.norms.size());
    relax::DeviceBuffer<int> out(seq.norms.size());
    RELAX_CUDA_CHECK(cudaMemcpy(norms.data(), seq.norms.data(), norms.bytes(), cudaMemcpyHostToDevice));
    RELAX_CUDA_CHECK(cudaMemset(out.data(), 0xff, out.bytes()));
    device_decisions<<<1, 1>>>(seq.criterion, seq.rhs_norm, norms.data(), count, seq.step, out.data());
    RELAX_CUDA_CHECK_LAUNCH();
    std::vector<int> got(seq.norms.size());
    RELAX_CUDA_CHECK(cudaMemcpy(got.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost));
    const std::vector<relax::StopReason> host = relax::testing::host_decisions(seq);
    REQUIRE(host == seq.expected);
    for (std::size_t k = 0; k < host.size(); ++k) CHECK(got[k] == static_cast<int>(host[k]));
  }
}
