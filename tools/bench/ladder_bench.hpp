// The machinery `foldkit-bench ladder` shares between its tables and its sweep: one input
// (element, n) at a time in the session's rotation pool, rungs launched with a workspace zeroed
// once per (variant, shape), timing with the slow-call rule, the ceilings, the checks, and the
// foldkit / CUB reference rows.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "gpu_common.hpp"
#include "ladder/variant.hpp"
#include "ladder_report.hpp"

namespace fkbench {

using foldkit::ladder::Algorithm;
using foldkit::ladder::Element;
using foldkit::ladder::Shape;
using foldkit::ladder::Variant;

// A call slower than this is timed 3 times instead of warm-up + median + batch (seed 000's
// Serial, one GPU thread, takes ~0.1 s at 4M floats; 250 such calls would take half a minute).
inline constexpr double kSlowCallUs = 50e3;

foldkit::DType dtype_of(Element e);
bool is_scan(const Variant& v);

struct Measured {
  Timing t;
  double first_us = kNaN;  // the first call alone (also the warm-up's first call)
  std::string note;        // "n=3" when the slow-call rule applied; "gate timed out"
};

class LadderBench {
 public:
  explicit LadderBench(const Options& opt);
  ~LadderBench();
  LadderBench(const LadderBench&) = delete;
  LadderBench& operator=(const LadderBench&) = delete;

  GpuSession& session() { return sess_; }

  // Fills the pool with random (element, n) data (>= 1 GiB of copies), computes the reference
  // sum of copy 0 (reductions) and sizes the scan output. Returns false, with a message, when
  // the GPU lacks the memory.
  bool prepare(Element e, std::int64_t n, bool scan);
  std::int64_t n() const { return n_; }
  std::uint64_t bytes_moved() const;  // reductions: n * 4 read; scans: n * 4 read + n * 4 written
  bool l2_resident(bool same_buffer) const;
  // "one input reused (L2-resident)" or the rotation; scans add "; one output buffer".
  std::string memory_text(bool same_buffer) const;

  // Times f(input): the same input every call (same_buffer: copy 0, as the seeds timed) or the
  // rotation. `plan` defaults to the session's; the slow-call rule may shorten it.
  Measured time(const std::function<void(const void* in)>& f, bool same_buffer, const TimingPlan* plan = nullptr);

  // The ceiling row for the prepared input (variant "ceiling"): the best streaming-read kernel
  // (reductions), or the faster of cudaMemcpyAsync and a 16-byte copy kernel (scans).
  LadderRow ceiling(bool same_buffer);

  // One stream-ordered call of a rung on `in`; its workspace is allocated and zeroed when the
  // (variant, shape) changes and then reused, as the contract allows.
  void launch(const Variant& v, const Shape& s, const void* in);
  // Runs the rung once on copy 0 into a poisoned output: "ok", "WRONG ..." or "ERROR ...".
  std::string check(const Variant& v, const Shape& s);

  // foldkit::cuda::reduce sum (scans: foldkit::cuda::inclusive_scan, full array) and CUB
  // (DeviceReduce::Sum, or DeviceScan::InclusiveSum for scans), each checked once and timed like
  // the rungs.
  LadderRow foldkit_row(bool same_buffer);
  LadderRow cub_row(bool same_buffer);

 private:
  LadderRow foldkit_scan_row(bool same_buffer);
  // float_atomics: the rung adds floats with atomics (Variant::deterministic false), which
  // biases the rounding; it gets the looser tolerance (see ladder_bench.cpp).
  std::string check_reduce_result(const void* host_result, bool wide, bool float_atomics) const;
  // wide_int_output: d_out holds int64 (foldkit's widening int32 sum scan), not the input type.
  std::string check_scan_output(const void* d_out, std::size_t tile, bool wide_int_output = false);
  void* grow(void*& ptr, std::size_t& have, std::size_t need);

  GpuSession sess_;
  Element element_ = Element::f32;
  std::int64_t n_ = 0;
  bool scan_ = false;
  long long ref_i64_ = 0;  // reference sum of copy 0 (i32 data), exact
  double ref_f64_ = 0;     // reference sum of copy 0 (f32 data), in double
  std::map<std::string, LadderRow> ceilings_;

  void* ws_ = nullptr;  // the rungs' workspace
  std::size_t ws_have_ = 0;
  std::string ws_key_;  // which (variant, shape, n) it was zeroed for
  void* out_ = nullptr;  // the rungs' (and CUB's scan) output: 1 element or n
  std::size_t out_have_ = 0;
  void* scratch_ = nullptr;  // reference accumulator, scan check counters, ceiling sink
};

}  // namespace fkbench
