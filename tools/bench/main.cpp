// foldkit-bench: how fast foldkit's full-array reductions are, next to NVIDIA CUB and next to
// the fastest the memory can be read. See --help.
#include <cstdio>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>

#include "options.hpp"
#include "suites.hpp"

#ifndef FOLDKIT_BENCH_CUDA
#define FOLDKIT_BENCH_CUDA 0
#endif
#ifndef FOLDKIT_BENCH_AXES_GPU
#define FOLDKIT_BENCH_AXES_GPU 0
#endif

namespace {

const char* kUsage =
    "usage: foldkit-bench [--quick] [--backend cpu|cuda] [--csv FILE] [--no-gate] [--busy]\n"
    "       foldkit-bench sweep [--quick] [--csv FILE] [--dtypes f32,i32,...] [--tiers A-B]\n"
    "       foldkit-bench ladder [--seed 000,002,003,004] [--sweep] [--quick] [--csv FILE]\n"
    "       foldkit-bench scan [--sweep] [--quick] [--csv FILE]\n"
    "       foldkit-bench axes [--quick] [--backend cpu|cuda] [--csv FILE] [--no-gate] [--only TEXT] [--sweep]\n"
    "\n"
    "With a GPU: one table of foldkit vs cub::DeviceReduce vs a streaming-read ceiling kernel\n"
    "  (f32 sum/max/argmax, i32 sum, f64 sum at n = 2^10..2^28; sum of every dtype at 2^26, and\n"
    "  f16/bf16 at 2^28). Every case checks foldkit's result against CUB's once.\n"
    "Without one: foldkit::cpu::sum vs a plain single-thread loop vs an all-core read ceiling.\n"
    "\n"
    "  --quick          fewer repetitions: median of 20 calls and a batch of 100 (default 50 and 200)\n"
    "  --backend B      cpu or cuda (default: cuda when a GPU is present, else cpu)\n"
    "  --csv FILE       also write every measured row to FILE as CSV\n"
    "  --no-gate        time single calls without holding the stream (includes host submission)\n"
    "  --busy           CPU table: run 2 busy threads per core beside it for the whole table, and report\n"
    "                   foldkit / loop-1t against the bar of 1.5 (without it: foldkit's % of the ceiling)\n"
    "  sweep            tune foldkit's reduction kernel: block_threads x unroll x blocks/SM for sum f32,\n"
    "                   max f32, argmax f32, sum i32, sum f64, sum f16 at 4 KiB .. 1 GiB of input (the\n"
    "                   tuning table's tiers); tools/probes/pick_reduce_table.py picks the table from its CSV\n"
    "  --dtypes LIST    sweep only the cases of these dtypes (f32,i32,f64,f16)\n"
    "  --tiers A-B      sweep only size tiers A..B (tier k: 4 KiB * 2^k of input)\n"
    "  ladder           the seeds' kernel ladders (ladder/) rung by rung, each seed in its own table, at the\n"
    "                   seed's n on one reused input (as the seed timed it) and at a DRAM-sized n on rotated\n"
    "                   inputs, beside foldkit, CUB and the ceiling; every row checked. GPU only\n"
    "  --seed LIST      ladder: only these seeds (default 000,002,003,004)\n"
    "  --sweep          ladder: also time every shape of each rung's sweep list at the DRAM size\n"
    "  scan             foldkit's inclusive and exclusive sums vs cub::DeviceScan vs a copy ceiling: f32 and\n"
    "                   i32 (-> i64) at n = 2^10..2^28, f64 and f16 inclusive at 2^26; GB/s count bytes read +\n"
    "                   written, the ceiling copies the same bytes; every case checked against CUB. GPU only\n"
    "  scan --sweep     also time alternative policies of the whole-array scan (f32, i32; 2^24..2^28)\n"
    "  axes             tensors along axes (issue #22): sum/max/argmax and cumsum over dim 1 and dim 0 of nine\n"
    "                   2^26-element f32 matrices, bf16 sums over dim 1, 3-D sums, the shapes users reported,\n"
    "                   segmented sums; beside the read (or copy) ceiling and CUB DeviceSegmentedReduce, every\n"
    "                   result checked, each case's bar met or not. --backend cpu (or no GPU): foldkit::cpu sums\n"
    "                   over dim 1 and dim 0 of the matrices vs an all-core read ceiling\n"
    "  --only TEXT      axes: only the cases whose name contains TEXT (several: A|B; ^A: starts with A)\n"
    "  axes --sweep     instead of the table: the column-scan tile kernel's geometries (tile depth x widest\n"
    "                   chained tile), and the library's at other L2 prefetch distances, on the cumsum-over-dim-0\n"
    "                   cases, beside the library's call and the copy ceiling (tunes\n"
    "                   include/foldkit/cuda/tuning/tensor_scan_tuning.hpp); the segmented sums at other L2\n"
    "                   prefetch distances beside the read ceiling (tuning/segmented_reduce_tuning.hpp)\n"
    "\n"
    "Timing: inputs rotated over >= 1 GiB (so L2 is missed), warm-up calls first; 'median' is the\n"
    "per-call median (own CUDA event pair per call), 'batch' the mean of back-to-back calls.\n"
    "Ratios are time / time: below 1 foldkit is faster. Exit status 1 when a result check failed.\n";

int usage_error(const char* msg, const char* arg) {
  std::fprintf(stderr, "foldkit-bench: %s%s%s\n\n%s", msg, arg ? " " : "", arg ? arg : "", kUsage);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fkbench;
  Options opt;
  std::ostringstream cmd;
  for (int i = 0; i < argc; ++i) cmd << (i ? " " : "") << argv[i];
  opt.command_line = cmd.str();

  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "sweep" && i == 1) {
      opt.sweep = true;
    } else if (a == "ladder" && i == 1) {
      opt.ladder = true;
    } else if (a == "scan" && i == 1) {
      opt.scan = true;
    } else if (a == "axes" && i == 1) {
      opt.axes = true;
    } else if (a == "--sweep" && opt.ladder) {
      opt.ladder_sweep = true;
    } else if (a == "--sweep" && opt.scan) {
      opt.scan_sweep = true;
    } else if (a == "--sweep" && opt.axes) {
      opt.axes_sweep = true;
    } else if (a == "--seed" && opt.ladder) {
      const char* v = value();
      if (!v) return usage_error("--seed needs a list such as 000,004", nullptr);
      std::stringstream ss(v);
      for (std::string t; std::getline(ss, t, ',');) {
        if (t.empty()) continue;
        while (t.size() < 3) t = "0" + t;  // "4" means "004"
        if (t != "000" && t != "002" && t != "003" && t != "004") return usage_error("unknown seed", t.c_str());
        opt.ladder_seeds.push_back(t);
      }
    } else if (a == "--quick") {
      opt.quick = true;
    } else if (a == "--no-gate") {
      opt.gate = false;
    } else if (a == "--busy") {
      opt.busy = true;
    } else if (a == "--only" && opt.axes) {
      const char* v = value();
      if (!v) return usage_error("--only needs the text a case name contains", nullptr);
      opt.only = v;
    } else if (a == "--csv") {
      const char* v = value();
      if (!v) return usage_error("--csv needs a file name", nullptr);
      opt.csv_path = v;
    } else if (a == "--backend") {
      const char* v = value();
      if (!v) return usage_error("--backend needs cpu or cuda", nullptr);
      if (std::strcmp(v, "cpu") == 0) opt.backend = Backend::cpu;
      else if (std::strcmp(v, "cuda") == 0 || std::strcmp(v, "gpu") == 0) opt.backend = Backend::cuda;
      else return usage_error("unknown backend", v);
    } else if (a == "--dtypes") {
      const char* v = value();
      if (!v) return usage_error("--dtypes needs a list", nullptr);
      std::stringstream ss(v);
      for (std::string t; std::getline(ss, t, ',');)
        if (!t.empty()) opt.sweep_dtypes.push_back(t);
    } else if (a == "--tiers") {
      const char* v = value();
      if (!v || std::sscanf(v, "%d-%d", &opt.sweep_tier_first, &opt.sweep_tier_last) != 2 || opt.sweep_tier_first < 0 ||
          opt.sweep_tier_last < opt.sweep_tier_first)
        return usage_error("--tiers needs A-B (0 <= A <= B)", v);
    } else {
      return usage_error("unknown argument", argv[i]);
    }
  }
  // The floors are the method's: >= 20 per-call samples, >= 100 calls in a batch.
  if (opt.quick || opt.sweep) {  // the sweep times ~80 configurations per case: floors only
    opt.warmup = 3;
    opt.reps_median = 20;
    opt.reps_batch = 100;
  }

  try {
#if FOLDKIT_BENCH_CUDA
    if (opt.ladder) {
      if (!gpu_present()) {
        std::fprintf(stderr, "foldkit-bench: ladder times GPU kernels and needs a GPU; none was found\n");
        return 1;
      }
      return run_ladder(opt) ? 1 : 0;
    }
    if (opt.scan) {
      if (!gpu_present()) {
        std::fprintf(stderr, "foldkit-bench: scan times GPU scans and needs a GPU; none was found\n");
        return 1;
      }
      return run_scan_table(opt) ? 1 : 0;
    }
    if (opt.axes) {
      const bool gpu = opt.backend != Backend::cpu && gpu_present();
      if (opt.backend == Backend::cuda && !gpu) {
        std::fprintf(stderr, "foldkit-bench: axes --backend cuda, but no usable GPU was found\n");
        return 1;
      }
      if (opt.axes_sweep && !gpu) {
        std::fprintf(stderr, "foldkit-bench: axes --sweep times the CUDA column-scan kernel and needs a GPU; none was found\n");
        return 1;
      }
      if (!gpu) return run_axes_cpu(opt, opt.backend == Backend::cpu ? "--backend cpu" : "no GPU found") ? 1 : 0;
#if FOLDKIT_BENCH_AXES_GPU
      if (opt.axes_sweep) return run_axes_scan_sweep(opt) ? 1 : 0;
      return run_axes_gpu(opt) ? 1 : 0;
#else
      std::fprintf(stderr, "foldkit-bench: this build has no GPU axes suite (configured with -DFOLDKIT_BENCH_AXES=OFF)\n");
      return 1;
#endif
    }
    if (opt.sweep) {
      if (opt.backend == Backend::cpu) return usage_error("sweep tunes the CUDA kernel; it has no CPU form", nullptr);
      if (!gpu_present()) {
        std::fprintf(stderr, "foldkit-bench: sweep needs a GPU, and none was found\n");
        return 1;
      }
      return run_sweep(opt) ? 1 : 0;
    }
    const bool have_gpu = opt.backend != Backend::cpu && gpu_present();
    if (opt.backend == Backend::cuda && !have_gpu) {
      std::fprintf(stderr, "foldkit-bench: --backend cuda, but no usable GPU was found\n");
      return 1;
    }
    if (have_gpu) return run_gpu_table(opt) ? 1 : 0;
    return run_cpu_table(opt, opt.backend == Backend::cpu ? "--backend cpu" : "no GPU found") ? 1 : 0;
#else
    if (opt.axes_sweep) {
      std::fprintf(stderr, "foldkit-bench: axes --sweep needs the CUDA backend (this build: FOLDKIT_CUDA=OFF)\n");
      return 1;
    }
    if (opt.axes && opt.backend != Backend::cuda)
      return run_axes_cpu(opt, opt.backend == Backend::cpu ? "--backend cpu" : "CPU-only build") ? 1 : 0;
    if (opt.ladder || opt.scan) {
      std::fprintf(stderr, "foldkit-bench: %s needs the CUDA backend (this build: FOLDKIT_CUDA=OFF)\n",
                   opt.ladder ? "ladder" : "scan");
      return 1;
    }
    if (opt.sweep || opt.backend == Backend::cuda) {
      std::fprintf(stderr, "foldkit-bench: this build has no CUDA backend (configured with FOLDKIT_CUDA=OFF)\n");
      return 1;
    }
    return run_cpu_table(opt, opt.backend == Backend::cpu ? "--backend cpu" : "no GPU found") ? 1 : 0;
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "foldkit-bench: fatal: %s\n", e.what());
    return 1;
  }
}
