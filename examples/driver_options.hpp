#pragma once
// Command-line options of the diffusion driver (01_diffusion_driver.cu), kept apart from the
// driver so the host tests can check parsing and backend resolution without a GPU.

#include <relax/control/fixed.hpp>
#include <relax/core/error.hpp>
#include <relax/control/report.hpp>
#include <relax/problem/diffusion.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace relax::driver {

enum class Backend { automatic, gpu, cpu };
enum class Precision { float32, float64 };
enum class StrategyName { automatic, sync, temporal, blockasync, device_loop, on_chip, device_stream };
//! How the sub-domains of --devices exchange halos: the host's copies, the kernels' stores, or NCCL.
enum class CommName { host_copy, peer_store, nccl };

inline const char* to_string(CommName c) {
  switch (c) {
    case CommName::host_copy: return "host-copy";
    case CommName::peer_store: return "peer-store";
    case CommName::nccl: return "nccl";
  }
  return "?";
}

inline const char* to_string(StrategyName s) {
  switch (s) {
    case StrategyName::automatic: return "auto";
    case StrategyName::sync: return "sync";
    case StrategyName::temporal: return "temporal";
    case StrategyName::blockasync: return "blockasync";
    case StrategyName::device_loop: return "device-loop";
    case StrategyName::on_chip: return "on-chip";
    case StrategyName::device_stream: return "device-stream";
  }
  return "?";
}

struct Options {
  DiffusionParams problem;
  SolveOptions solve;
  int check_interval = 8;
  Backend backend = Backend::automatic;
  Precision precision = Precision::float32;
  StrategyName strategy = StrategyName::automatic;
  int depth = 4;  // D of temporal and blockasync
  std::vector<int> devices;  // --devices: one sub-domain per entry (repeats allowed); empty: one domain
  CommName comm = CommName::host_copy;  // --comm: the sub-domains' halo exchange
  bool comm_given = false;
  int threads = 0;  // reference backend: 0 = all OpenMP threads
  std::string json_path;
  bool help = false;
};

inline const char* usage() {
  return "usage: relax-diffusion [options]\n"
         "  --n N              interior points per side (default 512, >= 3)\n"
         "  --dims D           2 (the unit square) or 3 (the unit cube) (default 2)\n"
         "  --nx X --ny Y      a rectangular box: points along x (a row) and y (default N)\n"
         "  --nz Z             points along z, 3D only (default N; implies --dims 3)\n"
         "  --r R              coupling r = alpha dt / h^2 (default 10, > 0)\n"
         "  --source S         point | gaussian (default gaussian)\n"
         "  --amplitude A      peak of dt*f (default 10)\n"
         "  --steps K          backward-Euler steps (default 10)\n"
         "  --tol T            stop when ||b - Au||inf / ||b||inf < T (default 1e-5)\n"
         "  --check-interval M sweeps between convergence checks (default 8)\n"
         "  --max-sweeps C     sweep cap per step (default 1000000)\n"
         "  --strategy S       auto (picked from N, r and the GPU's L2) | sync | temporal\n"
         "                     (exact, D sweeps per pass) | blockasync (stale halos, D local\n"
         "                     sweeps per pass) | device-loop (Sync's sweeps, the solve's loop and\n"
         "                     its checks in one GPU kernel) | on-chip (the loop in one kernel, every\n"
         "                     tile kept in shared memory, D exact sweeps per halo exchange, all\n"
         "                     steps in one launch; grids up to about 1400^2 points) | device-stream\n"
         "                     (the loop in one kernel, temporal's stream of D exact sweeps per\n"
         "                     pass; any grid) (default auto)\n"
         "  --depth D          D for temporal, blockasync, on-chip and device-stream: 1, 2, 4 or 8\n"
         "                     (default 4; 3D streams: at most 4 on an H200)\n"
         "  --checks C         blocking | overlapped (sweep on while rho travels; default blocking)\n"
         "  --devices LIST     split the box into one slab per listed GPU, e.g. 0,1 or 0,0,0 (a GPU may\n"
         "                     repeat: several sub-domains on one GPU); blocking checks, the GPU\n"
         "                     backend\n"
         "  --gpus K           --devices 0,1,...,K-1 (one slab on each of K GPUs)\n"
         "  --comm C           the slabs' halo exchange: host-copy (the host copies the halos after\n"
         "                     each batch; strategies sync and temporal) | peer-store (the kernels\n"
         "                     store them and sync on flags, no host in the loop; strategies\n"
         "                     device-loop and device-stream, whose halo is D rows every pass) |\n"
         "                     nccl (NCCL, where the driver is built with it: with sync and\n"
         "                     temporal its host API, one GPU per slab; with device-loop and\n"
         "                     device-stream its device API, one rank on one GPU holding every\n"
         "                     slab, e.g. --devices 0,0) (default host-copy)\n"
         "  --backend B        auto | gpu | cpu (default auto: the GPU if one is present)\n"
         "  --threads P        reference backend threads, 0 = all (default 0)\n"
         "  --precision P      float | double (default float)\n"
         "  --json FILE        also write the report as JSON\n"
         "  --help             this text\n";
}

namespace detail {
inline std::int64_t parse_int(const std::string& option, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') throw invalid_argument(option, text, "an integer");
  if (errno == ERANGE) throw invalid_argument(option, text, "an integer within 64 bits");
  return v;
}
//! An extent given on the command line (--nx, --ny, --nz): 0, which the problem reads as "n",
//! is an error here like any other value below 3.
inline std::int64_t parse_extent(const std::string& option, const std::string& text) {
  const std::int64_t v = parse_int(option, text);
  if (v < 3) throw invalid_argument(option, text, "at least 3 interior points per side");
  return v;
}
inline double parse_real(const std::string& option, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') throw invalid_argument(option, text, "a number");
  return v;
}
//! A comma-separated list of device indices ("0,0,1").
inline std::vector<int> parse_devices(const std::string& option, const std::string& text) {
  std::vector<int> out;
  std::size_t at = 0;
  while (true) {
    const std::size_t comma = text.find(',', at);
    const std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0 || v > 1023)
      throw invalid_argument(option, text, "a comma-separated list of device indices, e.g. 0,1 or 0,0");
    out.push_back(static_cast<int>(v));
    if (comma == std::string::npos) return out;
    at = comma + 1;
  }
}
inline int narrow(const std::string& option, std::int64_t v) {
  relax::detail::require(v >= -2147483647 && v <= 2147483647, option.c_str(), v,
                         "a value that fits in an int");
  return static_cast<int>(v);
}
}  // namespace detail

//! Parses the arguments after the program name. Throws `relax::invalid_argument` naming the
//! option for an unknown option, a missing or malformed value, or a value out of range.
inline Options parse(const std::vector<std::string>& args) {
  Options o;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string& opt = args[k];
    if (opt == "--help" || opt == "-h") {
      o.help = true;
      continue;
    }
    if (k + 1 >= args.size()) {
      if (opt.rfind("--", 0) != 0) throw invalid_argument("option", opt, "an option such as --n");
      throw invalid_argument(opt, "nothing", "a value after the option");
    }
    const std::string& v = args[++k];
    if (opt == "--n") o.problem.n = detail::parse_int(opt, v);
    else if (opt == "--dims") o.problem.dims = detail::narrow(opt, detail::parse_int(opt, v));
    else if (opt == "--nx") o.problem.nx = detail::parse_extent(opt, v);
    else if (opt == "--ny") o.problem.ny = detail::parse_extent(opt, v);
    else if (opt == "--nz") {
      o.problem.nz = detail::parse_extent(opt, v);
      o.problem.dims = 3;
    }
    else if (opt == "--r") o.problem.r = detail::parse_real(opt, v);
    else if (opt == "--source") {
      try {
        o.problem.source = parse_source(v);
      } catch (const invalid_argument&) {
        throw invalid_argument(opt, v, "point or gaussian");
      }
    }
    else if (opt == "--amplitude") o.problem.amplitude = detail::parse_real(opt, v);
    else if (opt == "--steps") o.problem.steps = detail::narrow(opt, detail::parse_int(opt, v));
    else if (opt == "--tol") o.solve.tol = detail::parse_real(opt, v);
    else if (opt == "--check-interval") o.check_interval = detail::narrow(opt, detail::parse_int(opt, v));
    else if (opt == "--max-sweeps") o.solve.max_sweeps = detail::parse_int(opt, v);
    else if (opt == "--depth") o.depth = detail::narrow(opt, detail::parse_int(opt, v));
    else if (opt == "--strategy") {
      if (v == "auto") o.strategy = StrategyName::automatic;
      else if (v == "sync") o.strategy = StrategyName::sync;
      else if (v == "temporal") o.strategy = StrategyName::temporal;
      else if (v == "blockasync") o.strategy = StrategyName::blockasync;
      else if (v == "device-loop") o.strategy = StrategyName::device_loop;
      else if (v == "on-chip") o.strategy = StrategyName::on_chip;
      else if (v == "device-stream") o.strategy = StrategyName::device_stream;
      else throw invalid_argument(opt, v, "auto, sync, temporal, blockasync, device-loop, on-chip or device-stream");
    }
    else if (opt == "--checks") {
      if (v == "blocking") o.solve.checks = CheckMode::blocking;
      else if (v == "overlapped") o.solve.checks = CheckMode::overlapped;
      else throw invalid_argument(opt, v, "blocking or overlapped");
    }
    else if (opt == "--threads") o.threads = detail::narrow(opt, detail::parse_int(opt, v));
    else if (opt == "--devices" || opt == "--gpus") {
      relax::detail::require(o.devices.empty(), opt.c_str(), v, "one of --devices and --gpus, once");
      if (opt == "--devices") {
        o.devices = detail::parse_devices(opt, v);
      } else {
        const std::int64_t k = detail::parse_int(opt, v);
        relax::detail::require(k >= 1 && k <= 1024, "--gpus", v.c_str(), "1 to 1024 GPUs");
        for (int d = 0; d < k; ++d) o.devices.push_back(d);
      }
    } else if (opt == "--comm") {
      if (v == "host-copy") o.comm = CommName::host_copy;
      else if (v == "peer-store") o.comm = CommName::peer_store;
      else if (v == "nccl") o.comm = CommName::nccl;
      else throw invalid_argument(opt, v, "host-copy, peer-store or nccl");
      o.comm_given = true;
    }
    else if (opt == "--json") {
      relax::detail::require(!v.empty(), "--json", "\"\"", "a file name");
      o.json_path = v;
    }
    else if (opt == "--backend") {
      if (v == "auto") o.backend = Backend::automatic;
      else if (v == "gpu") o.backend = Backend::gpu;
      else if (v == "cpu") o.backend = Backend::cpu;
      else throw invalid_argument(opt, v, "auto, gpu or cpu");
    } else if (opt == "--precision") {
      if (v == "float") o.precision = Precision::float32;
      else if (v == "double") o.precision = Precision::float64;
      else throw invalid_argument(opt, v, "float or double");
    } else {
      throw invalid_argument("option", opt, "one of the options listed by --help");
    }
  }
  // The library names its own parameters (n, r, tol, ...); the user typed --n, --r, --tol.
  try {
    if (o.precision == Precision::float32) o.problem.validate_for<float>();
    else o.problem.validate_for<double>();
    o.solve.validate();
    Fixed(o.check_interval).validate();
  } catch (const invalid_argument& e) {
    std::string option = "--" + e.argument();
    for (char& c : option)
      if (c == '_') c = '-';
    throw invalid_argument(option, e.value(), e.expected());
  }
  // More threads than the machine runs at once only slow the reference backend down, and a huge
  // count makes OpenMP fail allocating them.
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  relax::detail::require(o.threads >= 0 && o.threads <= hardware, "--threads", o.threads,
                         ("0 (all) to " + std::to_string(hardware) + " (this machine's hardware threads)").c_str());
  relax::detail::require(o.depth == 1 || o.depth == 2 || o.depth == 4 || o.depth == 8, "--depth",
                         o.depth, "1, 2, 4 or 8");
  relax::detail::require(!o.comm_given || !o.devices.empty(), "--comm", to_string(o.comm),
                         "given with --devices or --gpus (the exchange between sub-domains)");
  if (!o.devices.empty()) {
    if (o.comm == CommName::nccl)
      relax::detail::require(o.strategy == StrategyName::sync || o.strategy == StrategyName::temporal ||
                                 o.strategy == StrategyName::device_loop || o.strategy == StrategyName::device_stream,
                             "--strategy", to_string(o.strategy),
                             "sync or temporal (NCCL's host API) or device-loop or device-stream (its device API) "
                             "with --comm nccl");
    else if (o.comm == CommName::peer_store)
      relax::detail::require(o.strategy == StrategyName::device_loop || o.strategy == StrategyName::device_stream,
                             "--strategy", to_string(o.strategy),
                             "device-loop or device-stream with --comm peer-store (the CPU-free multi-sub-domain "
                             "solver's)");
    else
      relax::detail::require(o.strategy == StrategyName::sync || o.strategy == StrategyName::temporal, "--strategy",
                             to_string(o.strategy), "sync or temporal with --devices (the multi-sub-domain solver's)");
    relax::detail::require(o.solve.checks == CheckMode::blocking, "--checks", "overlapped",
                           "blocking with --devices");
    relax::detail::require(o.backend != Backend::cpu, "--backend", "cpu", "gpu or auto with --devices");
  }
  return o;
}

//! The backend a run uses: `gpu` needs a device; `automatic` takes the GPU when there is one.
inline Backend resolve(Backend requested, int devices) {
  if (requested == Backend::gpu && devices == 0)
    throw invalid_argument("--backend", "gpu", "auto or cpu: no CUDA device is present");
  if (requested == Backend::automatic) return devices > 0 ? Backend::gpu : Backend::cpu;
  return requested;
}

}  // namespace relax::driver
