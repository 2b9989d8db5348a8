// Bad input gives a clear error naming the argument: library parameters and the driver's options.
#include <catch2/catch.hpp>

#include "driver_options.hpp"

#include <relax/control/fixed.hpp>
#include <relax/cpu/jacobi.hpp>
#include <relax/stencil/stencil5.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

// Runs `fn`, requires a relax::invalid_argument, and returns the argument it names.
template <class Fn>
std::string rejected_argument(Fn&& fn) {
  try {
    fn();
  } catch (const relax::invalid_argument& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find(e.argument()) != std::string::npos);
    return e.argument();
  }
  FAIL("no relax::invalid_argument was thrown");
  return "";
}

std::string rejected_option(std::vector<std::string> args) {
  return rejected_argument([&] { (void)relax::driver::parse(args); });
}

const double not_a_number = std::numeric_limits<double>::quiet_NaN();
const double infinity = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("problem parameters are validated", "[validation]") {
  relax::DiffusionParams p;
  for (std::int64_t n : {-1, 0, 1, 2}) {
    p = {};
    p.n = n;
    CHECK(rejected_argument([&] { p.validate(); }) == "n");
  }
  for (double r : {0.0, -1.0, not_a_number, infinity}) {
    p = {};
    p.r = r;
    CHECK(rejected_argument([&] { p.validate(); }) == "r");
    CHECK(rejected_argument([&] { relax::Stencil5<float> s(r); }) == "r");
  }
  // An extent of 0 stands for n; a negative one is an error, not n.
  p = {};
  p.nx = 70;
  p.ny = 0;
  CHECK_NOTHROW(p.validate());
  CHECK(p.extents() == relax::Extents(70, 512));
  p.ny = -5;
  CHECK(rejected_argument([&] { p.validate(); }) == "ny");
  p = {};
  p.dims = 3;
  p.nz = -1;
  CHECK(rejected_argument([&] { p.validate(); }) == "nz");
  p = {};
  p.steps = 0;
  CHECK(rejected_argument([&] { p.validate(); }) == "steps");
  p = {};
  p.amplitude = not_a_number;
  CHECK(rejected_argument([&] { p.validate(); }) == "amplitude");
  CHECK(rejected_argument([] { (void)relax::parse_source("line"); }) == "source");
  CHECK(relax::parse_source("point") == relax::Source::point);
}

TEST_CASE("problem parameters are validated for the type a run uses", "[validation]") {
  relax::DiffusionParams p;
  p.n = 8;
  p.amplitude = 1e39;  // finite in double, not in float
  CHECK(rejected_argument([&] { (void)relax::source_term<float>(p); }) == "amplitude");
  CHECK_NOTHROW(relax::source_term<double>(p));
  p.amplitude = 10.0;
  p.top_value = -1e39;
  CHECK(rejected_argument([&] { (void)relax::initial_state<float>(p); }) == "top_value");
  p.top_value = 100.0;
  p.r = 1e-46;  // 0 in float
  CHECK(rejected_argument([&] { p.validate_for<float>(); }) == "r");
  CHECK_NOTHROW(p.validate_for<double>());
}

TEST_CASE("solve options and controllers are validated", "[validation]") {
  for (double tol : {0.0, -1e-5, not_a_number, infinity}) {
    relax::SolveOptions o;
    o.tol = tol;
    CHECK(rejected_argument([&] { o.validate(); }) == "tol");
  }
  relax::SolveOptions o;
  o.max_sweeps = 0;
  CHECK(rejected_argument([&] { o.validate(); }) == "max_sweeps");
  CHECK(rejected_argument([] { relax::Fixed f(0); }) == "check_interval");
  const relax::Stencil5<float> s(1.0);
  relax::HostGrid<float> u(8), scratch(8), b(8);
  CHECK(rejected_argument([&] { relax::reference::solve(s, u, scratch, b, 0, {}); }) ==
        "check_interval");
}

TEST_CASE("grids of the wrong size are rejected", "[validation]") {
  const relax::Stencil5<float> s(1.0);
  relax::HostGrid<float> u(8), other(9), b(8);
  CHECK(rejected_argument([&] { relax::reference::sweep(s, u, other, b); }) == "out");
  CHECK(rejected_argument([&] { relax::reference::sweep(s, u, b, other); }) == "b");
  CHECK(rejected_argument([&] { (void)relax::reference::residual_norm(s, u, other); }) == "b");
  CHECK(rejected_argument([&] { relax::reference::solve(s, u, other, b, 8, {}); }) == "scratch");
}

TEST_CASE("the reference backend refuses a wider ring, another origin, aliased grids, negative threads",
          "[validation][reference]") {
  const relax::Stencil5<double> s(1.0);
  // A two-cell ring: the sweep would address ring cells as interior points.
  const auto wide = relax::GridLayout::of<double>(relax::Extents(3, 3), 2);
  relax::HostGrid<double> uw(wide), sw(wide), bw(wide);
  CHECK(rejected_argument([&] { relax::reference::sweep(s, uw, sw, bw); }) == "u");
  CHECK(rejected_argument([&] { relax::reference::solve(s, uw, sw, bw, 8, {}); }) == "u");
  // b at another global origin: a stencil reading coefficients by global index would read other
  // ones in the sweep (u's origin) and in the residual (b's).
  relax::HostGrid<double> u(5), out(5);
  auto moved = relax::GridLayout::of<double>(relax::Extents(5, 5));
  moved.origin = {3, 0, 0};
  relax::HostGrid<double> b(moved);
  CHECK(rejected_argument([&] { relax::reference::sweep(s, u, out, b); }) == "b");
  CHECK(rejected_argument([&] { (void)relax::reference::residual_norm(s, u, b); }) == "b");
  // The same grid twice: in place, a sweep is Gauss–Seidel and a solve counts its sweeps.
  relax::HostGrid<double> b5(5);
  CHECK(rejected_argument([&] { relax::reference::sweep(s, u, u, b5); }) == "out");
  CHECK(rejected_argument([&] { relax::reference::sweep(s, u, b5, b5); }) == "out");
  CHECK(rejected_argument([&] { relax::reference::solve(s, u, u, b5, 8, {}); }) == "scratch");
  CHECK(rejected_argument([&] { relax::reference::solve(s, u, out, u, 8, {}); }) == "b");
  CHECK(rejected_argument([&] { relax::reference::sweep(s, u, out, b5, relax::reference::Exec{-5}); }) ==
        "threads");
  CHECK_NOTHROW(relax::reference::sweep(s, u, out, b5, relax::reference::Exec{0}));
}

TEST_CASE("driver options: defaults, values and errors", "[validation][driver]") {
  const auto d = relax::driver::parse({});
  CHECK(d.problem.n == 512);
  CHECK(d.check_interval == 8);
  CHECK(d.solve.tol == 1e-5);
  CHECK(d.backend == relax::driver::Backend::automatic);

  const auto o = relax::driver::parse({"--n", "70", "--r", "100", "--source", "point", "--steps",
                                       "3", "--tol", "1e-6", "--check-interval", "4", "--backend",
                                       "cpu", "--precision", "double", "--json", "out.json"});
  CHECK(o.problem.n == 70);
  CHECK(o.problem.r == 100.0);
  CHECK(o.problem.source == relax::Source::point);
  CHECK(o.problem.steps == 3);
  CHECK(o.solve.tol == 1e-6);
  CHECK(o.check_interval == 4);
  CHECK(o.backend == relax::driver::Backend::cpu);
  CHECK(o.precision == relax::driver::Precision::float64);
  CHECK(o.json_path == "out.json");
  CHECK(o.strategy == relax::driver::StrategyName::automatic);
  CHECK(o.solve.checks == relax::CheckMode::blocking);

  const auto t = relax::driver::parse({"--strategy", "blockasync", "--depth", "8", "--checks", "overlapped"});
  CHECK(t.strategy == relax::driver::StrategyName::blockasync);
  CHECK(t.depth == 8);
  CHECK(t.solve.checks == relax::CheckMode::overlapped);
  CHECK(relax::driver::parse({"--strategy", "sync"}).strategy == relax::driver::StrategyName::sync);
  CHECK(relax::driver::parse({"--strategy", "device-loop"}).strategy == relax::driver::StrategyName::device_loop);
  CHECK(relax::driver::parse({"--strategy", "on-chip"}).strategy == relax::driver::StrategyName::on_chip);
  CHECK(relax::driver::parse({"--strategy", "device-stream"}).strategy == relax::driver::StrategyName::device_stream);
  CHECK(relax::driver::parse({"--devices", "0,0,1", "--strategy", "sync"}).devices == std::vector<int>{0, 0, 1});
  CHECK(relax::driver::parse({"--devices", "3", "--strategy", "temporal"}).devices == std::vector<int>{3});
  for (const char* bad : {"", "0,", ",0", "0,,1", "-1", "a", "0;1", "2048"})
    CHECK_THROWS_WITH(relax::driver::parse({"--devices", bad, "--strategy", "sync"}),
                      Catch::Contains("--devices") && Catch::Contains("comma-separated list of device indices"));
  CHECK_THROWS_WITH(relax::driver::parse({"--devices", "0,0"}), Catch::Contains("sync or temporal with --devices"));
  CHECK_THROWS_WITH(relax::driver::parse({"--devices", "0,0", "--strategy", "sync", "--checks", "overlapped"}),
                    Catch::Contains("blocking with --devices"));
  CHECK_THROWS_WITH(relax::driver::parse({"--devices", "0", "--strategy", "sync", "--backend", "cpu"}),
                    Catch::Contains("gpu or auto with --devices"));
  CHECK(relax::driver::parse({"--gpus", "3", "--strategy", "sync"}).devices == std::vector<int>{0, 1, 2});
  const auto peer = relax::driver::parse({"--devices", "0,0", "--comm", "peer-store", "--strategy", "device-loop"});
  CHECK(peer.comm == relax::driver::CommName::peer_store);
  CHECK(relax::driver::parse({"--devices", "0,0", "--strategy", "sync"}).comm == relax::driver::CommName::host_copy);
  const auto streamed =
      relax::driver::parse({"--devices", "0,0", "--comm", "peer-store", "--strategy", "device-stream", "--depth", "8"});
  CHECK(streamed.strategy == relax::driver::StrategyName::device_stream);
  CHECK(streamed.depth == 8);
  CHECK_THROWS_WITH(relax::driver::parse({"--devices", "0,0", "--comm", "peer-store", "--strategy", "sync"}),
                    Catch::Contains("device-loop or device-stream with --comm peer-store"));
  CHECK_THROWS_WITH(relax::driver::parse({"--devices", "0,0", "--comm", "peer-store", "--strategy", "on-chip"}),
                    Catch::Contains("device-loop or device-stream with --comm peer-store"));
  CHECK_THROWS_WITH(relax::driver::parse({"--comm", "peer-store", "--strategy", "device-loop"}),
                    Catch::Contains("given with --devices or --gpus"));
  // --comm nccl: the host API with launch-based strategies, the device API with the CPU-free ones.
  CHECK(relax::driver::parse({"--gpus", "2", "--comm", "nccl", "--strategy", "temporal"}).comm ==
        relax::driver::CommName::nccl);
  CHECK(relax::driver::parse({"--devices", "0,0", "--comm", "nccl", "--strategy", "device-stream"}).strategy ==
        relax::driver::StrategyName::device_stream);
  CHECK_THROWS_WITH(relax::driver::parse({"--devices", "0,0", "--comm", "nccl", "--strategy", "blockasync"}),
                    Catch::Contains("with --comm nccl") && Catch::Contains("device API"));
  CHECK_THROWS_WITH(relax::driver::parse({"--comm", "nccl", "--strategy", "sync"}),
                    Catch::Contains("--comm = nccl") || Catch::Contains("given with --devices or --gpus"));
  CHECK_THROWS_WITH(relax::driver::parse({"--devices", "0", "--gpus", "2", "--strategy", "sync"}),
                    Catch::Contains("one of --devices and --gpus"));
  CHECK(rejected_option({"--comm", "mail", "--devices", "0"}) == "--comm");
  CHECK(rejected_option({"--gpus", "0", "--strategy", "sync"}) == "--gpus");
  CHECK(rejected_option({"--checks", "sometimes"}) == "--checks");
  CHECK(rejected_option({"--strategy", "async"}) == "--strategy");
  CHECK(rejected_option({"--depth", "3"}) == "--depth");

  CHECK(rejected_option({"--n", "2"}) == "--n");
  CHECK(rejected_option({"--n", "12x"}) == "--n");
  // Beyond 64 bits: an error, not the largest integer strtoll saturates to.
  CHECK_THROWS_WITH(relax::driver::parse({"--n", "99999999999999999999"}),
                    Catch::Contains("--n") && Catch::Contains("within 64 bits"));
  CHECK_THROWS_WITH(relax::driver::parse({"--max-sweeps", "-99999999999999999999"}),
                    Catch::Contains("--max-sweeps") && Catch::Contains("within 64 bits"));
  CHECK(rejected_option({"--r", "0"}) == "--r");
  CHECK(rejected_option({"--r", "nan"}) == "--r");
  CHECK(rejected_option({"--r", "abc"}) == "--r");
  CHECK(rejected_option({"--tol", "0"}) == "--tol");
  CHECK(rejected_option({"--check-interval", "0"}) == "--check-interval");
  CHECK(rejected_option({"--max-sweeps", "0"}) == "--max-sweeps");
  CHECK(rejected_option({"--steps", "0"}) == "--steps");
  CHECK(rejected_option({"--source", "ring"}) == "--source");
  CHECK(rejected_option({"--backend", "tpu"}) == "--backend");
  CHECK(rejected_option({"--precision", "half"}) == "--precision");
  CHECK(rejected_option({"--threads", "-1"}) == "--threads");
  // OpenMP fails allocating two billion threads: refused here, naming the option.
  CHECK(rejected_option({"--threads", "2147483647"}) == "--threads");
  CHECK(rejected_option({"--json", ""}) == "--json");  // it was taken as "no report"
  // Finite in double but not in float (the default precision): named here, not after the run
  // started (r) or as an infinite source (amplitude).
  CHECK(rejected_option({"--amplitude", "1e39"}) == "--amplitude");
  CHECK(rejected_option({"--r", "1e39"}) == "--r");
  CHECK(rejected_option({"--r", "1e-46"}) == "--r");  // 0 in float
  CHECK_NOTHROW(relax::driver::parse({"--amplitude", "1e39", "--r", "1e39", "--precision", "double"}));
  CHECK(rejected_option({"--n"}) == "--n");
  CHECK(rejected_option({"--bogus", "1"}) == "option");
}

TEST_CASE("driver options: rectangular and 3D boxes", "[validation][driver][3d]") {
  const auto r = relax::driver::parse({"--nx", "70", "--ny", "1000"});
  CHECK(r.problem.extents() == relax::Extents(70, 1000));
  const auto c = relax::driver::parse({"--n", "64", "--dims", "3"});
  CHECK(c.problem.extents() == relax::Extents(64, 64, 64));
  const auto b = relax::driver::parse({"--nx", "33", "--ny", "17", "--nz", "5"});
  CHECK(b.problem.dims == 3);
  CHECK(b.problem.extents() == relax::Extents(33, 17, 5));
  CHECK(rejected_option({"--dims", "4"}) == "--dims");
  CHECK(rejected_option({"--nx", "2"}) == "--nx");
  CHECK(rejected_option({"--nz", "1"}) == "--nz");
  // 0 and negative extents are errors on the command line (the problem reads 0 as n).
  CHECK(rejected_option({"--nz", "0"}) == "--nz");
  CHECK(rejected_option({"--n", "5", "--dims", "3", "--nz", "0"}) == "--nz");
  CHECK(rejected_option({"--nx", "-3", "--ny", "10"}) == "--nx");
  CHECK(rejected_option({"--ny", "0"}) == "--ny");
}

TEST_CASE("driver backend: gpu without a device is an error naming --backend", "[validation][driver]") {
  using relax::driver::Backend;
  CHECK(rejected_argument([] { (void)relax::driver::resolve(Backend::gpu, 0); }) == "--backend");
  CHECK(relax::driver::resolve(Backend::automatic, 0) == Backend::cpu);
  CHECK(relax::driver::resolve(Backend::automatic, 2) == Backend::gpu);
  CHECK(relax::driver::resolve(Backend::cpu, 1) == Backend::cpu);
  CHECK(relax::driver::resolve(Backend::gpu, 1) == Backend::gpu);
}
