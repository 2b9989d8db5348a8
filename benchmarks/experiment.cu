// The experiment runner of the source study's matrix: ten implicit diffusion steps per
// configuration (N, r, source, strategy), every strategy and controller, repeated, all timed with
// CUDA events including the convergence checks. Appends one CSV row per run, flushed at once, and
// skips runs already in the file, so a run cut short by the device-time budget resumes where it
// stopped. benchmarks/experiment_report.py turns the CSV into tables, plots and summary figures.
//
//   relax_experiment --out FILE.csv [--sizes 512,1024,...,max] [--r 1,10,100]
//                    [--sources point,gaussian] [--strategies sync,temporal8,...] [--repeats 3]
//                    [--budget-seconds S] [--check-interval 8]
//
// Strategies: sync; temporalD (TemporalBlock<D, ColumnStream>, D = 2, 4, 8); blockasyncD
// (BlockAsync<D>, D = 2, 4, 8); ladder-asc and ladder-desc (BlockAsync<dynamic>, as in the source
// study); feedback (relax::Adaptive: Feedback chooses the family and D), feedback-exact
// (TemporalBlock<dynamic, ColumnStream>) and feedback-async (BlockAsync<dynamic>); onchipD
// (DeviceLoop<TemporalBlock<D, OnChip>>, D = 4, 8: grids that fit on chip only); registers8
// (DeviceLoop<TemporalBlock<8, InRegisters>>: grids that fit its frame only); streamD
// (DeviceLoop<TemporalBlock<D, ColumnStream>>, D = 4, 8: the streamed device loop, any grid).
// auto is relax::Auto (the on-chip loop where the grid fits, its tiles in registers from 1024
// points an SM, else the generated decision tree's choice, a launch-based strategy or the streamed
// device loop).
// The suffix "+overlap" runs a strategy with overlapped convergence checks (relax::CheckMode).
// For Feedback, the log has two lines before each run's line: the family and D each step ended
// at, with its sweeps, checks and milliseconds, and the sweeps per millisecond measured at each
// depth with each asynchronous trial's gain.
// Size `max` is the largest N whose four grids fit in 90% of free memory.
#include "driver_options.hpp"

#include <relax/control/feedback.hpp>
#include <relax/control/ladder.hpp>
#include <relax/solver/diffusion.cuh>
#include <relax/solver/solver.cuh>
#include <relax/stencil/stencil5.hpp>
#include <relax/strategy/adaptive.cuh>
#include <relax/strategy/auto.cuh>
#include <relax/strategy/column_stream.cuh>
#include <relax/strategy/sync.cuh>
#include <relax/strategy/tiled.cuh>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using Run = std::function<relax::RunReport(const relax::DiffusionParams&, int check_interval)>;

// The grid of the untimed warm-up run that loads every kernel.
constexpr std::int64_t warm_up_n = 64;

// What Feedback chose in each step of a run, and what it measured, for the log: per step the
// family and D it ended on, the sweeps, checks and milliseconds; then the sweeps per millisecond
// of each depth, and each asynchronous trial's gain over the reference solve.
// A step run as the device loop offered to Adaptive shows as "OC" (on chip) or "SL" (streamed).
std::string feedback_trace(const relax::Feedback& f, const std::vector<relax::SolveReport>& steps,
                           const std::vector<relax::FamilyChoice>& ends, const std::vector<bool>& in_loop,
                           relax::AutoLoop loop) {
  std::ostringstream t;
  t.setf(std::ios::fixed);
  t.precision(2);
  t << "  feedback:";
  for (std::size_t k = 0; k < steps.size(); ++k) {
    t << ' ';
    if (in_loop[k]) t << (loop == relax::AutoLoop::on_chip ? "OC" : "SL");
    else t << (ends[k].family == relax::Family::temporal ? "T" : "BA") << ends[k].depth;
    t << '/' << steps[k].sweeps << '/' << steps[k].checks << '/' << steps[k].time_ms;
  }
  if (f.device_ms_per_sweep() > 0)
    t << "\n  device loop: " << 1.0 / f.device_ms_per_sweep() << " sweeps/ms in its trial, "
      << (f.device_loop_chosen() ? "chosen" : "not chosen");
  t << "\n  speeds:";
  for (int d = 1; d <= 8; d *= 2)
    if (f.speed(d) > 0) t << " T" << d << ' ' << f.speed(d);
  for (int d = 2; d <= 8; d *= 2)
    if (f.async_speed(d) > 0)
      t << " BA" << d << ' ' << f.async_speed(d) << " (gain " << f.async_gain(d) << ')';
  return t.str();
}

template <class Strategy, class Controller>
relax::RunReport solve(const relax::DiffusionParams& p, Controller controller, relax::CheckMode checks) {
  relax::SolveOptions options;
  options.checks = checks;
  relax::Solver<relax::Stencil5<float>, Strategy, Controller> solver(p.n, relax::Stencil5<float>(p.r),
                                                                    controller, options);
  relax::DiffusionState<float> state(p, solver.stream());
  if constexpr (std::is_same_v<Controller, relax::Feedback>) {
    std::vector<relax::FamilyChoice> ends;
    std::vector<bool> in_loop;
    const relax::RunReport run = relax::run_diffusion(solver, state, [&](int, const relax::SolveReport&) {
      ends.push_back(solver.controller().choice());
      in_loop.push_back(solver.last_solve_in_device_loop());
    });
    if (p.n != warm_up_n)
      std::printf("%s\n", feedback_trace(solver.controller(), run.steps, ends, in_loop, solver.device_loop()).c_str());
    return run;
  } else {
    return relax::run_diffusion(solver, state);
  }
}

// A strategy name, optionally with the suffix "+overlap" for overlapped convergence checks.
Run strategy_run(const std::string& full_name) {
  using namespace relax;
  const std::string suffix = "+overlap";
  const bool overlap = full_name.size() > suffix.size() &&
                       full_name.compare(full_name.size() - suffix.size(), suffix.size(), suffix) == 0;
  const std::string name = overlap ? full_name.substr(0, full_name.size() - suffix.size()) : full_name;
  const CheckMode checks = overlap ? CheckMode::overlapped : CheckMode::blocking;
  auto fixed = [checks](auto tag) {
    return [checks](const DiffusionParams& p, int m) { return solve<decltype(tag)>(p, Fixed(m), checks); };
  };
  if (name == "sync") return fixed(Sync{});
  if (name == "auto") return fixed(Auto{});
  if (name == "temporal2") return fixed(TemporalBlock<2, ColumnStream>{});
  if (name == "temporal4") return fixed(TemporalBlock<4, ColumnStream>{});
  if (name == "temporal8") return fixed(TemporalBlock<8, ColumnStream>{});
  if (name == "blockasync2") return fixed(BlockAsync<2>{});
  if (name == "blockasync4") return fixed(BlockAsync<4>{});
  if (name == "blockasync8") return fixed(BlockAsync<8>{});
  // The on-chip device loop (all ten steps in one launch; grids up to about 1400² on an H200).
  if (name == "onchip4") return fixed(DeviceLoop<TemporalBlock<4, OnChip>>{});
  if (name == "onchip8") return fixed(DeviceLoop<TemporalBlock<8, OnChip>>{});
  // The same loop with the tiles in registers (2D; grids up to about 1040² on an H200 at D = 8).
  if (name == "registers8") return fixed(DeviceLoop<TemporalBlock<8, InRegisters>>{});
  // The streamed device loop (the column stream in one cooperative launch a solve; any grid).
  if (name == "stream4") return fixed(DeviceLoop<TemporalBlock<4, ColumnStream>>{});
  if (name == "stream8") return fixed(DeviceLoop<TemporalBlock<8, ColumnStream>>{});
  using Async = BlockAsync<dynamic>;
  using Exact = TemporalBlock<dynamic, ColumnStream>;
  auto ladder = [checks](Ladder::Direction d) {
    return [checks, d](const DiffusionParams& p, int m) { return solve<Async>(p, Ladder(d, m), checks); };
  };
  if (name == "ladder-asc") return ladder(Ladder::Direction::ascending);
  if (name == "ladder-desc") return ladder(Ladder::Direction::descending);
  auto feedback = [checks](auto tag) {
    return [checks](const DiffusionParams& p, int m) {
      Feedback f;
      f.check_interval = m;
      return solve<decltype(tag)>(p, f, checks);
    };
  };
  if (name == "feedback") return feedback(Adaptive{});
  if (name == "feedback-exact") return feedback(Exact{});
  if (name == "feedback-async") return feedback(Async{});
  throw invalid_argument("--strategies", full_name,
                         "sync, auto, temporal2/4/8, blockasync2/4/8, onchip4/8, registers8, stream4/8, ladder-asc, ladder-desc, feedback, "
                         "feedback-exact or feedback-async, optionally with the suffix +overlap");
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// The largest N (a multiple of 128) whose u, workspace, b and source fit in 90% of free memory.
std::int64_t largest_n() {
  std::size_t free_bytes = 0, total = 0;
  RELAX_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  const double points = 0.9 * static_cast<double>(free_bytes) / (4.0 * sizeof(float));
  return static_cast<std::int64_t>(std::sqrt(points)) / 128 * 128;
}

std::string key(std::int64_t n, double r, const std::string& source, const std::string& strategy, int rep) {
  std::ostringstream k;
  k << n << ',' << r << ',' << source << ',' << strategy << ',' << rep;
  return k.str();
}

// Keys of the runs already in the CSV (the first five columns of each data row).
std::set<std::string> done_runs(const std::string& path) {
  std::set<std::string> done;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == 'n') continue;  // header
    std::size_t cut = 0;
    for (int commas = 0; cut < line.size() && commas < 5; ++cut)
      if (line[cut] == ',') ++commas;
    done.insert(line.substr(0, cut - 1));
  }
  return done;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string out_path, sizes = "512,1024,2048,4096,8192,16384", rs = "1,10,100",
                          sources = "point,gaussian",
                          strategies = "sync,temporal4,temporal8,blockasync4,blockasync8,ladder-asc,ladder-desc,feedback";
    int repeats = 3, check_interval = 8;
    double budget = 1e30;
    std::vector<std::string> args(argv + 1, argv + argc);
    for (std::size_t k = 0; k + 1 < args.size(); k += 2) {
      const std::string& opt = args[k];
      const std::string& v = args[k + 1];
      using relax::driver::detail::parse_int;
      if (opt == "--out") out_path = v;
      else if (opt == "--sizes") sizes = v;
      else if (opt == "--r") rs = v;
      else if (opt == "--sources") sources = v;
      else if (opt == "--strategies") strategies = v;
      else if (opt == "--repeats") repeats = static_cast<int>(parse_int(opt, v));
      else if (opt == "--check-interval") check_interval = static_cast<int>(parse_int(opt, v));
      else if (opt == "--budget-seconds") budget = relax::driver::detail::parse_real(opt, v);
      else throw relax::invalid_argument("option", opt, "see the comment at the top of experiment.cu");
    }
    if (args.size() % 2 != 0) throw relax::invalid_argument(args.back(), "nothing", "a value");
    relax::detail::require(!out_path.empty(), "--out", "nothing", "a CSV file to append to");
    relax::detail::require(repeats >= 1, "--repeats", repeats, "at least 1");
    std::vector<std::pair<std::string, Run>> runs;
    for (const auto& s : split(strategies)) runs.emplace_back(s, strategy_run(s));
    if (relax::device_count() == 0) throw relax::unavailable_error("the experiment runner needs a GPU");
    const auto done = done_runs(out_path);
    const bool fresh = done.empty() && !std::ifstream(out_path).good();
    std::ofstream out(out_path, std::ios::app);
    if (!out) throw relax::invalid_argument("--out", out_path, "a writable file");
    if (fresh) out << "n,r,source,strategy,repeat,time_ms,sweeps,steps,converged,gups\n" << std::flush;

    // Load every kernel once, outside the timed runs.
    relax::DiffusionParams warm;
    warm.n = warm_up_n;
    warm.steps = 1;
    for (auto& [name, run] : runs) (void)run(warm, check_interval);

    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    int skipped = 0, performed = 0;
    for (const auto& size : split(sizes))
      for (const auto& r_text : split(rs))
        for (const auto& source : split(sources))
          for (auto& [name, run] : runs)
            for (int rep = 0; rep < repeats; ++rep) {
              relax::DiffusionParams p;
              p.n = size == "max" ? largest_n() : relax::driver::detail::parse_int("--sizes", size);
              p.r = relax::driver::detail::parse_real("--r", r_text);
              p.source = relax::parse_source(source);
              const std::string k = key(p.n, p.r, source, name, rep);
              if (done.count(k)) {
                ++skipped;
                continue;
              }
              if (elapsed() > budget) {
                std::printf("budget of %.0f s reached: %d runs done, %d skipped; rerun to resume\n",
                            budget, performed, skipped);
                return 0;
              }
              const relax::RunReport rep_run = run(p, check_interval);
              out << k << ',' << rep_run.time_ms << ',' << rep_run.sweeps() << ','
                  << rep_run.steps.size() << ',' << (rep_run.converged() ? 1 : 0) << ','
                  << rep_run.gups() << '\n' << std::flush;
              std::printf("%-40s %10.2f ms %8lld sweeps %s\n", k.c_str(), rep_run.time_ms,
                          static_cast<long long>(rep_run.sweeps()),
                          rep_run.converged() ? "" : "NOT CONVERGED");
              std::fflush(stdout);
              ++performed;
            }
    std::printf("matrix complete: %d runs done, %d already in %s\n", performed, skipped, out_path.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
