// foldkit-tensor-probe: a quick look at foldkit::cuda::reduce along axes on the bar's shapes,
// per-call median of 15 calls on inputs rotated over 1 GiB, beside a plain float4 read kernel.
// For iterating on the kernels; the measured table is foldkit-bench axes.
// `foldkit-tensor-probe ROWS COLS AXIS [...]`: only those f32 sums, each input at a fresh offset
// of the 1 GiB pool (cold), with the host's time per call (planning + launch) beside the GPU's.
// `foldkit-tensor-probe --outer-flat-trace ROWS COLS`: the outer-flat kernel's timeline (block
// entries, loads landed, partials published, the collector's phases) for the f32 sum over dim 0.
// `foldkit-tensor-probe --param-size N`: a read kernel of N f32 with a kernel parameter of ~24,
// ~660 and ~2070 bytes.
// `foldkit-tensor-probe --outer-sweep ROWS COLS [BATCHES]`: for the f32 sum over dim 0 (with
// BATCHES: of BATCHES x ROWS x COLS over the middle axis; at most 2^26 elements), the outer-flat
// kernel's launch shapes (threads, loads in flight) where the library takes it, then the outer
// kernel's (threads across the columns, splits of the reduced dim), through the user-functor
// path with the library's launch otherwise (results compared with the library's, exact inputs).
// `foldkit-tensor-probe --rows-sweep ROWS COLS`: for the f32 sum over dim 1, CUB's segmented
// reduce (a block a row) beside the library and, through the user-functor path, the library's
// plan (balanced over 4 blocks an SM, tuning: kDenseLongBlocksPerSm), rows-dense with grids of
// one and two waves of the blocks that fit and balanced over the blocks that fit (every warp the
// same number of rows), rows-block with a block a row (and two), and rows-group.
#include <cuda_runtime_api.h>

#include <cub/device/device_segmented_reduce.cuh>

#include <chrono>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "foldkit/cuda/reduce.hpp"
#include "foldkit/cuda/tensor_reduce.hpp"
#include "foldkit/cuda/tensor_reduce_custom.cuh"

namespace {

// Grid-strided streaming read of n4 vectors (the read kernels' body).
__device__ __forceinline__ void read_all(const float4* p, std::size_t n4, float* sink) {
  float acc = 0.f;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n4; i += std::size_t(gridDim.x) * blockDim.x) {
    const float4 v = __ldcs(p + i);
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 1234.5f) *sink = acc;
}

__global__ void read_kernel(const float4* p, std::size_t n4, float* sink) { read_all(p, n4, sink); }

// The read kernel with its arguments behind `kPad` bytes of padding in one __grid_constant__
// struct: does a kernel parameter the size of tensor::Launch (~660 bytes) cost per call?
template <int kPad>
struct PaddedReadArgs {
  unsigned char pad[kPad];
  const float4* p;
  std::size_t n4;
  float* sink;
};
template <int kPad>
__global__ void padded_read_kernel(const __grid_constant__ PaddedReadArgs<kPad> a) {
  read_all(a.p, a.n4, a.sink);
}

template <class F>
float median_us(F call) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> t;
  // FOLDKIT_PROBE_CALLS: timed calls + 3 warm-up (default 15; 1 for a sanitizer run).
  static const int calls = std::getenv("FOLDKIT_PROBE_CALLS") ? std::atoi(std::getenv("FOLDKIT_PROBE_CALLS")) : 15;
  const int warm = calls > 3 ? 3 : 0;
  for (int i = 0; i < calls + warm; ++i) {
    cudaEventRecord(a);
    call(i);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    if (i >= warm) t.push_back(ms * 1000.f);
  }
  std::sort(t.begin(), t.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return t[t.size() / 2];
}

struct Plus {
  __host__ __device__ float operator()(float a, float b) const { return a + b; }
};

// outer-flat's timeline: a user-functor policy whose spec stamps %globaltimer (thread 0 of each
// block, straight to global memory) at the kernel's trace points (reduce_trace.cuh's names).
struct TracedPlusSpec : foldkit::cuda::CustomReduceSpec<float, Plus> {
  unsigned long long* stamps;  // [block][kTracePoints]
  __device__ void trace_point(int point) const {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    stamps[blockIdx.x * foldkit::cuda::kTracePoints + point] = t;
  }
  __device__ void trace_flush() const {}
};
struct TracedPolicy {
  using value_type = float;
  using Spec = TracedPlusSpec;
  using Fold = foldkit::cuda::tensor::PlainFold<Spec, float>;
  using GenericSpec = Spec;
  using result_type = float;
  using Args = foldkit::cuda::tensor::CustomArgs<Spec>;
  static constexpr bool kArg = false;
  __device__ __forceinline__ static Spec spec(const Args& a) { return a.spec; }
};

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  using foldkit::DType;
  using foldkit::ReduceOp;
  using foldkit::TensorView;
  const std::int64_t n = std::int64_t{1} << 26;
  const int copies = 4;
  std::vector<float*> buf(copies);
  for (auto& p : buf) {
    cudaMalloc(&p, n * 4);
    cudaMemset(p, 0, n * 4);
  }
  float* out;
  cudaMalloc(&out, n * 8);
  float* sink;
  cudaMalloc(&sink, 4);
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  const auto dv = foldkit::Device::cuda(dev);

  auto read_us = [&](std::int64_t elems) {
    return median_us([&](int i) { read_kernel<<<sms * 8, 256>>>(reinterpret_cast<const float4*>(buf[i % copies]), elems / 4, sink); });
  };
  struct Case { std::vector<std::int64_t> shape; std::vector<int> axes; };
  if (argc == 3 && std::string(argv[1]) == "--param-size") {
    const std::int64_t elems = std::atoll(argv[2]);
    auto run = [&](auto args, const char* what) {
      const float us = median_us([&](int i) {
        auto a = args;
        a.p = reinterpret_cast<const float4*>(buf[i % copies]);
        a.n4 = static_cast<std::size_t>(elems / 4);
        a.sink = sink;
        padded_read_kernel<<<sms * 8, 256>>>(a);
      });
      std::printf("read kernel, %s: %.2f us\n", what, us);
    };
    for (int round = 0; round < 2; ++round) {
      run(PaddedReadArgs<8>{}, "8-byte pad");
      run(PaddedReadArgs<640>{}, "640-byte pad");
      run(PaddedReadArgs<2048>{}, "2048-byte pad");
    }
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
  }
  if (argc == 4 && std::string(argv[1]) == "--outer-flat-trace") {
    namespace tz = foldkit::cuda::tensor;
    using foldkit::cuda::kTracePoints;
    const std::int64_t rows = std::atoll(argv[2]), cols = std::atoll(argv[3]), elems = rows * cols;
    const std::int64_t shape[2] = {rows, cols};
    const TensorView in0 = TensorView::contiguous(buf[0], DType::f32, shape, 2, dv);
    const std::vector<int> axes{0};
    const std::int64_t oshape[1] = {cols};
    const TensorView ov = TensorView::contiguous(out, DType::f32, oshape, 1, dv);
    const auto st = foldkit::cuda::detail::prepare_tensor_reduce_custom(DType::f32, in0, axes, false, ov);
    if (st.choice.family != tz::Family::outer_flat) { std::printf("not outer-flat\n"); return 1; }
    const unsigned grid = st.choice.grid;
    void* ws = nullptr;
    cudaMalloc(&ws, st.ws_bytes + 256);
    cudaMemset(ws, 0, st.ws_bytes + 256);
    unsigned long long* stamps = nullptr;
    cudaMalloc(&stamps, grid * kTracePoints * 8);
    const std::int64_t slots = n / elems;
    std::vector<std::vector<double>> rowsv(10);
    const char* names[] = {"entry (first..last block)", "loads landed, block median", "loads landed, last block",
                           "published, last block", "collector: polling starts", "collector: thread 0 saw all",
                           "collector: every thread saw all", "collector: results stored",
                           "landed -> published, block median", "landed -> published, slowest block"};
    const int calls = 25;
    for (int call = 0; call < calls + 3; ++call) {
      cudaMemset(stamps, 0, grid * kTracePoints * 8);
      tz::Launch l = st.choice.launch;
      l.in = buf[call % copies] + ((call / copies) % slots) * elems;
      l.out = out;
      l.ws = ws;
      TracedPlusSpec spec{};
      spec.identity_value = 0.0f;
      spec.stamps = stamps;
      const TracedPolicy::Args args{l, spec};
      foldkit::cuda::launch_programmatic(tz::outer_flat_kernel<TracedPolicy, foldkit::cuda::tuning::kOuterFlatLoadsInFlight>,
                                         dim3(grid), dim3(st.choice.block), nullptr, args);
      cudaDeviceSynchronize();
      if (call < 3) continue;
      std::vector<unsigned long long> h(grid * kTracePoints);
      cudaMemcpy(h.data(), stamps, h.size() * 8, cudaMemcpyDeviceToHost);
      auto at = [&](unsigned b, int p) { return h[b * kTracePoints + p]; };
      unsigned long long t0 = ~0ull, entry_last = 0, loaded_last = 0, reduced_last = 0;
      std::vector<double> loaded, fold;
      unsigned collector = 0;
      for (unsigned b = 0; b < grid; ++b) {
        t0 = std::min(t0, at(b, foldkit::cuda::kTraceEntry));
        entry_last = std::max(entry_last, at(b, foldkit::cuda::kTraceEntry));
        loaded_last = std::max(loaded_last, at(b, foldkit::cuda::kTraceLoopDone));
        reduced_last = std::max(reduced_last, at(b, foldkit::cuda::kTraceReduced));
        loaded.push_back(static_cast<double>(at(b, foldkit::cuda::kTraceLoopDone)));
        fold.push_back((static_cast<double>(at(b, foldkit::cuda::kTraceReduced)) - static_cast<double>(at(b, foldkit::cuda::kTraceLoopDone))) / 1000.0);
        if (at(b, foldkit::cuda::kTraceDone) != 0) collector = b;
      }
      std::sort(loaded.begin(), loaded.end());
      auto us = [&](double t) { return (t - static_cast<double>(t0)) / 1000.0; };
      rowsv[0].push_back(us(static_cast<double>(entry_last)));
      rowsv[1].push_back(us(loaded[loaded.size() / 2]));
      rowsv[2].push_back(us(static_cast<double>(loaded_last)));
      rowsv[3].push_back(us(static_cast<double>(reduced_last)));
      rowsv[4].push_back(us(static_cast<double>(at(collector, foldkit::cuda::kTraceCollectStart))));
      rowsv[5].push_back(us(static_cast<double>(at(collector, foldkit::cuda::kTraceSeen0))));
      rowsv[6].push_back(us(static_cast<double>(at(collector, foldkit::cuda::kTraceAllSeen))));
      rowsv[7].push_back(us(static_cast<double>(at(collector, foldkit::cuda::kTraceDone))));
      std::sort(fold.begin(), fold.end());
      rowsv[8].push_back(fold[fold.size() / 2]);
      rowsv[9].push_back(fold.back());
    }
    std::printf("outer-flat timeline, f32 sum over dim 0 of %lld x %lld (%s): us after the first block's entry, median [min, max] of %d calls\n",
                static_cast<long long>(rows), static_cast<long long>(cols),
                foldkit::cuda::describe_reduce(ReduceOp::sum, in0, axes, false, ov).c_str(), calls);
    for (int k = 0; k < 10; ++k) {
      auto v = rowsv[k];
      std::sort(v.begin(), v.end());
      std::printf("  %-34s %7.2f [%6.2f, %6.2f]\n", names[k], v[v.size() / 2], v.front(), v.back());
    }
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
  }
  namespace tz = foldkit::cuda::tensor;
  using Policy = tz::CustomTensorOp<float, Plus>;
  // The sweeps' inputs: small integers, so that every order of the sum gives the same bits.
  auto fill_exact = [&] {
    std::vector<float> h(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(static_cast<int>((i * 2654435761u) >> 24) % 7 - 3);
    for (auto& p : buf) cudaMemcpy(p, h.data(), n * 4, cudaMemcpyHostToDevice);
  };
  // Times one launch choice of the user-functor path on the inputs at(i), then runs it once
  // more on at(0) and copies its `outs` results into `got`.
  auto time_custom_choice = [&](const tz::Choice& c, auto at, void* ws, std::int64_t outs, std::vector<float>& got,
                                auto launcher) {
    auto launch = [&](int i) {
      tz::Launch l = c.launch;
      l.in = at(i).data;
      l.out = out;
      l.ws = ws;
      const typename Policy::Args args{l, typename Policy::Spec{Plus{}, 0.0f}};
      launcher(c, args);
    };
    const float us = median_us(launch);
    launch(0);
    got.resize(static_cast<std::size_t>(outs));
    cudaMemcpy(got.data(), out, outs * 4, cudaMemcpyDeviceToHost);
    return us;
  };
  auto library_launch = [](const tz::Choice& ch, const typename Policy::Args& args) {
    tz::launch_tensor_reduce<Policy>(ch, args, nullptr);
  };
  // A sweep's input i: in0's view at the i-th offset of the rotated buffers (cold in L2).
  auto rotation = [&](const TensorView& in0, std::int64_t elems) {
    const std::int64_t slots = n / elems;
    return [&buf, in0, elems, slots, copies](int i) {
      TensorView in = in0;
      in.data = buf[i % copies] + ((i / copies) % slots) * elems;
      return in;
    };
  };
  // The read kernel's and the library's f32 sum's per-call medians over a rotation.
  auto read_and_library = [&](auto at, std::int64_t elems, const std::vector<int>& axes, const TensorView& ov) {
    const float read = median_us([&](int i) { read_kernel<<<sms * 8, 256>>>(reinterpret_cast<const float4*>(at(i).data), elems / 4, sink); });
    const float lib = median_us([&](int i) { foldkit::cuda::reduce(ReduceOp::sum, at(i), axes, false, ov); });
    return std::make_pair(read, lib);
  };

  if (argc == 4 && std::string(argv[1]) == "--rows-sweep") {
    const std::int64_t rows = std::atoll(argv[2]), cols = std::atoll(argv[3]), elems = rows * cols;
    if (elems > n || cols % 4 != 0) {
      std::fprintf(stderr, "--rows-sweep: at most %lld elements, COLS a multiple of 4\n", static_cast<long long>(n));
      return 2;
    }
    fill_exact();
    const std::int64_t shape[2] = {rows, cols};
    const TensorView in0 = TensorView::contiguous(buf[0], DType::f32, shape, 2, dv);
    const std::vector<int> axes{1};
    const TensorView ov = TensorView::contiguous(out, DType::f32, shape, 1, dv);
    const auto at = rotation(in0, elems);
    const std::pair<float, float> times = read_and_library(at, elems, axes, ov);
    const float read = times.first, lib = times.second;
    std::vector<float> want(static_cast<std::size_t>(rows)), got;
    foldkit::cuda::reduce(ReduceOp::sum, at(0), axes, false, ov);
    cudaMemcpy(want.data(), out, rows * 4, cudaMemcpyDeviceToHost);
    std::printf("rows sweep, f32 sum over dim 1 of %lld x %lld: read kernel %.2f us, library %.2f us (%.2fx); %s\n",
                static_cast<long long>(rows), static_cast<long long>(cols), read, lib, lib / read,
                foldkit::cuda::describe_reduce(ReduceOp::sum, in0, axes, false, ov).c_str());
    // CUB: one block a row (offsets r * cols, as foldkit-bench axes gives it).
    std::vector<int> h_off(static_cast<std::size_t>(rows + 1));
    for (std::int64_t r = 0; r <= rows; ++r) h_off[static_cast<std::size_t>(r)] = static_cast<int>(r * cols);
    int* d_off = nullptr;
    cudaMalloc(&d_off, h_off.size() * sizeof(int));
    cudaMemcpy(d_off, h_off.data(), h_off.size() * sizeof(int), cudaMemcpyHostToDevice);
    std::size_t temp_bytes = 0;
    cub::DeviceSegmentedReduce::Sum(nullptr, temp_bytes, static_cast<const float*>(in0.data), out, static_cast<int>(rows), d_off, d_off + 1);
    void* temp = nullptr;
    cudaMalloc(&temp, temp_bytes + 16);
    const float cub_us = median_us([&](int i) {
      cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, static_cast<const float*>(at(i).data), out, static_cast<int>(rows), d_off, d_off + 1);
    });
    cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, static_cast<const float*>(at(0).data), out, static_cast<int>(rows), d_off, d_off + 1);
    got.resize(want.size());
    cudaMemcpy(got.data(), out, rows * 4, cudaMemcpyDeviceToHost);
    std::printf("  CUB DeviceSegmentedReduce::Sum             %8.2f us  %.2fx read  %s\n", cub_us, cub_us / read, got == want ? "ok" : "MISMATCH");
    void* ws = nullptr;
    cudaMalloc(&ws, 64 << 20);
    cudaMemset(ws, 0, 64 << 20);
    const foldkit::cuda::detail::TensorReduceSetup st = foldkit::cuda::detail::prepare_tensor_reduce_custom(DType::f32, in0, axes, false, ov);
    auto report = [&](const char* what, const tz::Choice& c) {
      const float us = time_custom_choice(c, at, ws, rows, got, library_launch);
      std::printf("  %-28s grid %6u  %8.2f us  %.2fx read  %.2fx CUB  %s\n", what, c.grid, us, us / read, us / cub_us,
                  got == want ? "ok" : "MISMATCH");
    };
    report("library's plan (functor)", st.choice);
    if (st.choice.family == tz::Family::rows_dense && st.choice.launch.chunks >= 8) {
      // The blocks of this kernel that fit an SM at once (the library's grid assumes 4).
      int fit = 0;
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, tz::rows_dense_kernel<Policy, 8>, 256, 0);
      std::printf("  rows-dense (8 vectors a lane a round): %d blocks of 256 fit an SM\n", fit);
      for (int waves : {1, 2}) {
        tz::Choice c = st.choice;
        c.grid = static_cast<unsigned>(std::max(1, fit) * sms * waves);
        report(waves == 1 ? "rows-dense, one wave" : "rows-dense, two waves", c);
      }
      // Balanced as the library's grid is, but over the blocks that fit rather than 4: every warp
      // (a row each) the same number of rows, the fewest that keep the grid in one wave.
      {
        tz::Choice c = st.choice;
        const std::int64_t warps_at_once = static_cast<std::int64_t>(std::max(1, fit)) * sms * 8;
        const std::int64_t k = (rows + warps_at_once - 1) / warps_at_once;
        c.grid = static_cast<unsigned>(((rows + k - 1) / k + 7) / 8);
        report("rows-dense, balanced at fit", c);
      }
    }
    // The library's choice as another rows family: every row one contiguous run of vectors.
    auto as_family = [&](tz::Family family) {
      tz::Choice c = st.choice;
      c.family = family;
      c.vec = true;
      c.launch.kept.rank = 1;
      c.launch.kept.size[0] = rows;
      c.launch.kept.in[0] = cols;
      c.launch.kept.out[0] = 1;
      c.launch.red.rank = 0;
      c.launch.run = cols;
      return c;
    };
    for (std::int64_t per_row : {1, 2}) {
      // A block a row (or two, their partials folded by the last): CUB's shape.
      tz::Choice c = as_family(tz::Family::rows_block);
      c.launch.chunks = per_row;
      c.launch.partials_offset = per_row > 1 ? (rows * 4 + 15) / 16 * 16 : 0;
      c.grid = static_cast<unsigned>(rows * per_row);
      if (per_row > 1 && c.launch.partials_offset + rows * per_row * 4 > (std::int64_t{64} << 20)) continue;
      report(per_row == 1 ? "rows-block, a block a row" : "rows-block, two blocks a row", c);
    }
    {
      tz::Choice c = as_family(tz::Family::rows_group);  // a warp a group of 4 rows
      c.launch.group_shift = 5;
      c.grid = static_cast<unsigned>(std::clamp<std::int64_t>(((rows + 3) / 4 * 32 + 255) / 256, 1, sms * 8));
      report("rows-group, 32 lanes", c);
    }
    cudaFree(temp);
    cudaFree(d_off);
    cudaFree(ws);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
  }

  if ((argc == 4 || argc == 5) && std::string(argv[1]) == "--outer-sweep") {
    // (BATCHES, ROWS, COLS) over the middle axis when BATCHES is given: the 3-D outer cases.
    const std::int64_t rows = std::atoll(argv[2]), cols = std::atoll(argv[3]);
    const std::int64_t batches = argc == 5 ? std::atoll(argv[4]) : 1, elems = batches * rows * cols, outs = batches * cols;
    if (elems > n) {
      std::fprintf(stderr, "--outer-sweep: at most %lld elements\n", static_cast<long long>(n));
      return 2;
    }
    fill_exact();
    const std::int64_t shape[3] = {batches, rows, cols};
    const int rank = batches > 1 ? 3 : 2;
    const TensorView in0 = TensorView::contiguous(buf[0], DType::f32, shape + (3 - rank), rank, dv);
    const std::vector<int> axes{rank - 2};
    const std::int64_t oshape[2] = {batches, cols};
    const TensorView ov = TensorView::contiguous(out, DType::f32, oshape + (3 - rank), rank - 1, dv);
    const auto at = rotation(in0, elems);
    const std::pair<float, float> times = read_and_library(at, elems, axes, ov);
    const float read = times.first, lib = times.second;
    // The full-array reduction of the same bytes (one value): what the core reaches per call there.
    const float full = median_us([&](int i) { foldkit::cuda::sum(static_cast<const float*>(at(i).data), elems, out); });
    std::printf("full-array sum of the same bytes: %.2f us (%.2fx read)\n", full, full / read);
    std::vector<float> want(static_cast<std::size_t>(outs)), got(want.size());
    foldkit::cuda::reduce(ReduceOp::sum, at(0), axes, false, ov);
    cudaMemcpy(want.data(), out, outs * 4, cudaMemcpyDeviceToHost);
    std::printf("outer sweep, f32 sum over the rows of %lld x %lld x %lld: read kernel %.2f us, library %.2f us (%.2fx); %s\n",
                static_cast<long long>(batches), static_cast<long long>(rows), static_cast<long long>(cols), read, lib, lib / read,
                foldkit::cuda::describe_reduce(ReduceOp::sum, in0, axes, false, ov).c_str());
    void* ws = nullptr;
    cudaMalloc(&ws, 64 << 20);
    cudaMemset(ws, 0, 64 << 20);
    const std::int64_t cvec = cols / 4;
    const foldkit::cuda::detail::TensorReduceSetup st = foldkit::cuda::detail::prepare_tensor_reduce_custom(DType::f32, in0, axes, false, ov);
    auto time_choice = [&](const tz::Choice& c, auto launcher) { return time_custom_choice(c, at, ws, outs, got, launcher); };
    // outer-flat's launch shapes (threads x loads in flight, one round of loads where the grid allows).
    if (st.choice.family == tz::Family::outer_flat) {
      const std::int64_t vectors = rows * cvec;
      for (unsigned block : {256u, 512u})
        for (int unroll : {2, 4, 8, -4}) {  // -4: 4 loads, launched without programmatic dependent launch
          tz::Choice c = st.choice;
          c.block = block;
          const int u = unroll < 0 ? -unroll : unroll;
          c.grid = static_cast<unsigned>(std::clamp<std::int64_t>((vectors + block * u - 1) / (block * u), 1, sms * 2048 / block));
          c.launch.partials_offset = 16;
          const float us = time_choice(c, [&](const tz::Choice& ch, const typename Policy::Args& args) {
            const dim3 g(ch.grid), b(ch.block);
            if (unroll == -4) tz::outer_flat_kernel<Policy, 4><<<g, b>>>(args);
            else if (unroll == 2) foldkit::cuda::launch_programmatic(tz::outer_flat_kernel<Policy, 2>, g, b, nullptr, args);
            else if (unroll == 4) foldkit::cuda::launch_programmatic(tz::outer_flat_kernel<Policy, 4>, g, b, nullptr, args);
            else foldkit::cuda::launch_programmatic(tz::outer_flat_kernel<Policy, 8>, g, b, nullptr, args);
          });
          std::printf("  outer-flat threads %4u  loads %d%s  grid %6u  %8.2f us  %.2fx read  %s\n", block, u, unroll < 0 ? " (no PDL)" : "", c.grid, us,
                      us / read, got == want ? "ok" : "MISMATCH");
        }
    }
    // The outer kernel's shapes (what the library took before outer-flat, for the flat shapes).
    for (int tx_shift = 0; (1 << tx_shift) <= 256; ++tx_shift) {
      const std::int64_t tx = 1 << tx_shift, ty = 256 / tx;
      if (tx > 2 * cvec) break;
      for (std::int64_t chunks : {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}) {
        if (chunks * ty > rows) continue;
        tz::Choice c = st.choice;
        c.family = tz::Family::outer;
        c.block = 256;
        c.launch.tx_shift = tx_shift;
        c.launch.col_tiles = (cvec + tx - 1) / tx;
        c.launch.chunks = chunks;
        const std::int64_t base = c.launch.batches * c.launch.col_tiles;
        c.launch.partials_offset = (base * 4 + 15) / 16 * 16;
        c.grid = static_cast<unsigned>(base * chunks);
        // The partials must fit the sweep's 64 MiB workspace ((16, 2^22) at 64 column threads
        // and 4 splits did not, and every later shape then failed with the first's error).
        if (chunks > 1 && c.launch.partials_offset + base * chunks * tx * 4 * 4 > (std::int64_t{64} << 20)) continue;
        const float us = time_choice(c, library_launch);
        std::printf("  threads/cols %3lld  splits %5lld  grid %6u  %8.2f us  %.2fx read  %s\n", static_cast<long long>(tx),
                    static_cast<long long>(chunks), c.grid, us, us / read, got == want ? "ok" : "MISMATCH");
      }
    }
    cudaFree(ws);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
  }
  if (argc >= 4) {
    for (int a = 1; a + 2 < argc; a += 3) {
      const std::int64_t rows = std::atoll(argv[a]), cols = std::atoll(argv[a + 1]);
      const int axis = std::atoi(argv[a + 2]);
      const std::int64_t elems = rows * cols;
      const std::int64_t shape[2] = {rows, cols};
      const TensorView in0 = TensorView::contiguous(buf[0], DType::f32, shape, 2, dv);
      const std::vector<int> axes{axis};
      const foldkit::ReduceOutput o = foldkit::cuda::reduce_output_shape(ReduceOp::sum, in0, axes, false);
      const TensorView ov = TensorView::contiguous(out, o.dtype, o.shape, o.rank, dv);
      const std::int64_t slots = n / elems;  // distinct offsets per buffer
      auto at = [&](int i) {
        TensorView in = in0;
        in.data = buf[i % copies] + ((i / copies) % slots) * elems;
        return in;
      };
      const float gpu_us = median_us([&](int i) { foldkit::cuda::reduce(ReduceOp::sum, at(i), axes, false, ov); });
      const float read = median_us([&](int i) {
        read_kernel<<<sms * 8, 256>>>(reinterpret_cast<const float4*>(at(i).data), elems / 4, sink);
      });
      std::vector<double> host;
      for (int i = 0; i < 200; ++i) {
        cudaDeviceSynchronize();
        const auto t0 = std::chrono::steady_clock::now();
        foldkit::cuda::reduce(ReduceOp::sum, at(i), axes, false, ov);
        host.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(host.begin(), host.end());
      std::printf("sum f32 %lldx%lld axis %d: per call %.2f us, read kernel %.2f us (%.2fx), host per call %.2f us; %s\n",
                  static_cast<long long>(rows), static_cast<long long>(cols), axis, gpu_us, read, gpu_us / read,
                  host[host.size() / 2], foldkit::cuda::describe_reduce(ReduceOp::sum, in0, axes, false, ov).c_str());
    }
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
  }
  std::vector<Case> cases;
  for (int k : {2, 4, 6, 8, 10, 12, 14, 18, 22}) {
    const std::int64_t cols = std::int64_t{1} << k, rows = n / cols;
    cases.push_back({{rows, cols}, {1}});
    cases.push_back({{rows, cols}, {0}});
  }
  cases.push_back({{64, 4096, 256}, {1}});
  cases.push_back({{64, 4096, 256}, {0, 2}});
  // (4096, 64, 1024) is 2^28 elements: foldkit-bench axes has it; these buffers hold 2^26.
  cases.push_back({{256, 256, 1024}, {1}});
  cases.push_back({{256, 256, 1024}, {0, 2}});
  std::printf("%-22s %-6s %-7s %9s %9s %6s  %s\n", "shape", "axes", "op", "us", "read us", "%", "plan");
  for (const Case& c : cases) {
    const std::int64_t elems = 1;
    (void)elems;
    const double ceil_us = read_us(n);
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::argmax}) {
      if (op == ReduceOp::argmax && c.axes.size() > 1) continue;
      const TensorView in0 = TensorView::contiguous(buf[0], DType::f32, c.shape.data(), int(c.shape.size()), dv);
      const foldkit::ReduceOutput o = foldkit::cuda::reduce_output_shape(op, in0, c.axes, false);
      const TensorView ov = TensorView::contiguous(out, o.dtype, o.shape, o.rank, dv);
      float us = median_us([&](int i) {
        TensorView in = in0;
        in.data = buf[i % copies];
        foldkit::cuda::reduce(op, in, c.axes, false, ov);
      });
      std::string shape, axes;
      for (auto s : c.shape) shape += std::to_string(s) + "x";
      for (auto a : c.axes) axes += std::to_string(a);
      const std::string plan = foldkit::cuda::describe_reduce(op, in0, c.axes, false, ov);
      // % of the read ceiling's rate, counting bytes read + written.
      const double bytes = double(n) * 4 + double(o.numel()) * foldkit::dtype_size(o.dtype);
      std::printf("%-22s %-6s %-7s %9.1f %9.1f %6.1f  %s\n", shape.c_str(), axes.c_str(), foldkit::op_name(op), us, ceil_us,
                  100.0 * (bytes / us) / (double(n) * 4 / ceil_us), plan.substr(plan.find("kernel=")).c_str());
    }
  }
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("status: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
