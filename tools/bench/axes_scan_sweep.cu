// `foldkit-bench axes --sweep`: the column-scan tile kernel's geometry
// (include/foldkit/cuda/tuning/tensor_scan_tuning.hpp) over the axes table's cumsum-over-dim-0
// cases: every tile depth (shallow and deep chunks a thread) x widest chained tile (1 ...
// kTensorScanChainTCLimit thread columns), and the library's geometry at other L2 prefetch
// distances (none, 1/2, 2, 4 and 8 times the library's; 16 and 64 tiles where the library
// prefetches nothing) and first-wave lags (2, 3, 4 eighths of a wave), beside the library's own
// call and the copy ceiling,
// all interleaved call by call over the rotated inputs (GpuSession::time_all). The variants run
// the library's kernel template through the user-functor policy (an f32 addition:
// CustomTileSpec<float, Plus>) with the TileArgs the library prepares for the case and only the
// geometry changed, so a row differs from the library's choice by its geometry alone. Each
// variant's output is checked once against a double reference on sampled outputs.
// The segmented sums' section: the library's call beside the same call with its L2 prefetch
// distance forced (detail::segmented_reduce_with_tuning: none, 1/2 .. 8x the library's; each
// output compared bit for bit with the library's, the distance changes no result) or its tiles
// per block (1 .. 16; checked against a double reference: the fold order of spanning segments
// changes). The CSV's row_tiles column holds the tiles per block.
// Prints per case every distinct geometry, ranked, with the library's choice marked; one CSV row
// per (case, variant).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "axes_common.hpp"
#include "foldkit/cuda/dispatch/tensor_scan_launch.cuh"
#include "foldkit/cuda/dispatch/segmented_runtime.hpp"
#include "foldkit/cuda/dispatch/tensor_scan_runtime.hpp"
#include "foldkit/cuda/scan.hpp"
#include "foldkit/cuda/segmented_reduce.hpp"
#include "foldkit/cuda/tensor_scan.hpp"
#include "foldkit/cuda/tensor_scan_custom.cuh"
#include "foldkit/cuda/tuning/segmented_reduce_tuning.hpp"
#include "foldkit/cuda/tuning/tensor_scan_tuning.hpp"
#include "gpu_common.hpp"
#include "suites.hpp"

namespace fkbench {
namespace {

namespace ts = foldkit::cuda::tensor_scan;
namespace tuning = foldkit::cuda::tuning;
using foldkit::DType;

struct Plus {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
using Spec = ts::CustomTileSpec<float, Plus>;

// One geometry of a case.
struct Variant {
  tuning::TensorScanGeometry g;  // a depth x widest chained tile, as the geometry gives it
  ts::TileArgs args;             // the library's TileArgs with that geometry
  bool library = false;          // the geometry (and prefetch distance) the library picks
  Timing t;
  std::string check;
};

std::string geometry_text(const tuning::TensorScanGeometry& g, int prefetch, unsigned lag) {
  char buf[192];
  std::snprintf(buf, sizeof buf, "%s %d chunks, TC %d, vec %d, tile %lld x %lld, %lld x %lld tiles, pf %d, lag %u",
                g.in_chunks >= tuning::kTensorScanDeepChunks ? "deep" : "shallow", g.in_chunks, 1 << g.tc_shift, g.vec,
                static_cast<long long>(g.rows_per_tile), static_cast<long long>(g.cols_per_tile),
                static_cast<long long>(g.row_tiles), static_cast<long long>(g.col_tiles), prefetch, lag);
  return buf;
}

class AxesScanSweep {
 public:
  explicit AxesScanSweep(const Options& opt) : opt_(opt), sess_(opt) { FKB_CHECK(cudaGetDevice(&device_)); }
  ~AxesScanSweep() { cudaFree(ws_.ptr); }
  int run();

 private:
  bool run_case(const axes::Case& c);            // false: a variant's check failed
  bool run_segmented_case(const axes::Case& c);  // the same
  void ensure_workspace(std::size_t bytes);

  const Options& opt_;
  GpuSession sess_;
  int device_ = 0;
  OutputPool outs_;
  CsvFile csv_;
  foldkit::cuda::Workspace ws_{};
};

void AxesScanSweep::ensure_workspace(std::size_t bytes) {
  if (bytes <= ws_.bytes) return;
  FKB_CHECK(cudaStreamSynchronize(sess_.stream()));
  cudaFree(ws_.ptr);
  ws_ = {};
  FKB_CHECK(cudaMalloc(&ws_.ptr, bytes));
  ws_.bytes = bytes;
  foldkit::cuda::init_scan_workspace(ws_, sess_.stream());
}

bool AxesScanSweep::run_case(const axes::Case& c) {
  cudaStream_t s = sess_.stream();
  const std::int64_t rows = c.shape[0], cols = c.shape[1];
  const std::int64_t n = rows * cols;
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  sess_.pool().prepare(DType::f32, n, input_seed(DType::f32, n), s);
  outs_.prepare(std::max<std::size_t>(bytes, std::size_t{1} << 20));
  const foldkit::Device dev = foldkit::Device::cuda(device_);
  auto view = [&](const void* p) { return foldkit::TensorView::contiguous(p, DType::f32, {rows, cols}, dev); };

  // The library's TileArgs (its geometry), and the matrix the geometry is computed for.
  const foldkit::cuda::detail::TensorScanSetup setup =
      foldkit::cuda::detail::prepare_tensor_scan_custom(DType::f32, view(sess_.pool().copy(0)), 0, view(outs_.check(0)),
                                                        false, nullptr);
  if (setup.empty || setup.blocked) {
    std::printf("  %s: not a tile-kernel scan, skipped\n", c.name().c_str());
    return true;
  }
  const ts::TileArgs& lib = setup.tiles;
  const std::int64_t outer = static_cast<std::int64_t>(lib.num_tiles) / (lib.row_tiles * lib.col_tiles);
  const int narrow = lib.vec < 16 / static_cast<int>(sizeof(float)) ? lib.vec : 0;
  const int sms = sess_.info().sm_count;

  std::vector<Variant> vs;
  for (int chunks : {tuning::kTensorScanShallowChunks, tuning::kTensorScanDeepChunks})
    for (int tc = 1; tc <= tuning::kTensorScanChainTCLimit; tc *= 2) {
      Variant v;
      v.g = tuning::tensor_scan_geometry_at(chunks, sizeof(float), lib.rows, lib.cols, narrow, false, tc);
      const bool seen = std::any_of(vs.begin(), vs.end(), [&](const Variant& w) {
        return w.g.in_chunks == v.g.in_chunks && w.g.tc_shift == v.g.tc_shift && w.g.vec == v.g.vec;
      });
      if (seen) continue;
      v.args = lib;
      ts::set_tile_geometry(v.args, v.g, outer, false, sms);
      v.library = v.g.in_chunks == lib.in_chunks && v.g.tc_shift == lib.tc_shift && v.g.vec == lib.vec;
      ensure_workspace(tuning::tensor_scan_state_bytes(v.g, outer, sizeof(float)));
      vs.push_back(v);
    }
  // The library's geometry at other prefetch distances (tiles ahead whose input goes to L2).
  {
    const auto lib_it = std::find_if(vs.begin(), vs.end(), [](const Variant& v) { return v.library; });
    if (lib_it != vs.end() && lib.in_vec && lib.row_tiles > 1) {
      const Variant base = *lib_it;
      const int p = base.args.prefetch_tiles;
      const std::vector<int> distances = p > 0 ? std::vector<int>{0, p / 2, 2 * p, 4 * p, 8 * p} : std::vector<int>{16, 64};
      for (int d : distances) {
        if (d == p || (d > 0 && static_cast<unsigned>(d) >= lib.num_tiles)) continue;
        Variant v = base;
        v.library = false;
        v.args.prefetch_tiles = d;
        vs.push_back(v);
      }
      // ... and first-wave lags of 2, 3 and 4 eighths of a wave (tuning::kTensorScanFirstWaveLagEighths).
      for (int eighths : {2, 3, 4}) {
        const auto lag = static_cast<unsigned>(
            tuning::tensor_scan_first_wave_lag(lib.num_tiles, base.args.first_wave, true, eighths));
        if (lag == 0 || lag == base.args.first_wave_lag) continue;
        Variant v = base;
        v.library = false;
        v.args.first_wave_lag = lag;
        vs.push_back(v);
      }
    }
  }

  // Checks, once, on input copy 0, into a poisoned output.
  std::vector<unsigned char> host_in(bytes), host_out(bytes);
  FKB_CHECK(cudaStreamSynchronize(s));
  FKB_CHECK(cudaMemcpy(host_in.data(), sess_.pool().copy(0), bytes, cudaMemcpyDeviceToHost));
  axes::HostTensor hin;
  hin.data = host_in.data();
  hin.dtype = DType::f32;
  hin.shape = {rows, cols};
  auto launch = [&](const Variant& v, const void* in, void* out) {
    ts::CustomTileArgs<float, Plus> a;
    static_cast<ts::TileArgs&>(a) = v.args;
    a.in = in;
    a.out = out;
    a.op = Plus{};
    a.identity = 0.0f;
    a.header = static_cast<foldkit::cuda::ScanHeader*>(ws_.ptr);
    ts::launch_tile_scan<Spec>(a, s, device_);
  };
  bool ok = true;
  for (Variant& v : vs) {
    FKB_CHECK(cudaMemsetAsync(outs_.check(0), 0xFF, bytes, s));
    launch(v, sess_.pool().copy(0), outs_.check(0));
    FKB_CHECK_LAUNCH("checked variant");
    // The session's stream does not synchronise with cudaMemcpy's (legacy) stream: without this
    // wait the copy read the poison (every check failed, 2026-11-27).
    FKB_CHECK(cudaStreamSynchronize(s));
    FKB_CHECK(cudaMemcpy(host_out.data(), outs_.check(0), bytes, cudaMemcpyDeviceToHost));
    v.check = axes::check_scan(hin, 0, axes::HostOutput{host_out.data(), DType::f32, false});
    ok = ok && !axes::check_failed_text(v.check);
  }

  // Timing: the copy ceiling's two calls, the library's call, then every variant.
  std::vector<Call> calls = copy_ceiling_calls(bytes, outs_, sms, s);
  calls.push_back([this, s, &view](const void* in) {
    void* out = outs_.next();
    foldkit::cuda::inclusive_scan(foldkit::ReduceOp::sum, view(in), 0, view(out), s);
  });
  for (const Variant& v : vs) calls.push_back([this, &v, &launch](const void* in) { launch(v, in, outs_.next()); });
  sess_.label_samples(c.name() + " sweep");
  const std::vector<Timing> t = sess_.time_all(calls);
  const BestOf ceil = best_of(copy_ceiling_named(t[0], t[1]));
  const Timing& library = t[2];
  for (std::size_t k = 0; k < vs.size(); ++k) vs[k].t = t[3 + k];

  std::printf("\n== %s: copy ceiling %.2f us (%s); foldkit::cuda::inclusive_scan %.2f us = %.1f %% ==\n",
              c.name().c_str(), ceil.median_us, ceil.config.c_str(), library.median_us,
              100.0 * ceil.median_us / library.median_us);
  std::vector<const Variant*> ranked;
  for (const Variant& v : vs) ranked.push_back(&v);
  std::sort(ranked.begin(), ranked.end(), [](const Variant* a, const Variant* b) {
    const double x = std::isnan(a->t.median_us) ? 1e300 : a->t.median_us;
    const double y = std::isnan(b->t.median_us) ? 1e300 : b->t.median_us;
    return x < y;
  });
  std::printf("  %-4s %-74s %10s %10s %7s %9s  %s\n", "rank", "geometry", "median us", "batch us", "%copy", "vs lib", "check");
  for (std::size_t k = 0; k < ranked.size(); ++k) {
    const Variant& v = *ranked[k];
    std::printf("  %-4zu %-74s %10.2f %10.2f %7.1f %9.3f  %s%s\n", k + 1, geometry_text(v.g, v.args.prefetch_tiles, v.args.first_wave_lag).c_str(), v.t.median_us,
                v.t.batch_us, 100.0 * ceil.median_us / v.t.median_us, v.t.median_us / library.median_us,
                v.check.c_str(), v.library ? "  <- the library's geometry" : "");
  }
  const std::string memory = sess_.pool().memory_text() + "; " + outs_.memory_text();
  auto num = [](double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3f", x);
    return std::string(b);
  };
  for (const Variant& v : vs)
    csv_.write({c.name(), std::to_string(v.g.in_chunks), std::to_string(1 << v.g.tc_shift), std::to_string(v.g.vec),
                std::to_string(v.g.row_tiles), std::to_string(v.g.col_tiles), std::to_string(v.args.prefetch_tiles),
                std::to_string(v.args.first_wave_lag), v.library ? "yes" : "no",
                num(v.t.median_us), num(v.t.batch_us), num(ceil.median_us), num(library.median_us),
                num(100.0 * ceil.median_us / v.t.median_us), v.check},
               memory);
  std::fflush(stdout);
  return ok;
}

bool AxesScanSweep::run_segmented_case(const axes::Case& c) {
  cudaStream_t s = sess_.stream();
  const std::vector<std::int64_t> offsets = axes::segment_offsets(c.segments);
  const std::int64_t n = offsets.back(), S = static_cast<std::int64_t>(offsets.size()) - 1;
  const std::size_t out_bytes = static_cast<std::size_t>(S) * sizeof(float);
  sess_.pool().prepare(DType::f32, n, input_seed(DType::f32, n), s);
  outs_.prepare(std::max<std::size_t>(out_bytes, std::size_t{1} << 20));
  std::int64_t* d_off = nullptr;
  FKB_CHECK(cudaMalloc(&d_off, offsets.size() * sizeof(std::int64_t)));
  FKB_CHECK(cudaMemcpy(d_off, offsets.data(), offsets.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  ensure_workspace(foldkit::cuda::segmented_reduce_workspace_bytes(n, S, foldkit::ReduceOp::sum, DType::f32));
  // Variants: other L2 prefetch distances (the library's tiles per block), then other tiles per
  // block (the library's prefetch rule).
  struct Variant {
    int prefetch;  // -1: the library's rule
    int tiles_per_block;  // 0: the library's
    std::string what;
  };
  const int lib_pf = foldkit::cuda::detail::segmented_reduce_prefetch_tiles(n, S, foldkit::ReduceOp::sum, DType::f32);
  std::vector<Variant> variants{{lib_pf, 0, "prefetch " + std::to_string(lib_pf) + " (the library's)"}};
  for (int d : lib_pf > 0 ? std::vector<int>{0, lib_pf / 2, 2 * lib_pf, 4 * lib_pf, 8 * lib_pf} : std::vector<int>{16, 64, 256})
    if (d != lib_pf) variants.push_back({d, 0, "prefetch " + std::to_string(d)});
  for (int g : {1, 2, 4, 8, 16})
    if (g != foldkit::cuda::tuning::kSegTilesPerBlock)
      variants.push_back({-1, g, std::to_string(g) + " tiles a block"});
  auto forced = [&](const Variant& v, const void* in, void* out) {
    foldkit::cuda::detail::segmented_reduce_with_tuning(foldkit::ReduceOp::sum, DType::f32, in, n, d_off, S, out, ws_, s,
                                                        v.prefetch, v.tiles_per_block);
  };
  auto library = [&](const void* in, void* out) {
    foldkit::cuda::segmented_reduce(foldkit::ReduceOp::sum, DType::f32, in, n, d_off, S, out, s);
  };
  // Checks, once, on input copy 0: a prefetch distance changes no bit (against the library's);
  // tiles per block change the fold order of segments that span tiles (against a double
  // reference on sampled segments).
  std::vector<unsigned char> want(out_bytes), got(out_bytes);
  FKB_CHECK(cudaMemsetAsync(outs_.check(0), 0xFF, out_bytes, s));
  library(sess_.pool().copy(0), outs_.check(0));
  FKB_CHECK(cudaStreamSynchronize(s));
  FKB_CHECK(cudaMemcpy(want.data(), outs_.check(0), out_bytes, cudaMemcpyDeviceToHost));
  std::vector<unsigned char> host_in;
  std::vector<std::string> checks;
  bool ok = true;
  for (const Variant& v : variants) {
    FKB_CHECK(cudaMemsetAsync(outs_.check(1), 0xFF, out_bytes, s));
    forced(v, sess_.pool().copy(0), outs_.check(1));
    FKB_CHECK(cudaStreamSynchronize(s));
    FKB_CHECK(cudaMemcpy(got.data(), outs_.check(1), out_bytes, cudaMemcpyDeviceToHost));
    if (v.tiles_per_block == 0) {
      checks.push_back(got == want ? "ok (the library's bits)" : "MISMATCH against the library's bits");
      ok = ok && got == want;
    } else {
      if (host_in.empty()) {
        host_in.resize(static_cast<std::size_t>(n) * sizeof(float));
        FKB_CHECK(cudaMemcpy(host_in.data(), sess_.pool().copy(0), host_in.size(), cudaMemcpyDeviceToHost));
      }
      const std::string r = axes::check_segmented_sum(axes::HostTensor{host_in.data(), DType::f32, {n}}, offsets,
                                                      axes::HostOutput{got.data(), DType::f32, false});
      checks.push_back(r);
      ok = ok && r.rfind("ok", 0) == 0;
    }
  }
  // Timing: the read ceiling's calls, the library's call, then every variant.
  std::vector<Call> calls = sess_.ceiling_calls(static_cast<std::size_t>(n) * sizeof(float));
  const std::size_t ceiling_count = calls.size();
  calls.push_back([&](const void* in) { library(in, outs_.next()); });
  for (const Variant& v : variants) calls.push_back([&, v](const void* in) { forced(v, in, outs_.next()); });
  sess_.label_samples(c.name() + " sweep");
  const std::vector<Timing> t = sess_.time_all(calls);
  const CeilingResult ceil = sess_.ceiling_from(std::vector<Timing>(t.begin(), t.begin() + ceiling_count));
  const Timing& lib = t[ceiling_count];
  std::printf("\n== %s: read ceiling %.2f us; foldkit::cuda::segmented_reduce %.2f us = %.1f %% (%d tiles a block) ==\n",
              c.name().c_str(), ceil.median_us, lib.median_us, 100.0 * ceil.median_us / lib.median_us,
              foldkit::cuda::tuning::kSegTilesPerBlock);
  std::printf("  %-40s %10s %10s %7s %9s  %s\n", "variant", "median us", "batch us", "%read", "vs lib", "check");
  for (std::size_t k = 0; k < variants.size(); ++k) {
    const Timing& v = t[ceiling_count + 1 + k];
    const Variant& w = variants[k];
    std::printf("  %-40s %10.2f %10.2f %7.1f %9.3f  %s\n", w.what.c_str(), v.median_us, v.batch_us,
                100.0 * ceil.median_us / v.median_us, v.median_us / lib.median_us, checks[k].c_str());
    const int pf = w.prefetch >= 0 ? w.prefetch : lib_pf;
    const int g = w.tiles_per_block > 0 ? w.tiles_per_block : foldkit::cuda::tuning::kSegTilesPerBlock;
    const bool is_lib = pf == lib_pf && g == foldkit::cuda::tuning::kSegTilesPerBlock;
    csv_.write({c.name(), "-", "-", "-", std::to_string(g), "-", std::to_string(pf), "-", is_lib ? "yes" : "no",
                std::to_string(v.median_us), std::to_string(v.batch_us), std::to_string(ceil.median_us),
                std::to_string(lib.median_us), std::to_string(100.0 * ceil.median_us / v.median_us), checks[k]},
               sess_.pool().memory_text() + "; " + outs_.memory_text());
  }
  std::fflush(stdout);
  FKB_CHECK(cudaStreamSynchronize(s));
  cudaFree(d_off);
  return ok;
}

int AxesScanSweep::run() {
  const Header h = sess_.make_header(
      "foldkit-bench axes --sweep: the column-scan tile kernel's geometries (depth x widest chained tile) on the cumsum "
      "over dim 0 cases, beside the library's call and the copy ceiling",
      opt_, "interleaved call by call in shuffled rounds");
  print_header(h);
  if (!opt_.csv_path.empty() &&
      !csv_.open(opt_.csv_path, h, "gpu",
                 {"case", "in_chunks", "tc", "vec", "row_tiles", "col_tiles", "prefetch_tiles", "first_wave_lag", "library_geometry", "median_us",
                  "batch_mean_us", "ceiling_median_us", "library_median_us", "pct_of_copy_median", "check"}))
    return 1;
  bool ok = true;
  for (const axes::Case& c : axes::gpu_cases()) {
    if (!axes::selected(c, opt_.only)) continue;
    if (c.kind == axes::Kind::segmented) ok = run_segmented_case(c) && ok;
    if (c.kind != axes::Kind::scan || c.axes.size() != 1 || c.axes[0] != 0 || c.shape.size() != 2) continue;
    ok = run_case(c) && ok;
  }
  if (!ok) std::printf("\n!!!!!!!! a variant's check failed (see the check column) !!!!!!!!\n");
  return ok ? 0 : 1;
}

}  // namespace

int run_axes_scan_sweep(const Options& opt) {
  AxesScanSweep s(opt);
  return s.run();
}

}  // namespace fkbench
