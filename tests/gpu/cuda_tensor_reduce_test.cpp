// foldkit::cuda::reduce / arg_reduce over tensors (foldkit/cuda/tensor_reduce.hpp) against the
// naive reference shared with the CPU tests (tests/common/tensor_reference.hpp): random shapes,
// axes, keepdims, input layouts (transposed, stepped, broadcast, offset) and output layouts, every
// op x dtype; device outputs are poisoned (0xFF) and every byte outside the output view must stay
// poisoned. Then determinism (same bits on every call), bad arguments (the right Errc, nothing
// written) and a non-default stream.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/tensor_reference.hpp"
#include "foldkit/cuda/tensor_reduce.hpp"
#include "foldkit/tensor_reduce.hpp"
#include "support/cuda_backend.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

using CudaTensorReduce = CudaTest;

// A device copy of a host byte buffer (cudaMemcpy: complete on return).
DeviceBuffer upload_bytes(const void* host, std::size_t bytes) {
  DeviceBuffer d(bytes > 0 ? bytes : 1);
  if (bytes > 0) FOLDKIT_CUDA_CHECK(cudaMemcpy(d.get(), host, bytes, cudaMemcpyHostToDevice));
  return d;
}
void download_bytes(void* host, const DeviceBuffer& d, std::size_t bytes) {
  if (bytes > 0) FOLDKIT_CUDA_CHECK(cudaMemcpy(host, d.get(), bytes, cudaMemcpyDeviceToHost));
}

// The CUDA backend as random_case's runner: the input storage and the poisoned output buffers
// go to the device whole, the call runs on the default stream, and the output buffers come back
// whole (also when the call throws, so the poison check sees what the device holds).
template <ReduceOp Op> struct CudaRunner {
  template <class T>
  void operator()(const std::vector<T>& storage, const Layout& in, const std::vector<int>& axes, bool keepdims,
                  OutBuffer& out, DType out_dtype, OutBuffer* vals) const {
    const Device dev = Device::cuda(current_device());
    const DeviceBuffer d_in = upload_bytes(storage.data(), storage.size() * sizeof(T));
    const DeviceBuffer d_out = upload_bytes(out.bytes.data(), out.bytes.size());
    DeviceBuffer d_vals;
    if (vals != nullptr) d_vals = upload_bytes(vals->bytes.data(), vals->bytes.size());
    const TensorView view = in.view(d_in.get(), dtype_v<T>, dev);
    auto copy_back = [&] {
      download_bytes(out.bytes.data(), d_out, out.bytes.size());
      if (vals != nullptr) download_bytes(vals->bytes.data(), d_vals, vals->bytes.size());
    };
    try {
      if (vals != nullptr)
        cuda::arg_reduce(Op, view, axes, keepdims, out.view(out_dtype, d_out.get(), dev),
                         vals->view(dtype_v<T>, d_vals.get(), dev));
      else
        cuda::reduce(Op, view, axes, keepdims, out.view(out_dtype, d_out.get(), dev));
    } catch (...) {
      copy_back();
      throw;
    }
    FOLDKIT_CUDA_CHECK(cudaGetLastError());
    copy_back();
  }
};

TEST_F(CudaTensorReduce, RandomCasesMatchTheReference) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  int case_no = 0;
  constexpr int kCasesPerPair = 6;  // x 7 ops x 8 dtypes = 336 cases
  for (DType dt : kAllDTypes)
    visit_dtype(dt, [&](auto tag) {
      using T = decltype(tag);
      for_each_reduce_op([&](auto op) {
        for (int k = 0; k < kCasesPerPair; ++k)
          random_case<decltype(op)::value, T>(rng, case_no++, CudaRunner<decltype(op)::value>{});
      });
    });
}

// Long rows (many odometer steps per lane, several carries per step) and many output elements
// (more warps than the grid has: the grid-stride loop), against the reference.
TEST_F(CudaTensorReduce, LongRowsAndManyOutputs) {
  const int dev = current_device();
  struct Case { std::vector<std::int64_t> shape, strides; std::vector<int> axes; };
  const std::vector<Case> cases = {
      {{3, 70001}, {70001, 1}, {-1}},            // long contiguous rows
      {{5, 7, 3001}, {1, 5, 35}, {0, 2}},         // transposed: inner reduced dimension of 5
      {{40000, 3}, {3, 1}, {1}},                 // many short rows
      {{2, 300, 301}, {90300, 1, 300}, {1, 2}},   // a transposed 2-D block per output
      {{2, 3, 5, 7, 11}, {0, 385, 77, 11, 1}, {}}};  // broadcast outer dimension, everything reduced
  for (const Case& c : cases) {
    std::int64_t extent = 1;
    for (std::size_t i = 0; i < c.shape.size(); ++i) extent += (c.shape[i] - 1) * c.strides[i];
    std::vector<std::int32_t> host(static_cast<std::size_t>(extent));
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<std::int32_t>((i * 2654435761u) % 2001) - 1000;
    const DeviceBuffer d_in = upload_bytes(host.data(), host.size() * sizeof(std::int32_t));
    Layout l;
    l.shape = c.shape;
    l.strides = c.strides;
    const TensorView in = l.view(d_in.get(), DType::i32, Device::cuda(dev));
    unsigned mask = 0;
    for (int a : c.axes) mask |= 1u << (a < 0 ? a + static_cast<int>(c.shape.size()) : a);
    if (c.axes.empty()) mask = (1u << c.shape.size()) - 1u;
    const std::vector<RefAcc> ref = reference(host.data(), l, mask);
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::argmin}) {
      if (op == ReduceOp::argmin && c.axes.size() > 1) continue;
      const ReduceOutput shape = cuda::reduce_output_shape(op, in, c.axes, false);
      const std::size_t bytes = static_cast<std::size_t>(shape.numel()) * dtype_size(shape.dtype);
      DeviceBuffer d_out(bytes);
      cuda::reduce(op, in, c.axes, false, TensorView::contiguous(d_out.get(), shape.dtype, shape.shape, shape.rank, Device::cuda(dev)));
      std::vector<unsigned char> got(bytes);
      download_bytes(got.data(), d_out, bytes);
      for (std::int64_t o = 0; o < shape.numel(); ++o) {
        const RefAcc& r = ref[static_cast<std::size_t>(o)];
        if (op == ReduceOp::sum) {
          ASSERT_EQ(load<std::int64_t>(got.data(), o), static_cast<std::int64_t>(r.isum)) << "sum, output " << o;
        } else if (op == ReduceOp::max) {
          ASSERT_EQ(load<std::int32_t>(got.data(), o), static_cast<std::int32_t>(r.max.value)) << "max, output " << o;
        } else {
          ASSERT_EQ(load<std::int64_t>(got.data(), o), r.argmin) << "argmin, output " << o;
        }
      }
    }
  }
}

// ---- the outer family split over blocks ----------------------------------------------------------

// The number after `key` in a describe_reduce plan (e.g. "splits="), -1 when the plan has none.
long long plan_field(const std::string& plan, const std::string& key) {
  const std::size_t at = plan.find(key);
  return at == std::string::npos ? -1LL : std::stoll(plan.substr(at + key.size()));
}

// Exact int32 sum, max and argmin of a contiguous tensor over `axes` through the outer family
// (the plan is checked to be outer, then by plan_ok), against the reference; each call twice, so
// the second finds the workspace its first left.
template <class PlanOk>
void outer_case_matches(Rng& rng, const std::vector<std::int64_t>& shape_in, const std::vector<int>& axes, PlanOk plan_ok) {
  const int dev = current_device();
  Layout l;
  l.shape = shape_in;
  l.strides.assign(shape_in.size(), 1);
  for (int i = static_cast<int>(shape_in.size()) - 2; i >= 0; --i) l.strides[i] = l.strides[i + 1] * shape_in[i + 1];
  const std::int64_t n = l.strides[0] * shape_in[0];
  std::vector<std::int32_t> host(static_cast<std::size_t>(n));
  const CounterRng r = rng.counter();
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<std::int32_t>(r.unit(i) * 2001) - 1000;
  const DeviceBuffer d_in = upload_bytes(host.data(), host.size() * sizeof(std::int32_t));
  const TensorView in = l.view(d_in.get(), DType::i32, Device::cuda(dev));
  unsigned mask = 0;
  for (int a : axes) mask |= 1u << a;
  const std::vector<RefAcc> ref = reference(host.data(), l, mask);
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::argmin}) {
    const ReduceOutput shape = cuda::reduce_output_shape(op, in, axes, false);
    const std::size_t bytes = static_cast<std::size_t>(shape.numel()) * dtype_size(shape.dtype);
    DeviceBuffer d_out(bytes);
    const TensorView out = TensorView::contiguous(d_out.get(), shape.dtype, shape.shape, shape.rank, Device::cuda(dev));
    const std::string plan = cuda::describe_reduce(op, in, axes, false, out);
    ASSERT_NE(plan.find("kernel=outer"), std::string::npos) << plan;
    plan_ok(op, plan);
    if (::testing::Test::HasFatalFailure()) return;  // a plan_ok assertion failed: stop, as an inline one would
    for (int call = 0; call < 2; ++call) {
      FOLDKIT_CUDA_CHECK(cudaMemset(d_out.get(), 0xFF, bytes));
      cuda::reduce(op, in, axes, false, out);
      std::vector<unsigned char> got(bytes);
      download_bytes(got.data(), d_out, bytes);
      for (std::int64_t o = 0; o < shape.numel(); ++o) {
        const RefAcc& e = ref[static_cast<std::size_t>(o)];
        if (op == ReduceOp::sum) {
          ASSERT_EQ(load<std::int64_t>(got.data(), o), static_cast<std::int64_t>(e.isum)) << plan << ", output " << o;
        } else if (op == ReduceOp::max) {
          ASSERT_EQ(load<std::int32_t>(got.data(), o), static_cast<std::int32_t>(e.max.value)) << plan << ", output " << o;
        } else {
          ASSERT_EQ(load<std::int64_t>(got.data(), o), e.argmin) << plan << ", output " << o;
        }
      }
    }
  }
}

// Reductions over outer dims with few columns split the reduced dim over many blocks, whose
// partials the block that started last collects (flagged slots, start tickets): shapes whose
// plan is checked to split: one column tile of 1-64 columns (vector and element columns),
// several batches, several column tiles.
TEST_F(CudaTensorReduce, OuterSplitsMatchTheReference) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  struct Case { std::vector<std::int64_t> shape; std::vector<int> axes; };
  const std::vector<Case> cases = {{{32768, 32}, {0}}, {{65537, 4}, {0}}, {{3, 20001, 40}, {1}},
                                   {{7001, 13}, {0}},  {{16384, 64}, {0}}, {{2, 1031, 2048}, {1}}};
  for (const Case& c : cases)
    outer_case_matches(rng, c.shape, c.axes, [](ReduceOp, const std::string& plan) {
      // outer-flat (sum and max of rows of whole vectors): its blocks' partials, collected the same way.
      const bool flat = plan.find("kernel=outer-flat") != std::string::npos;
      ASSERT_GT(plan_field(plan, flat ? "blocks=" : "splits="), 1) << "the case must split: " << plan;
    });
}

// argmin/argmax of 2- and 4-byte types split over blocks meet in one atomicMax slot a column
// (their 64-bit keys; argmin's complemented) instead of a fold of the splits' partials: f32,
// bf16 and f16 over dim 0 of shapes that split, with values of few levels (ties across splits),
// NaNs early, late and twice in some columns (the first NaN wins), columns of -0 and +0 only
// (equal: the first row wins), against a host reference. Calls A, B, A on one explicit
// workspace, B being A's rows in reverse order, 16 below A's values for argmax and 16 above for
// argmin: a slot the last block left unreset would hold a key that beats every one of B's, and
// its index (A's) is not B's. (B as A shifted alone kept A's indices: the unreset slot planted
// on 2026-11-29 passed.)
template <class T>
void outer_split_arg_case(Rng& rng, std::int64_t rows, std::int64_t cols) {
  const int dev = current_device();
  const CounterRng r = rng.counter();
  std::vector<float> vals(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t c = 0; c < cols; ++c) {
      float v = static_cast<float>(static_cast<int>(r.unit(static_cast<std::uint64_t>(i * cols + c)) * 8) - 4);
      if (c % 5 == 4) v = (i % 2 == 0) ? -0.0f : 0.0f;
      vals[static_cast<std::size_t>(i * cols + c)] = v;
    }
  for (std::int64_t c = 0; c < cols; ++c) {
    auto at = [&](std::int64_t i) -> float& { return vals[static_cast<std::size_t>(i * cols + c)]; };
    if (c % 5 == 1) at(rows * 3 / 4) = NAN;
    if (c % 5 == 2) at(5) = NAN;
    if (c % 5 == 3) at(rows / 3) = NAN, at(rows - 2) = NAN;
  }
  const std::int64_t shape[2] = {rows, cols};
  const Device cu = Device::cuda(dev);
  Stream stream;
  for (ReduceOp op : {ReduceOp::argmax, ReduceOp::argmin}) {
    const bool is_max = op == ReduceOp::argmax;
    // The two inputs (B: A's rows reversed, shifted away from the extreme) and their references
    // (tensor_reference.hpp).
    std::vector<T> host[2];
    std::vector<RefAcc> want[2];
    DeviceBuffer d_in[2];
    Layout l;
    l.shape = {rows, cols};
    l.strides = {cols, 1};
    for (int k = 0; k < 2; ++k) {
      const float shift = k == 0 ? 0.0f : is_max ? -16.0f : 16.0f;
      host[k].resize(vals.size());
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t c = 0; c < cols; ++c) {
          const std::int64_t from = k == 0 ? i : rows - 1 - i;
          host[k][static_cast<std::size_t>(i * cols + c)] = static_cast<T>(vals[static_cast<std::size_t>(from * cols + c)] + shift);
        }
      want[k] = reference(host[k].data(), l, 1u);
      d_in[k] = upload_bytes(host[k].data(), host[k].size() * sizeof(T));
    }
    const TensorView in0 = TensorView::contiguous(d_in[0].get(), dtype_v<T>, shape, 2, cu);
    const ReduceOutput o = cuda::reduce_output_shape(op, in0, {0}, false);
    DeviceBuffer d_out(static_cast<std::size_t>(cols) * sizeof(std::int64_t));
    const TensorView out = TensorView::contiguous(d_out.get(), o.dtype, o.shape, o.rank, cu);
    const std::string plan = cuda::describe_reduce(op, in0, {0}, false, out);
    ASSERT_NE(plan.find("kernel=outer"), std::string::npos) << plan;
    ASSERT_GT(plan_field(plan, "splits="), 1) << "the case must split: " << plan;
    const std::size_t ws_bytes = cuda::tensor_reduce_workspace_bytes(op, in0, {0}, false);
    DeviceBuffer ws(ws_bytes > 0 ? ws_bytes : 1);
    FOLDKIT_CUDA_CHECK(cudaMemset(ws.get(), 0, ws_bytes > 0 ? ws_bytes : 1));
    for (int call = 0; call < 3; ++call) {
      const int k = call == 1 ? 1 : 0;
      const TensorView in = TensorView::contiguous(d_in[k].get(), dtype_v<T>, shape, 2, cu);
      FOLDKIT_CUDA_CHECK(cudaMemset(d_out.get(), 0xFF, static_cast<std::size_t>(cols) * sizeof(std::int64_t)));
      cuda::reduce(op, in, {0}, false, out, cuda::Workspace{ws.get(), ws_bytes}, stream);
      FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
      std::vector<std::int64_t> got(static_cast<std::size_t>(cols));
      download_bytes(got.data(), d_out, got.size() * sizeof(std::int64_t));
      for (std::int64_t c = 0; c < cols; ++c)
        ASSERT_EQ(got[static_cast<std::size_t>(c)],
                  is_max ? want[k][static_cast<std::size_t>(c)].argmax : want[k][static_cast<std::size_t>(c)].argmin)
            << op_name(op) << " " << dtype_name(dtype_v<T>) << " (" << rows << ", " << cols << "), call " << call
            << ", column " << c << ": " << plan;
    }
  }
}

TEST_F(CudaTensorReduce, OuterSplitArgKeysMeetInOneSlot) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t rows = std::max<std::int64_t>(4099, std::min<std::int64_t>(65537, max_n() / 40));
  outer_split_arg_case<float>(rng, rows, 8);
  outer_split_arg_case<float>(rng, rows, 40);
  outer_split_arg_case<bfloat16>(rng, rows, 16);
  outer_split_arg_case<half>(rng, rows, 24);
}

// An unsplit reduced dim of 9-15 rows at 256 column threads (two rounds of 8 loads a thread) is
// read by 128 column threads, one round each, two threads a column vector combined in the tree
// (tuning: kOuterOneRoundMinColumnThreads); argmin keeps 256, and 8 rows (one round) keep 256.
// (15, 4100): 1025 column vectors, so the last of 9 column tiles is mostly idle threads.
// (1024, 40, 256) over the middle axis: 64 column vectors, 40 rows, halved twice (64 -> 32
// column threads, 8 threads a column vector); 1024 batches fill whole waves, so it is unsplit.
TEST_F(CudaTensorReduce, OuterOneRoundHalvesTheColumnThreads) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  struct Case { std::vector<std::int64_t> shape; std::vector<int> axes; long long widest, one_round; };
  const std::vector<Case> cases = {{{12, 2048}, {0}, 256, 128},   {{15, 4100}, {0}, 256, 128},
                                   {{3, 13, 1024}, {1}, 256, 128}, {{8, 2048}, {0}, 256, 256},
                                   {{1024, 40, 256}, {1}, 64, 32}};
  for (const Case& c : cases)
    outer_case_matches(rng, c.shape, c.axes, [&](ReduceOp op, const std::string& plan) {
      ASSERT_EQ(plan_field(plan, "splits="), 1) << plan;
      EXPECT_EQ(plan_field(plan, "threads/cols="), op != ReduceOp::argmin ? c.one_round : c.widest) << plan;
    });
}

// ---- outer-flat: outer reductions of rows of whole vectors lying back to back -------------------

// Every dtype x non-arg op over dim 0 of contiguous matrices whose rows are 1, 2 and 8 16-byte
// vectors (the plan is checked to take outer-flat), one-block and many-block grids, against the
// reference; each call twice (the second finds the workspace the first left), the output
// poisoned before each call and compared bit for bit between the calls.
template <ReduceOp Op, class T>
void outer_flat_case(Rng& rng, std::int64_t rows, std::int64_t cols) {
  Layout in;
  in.shape = {rows, cols};
  in.strides = {cols, 1};
  in.storage = rows * cols;
  std::vector<T> storage(static_cast<std::size_t>(in.storage));
  const CounterRng values = rng.counter();
  for (std::size_t i = 0; i < storage.size(); ++i) storage[i] = random_value<T>(Op, values, i, false);
  const std::vector<int> axes{0};
  const Device dev = Device::cuda(current_device());
  const DeviceBuffer d_in = upload_bytes(storage.data(), storage.size() * sizeof(T));
  const TensorView view = in.view(d_in.get(), dtype_v<T>, dev);
  const ReduceOutput shape = cuda::reduce_output_shape(Op, view, axes, false);
  Layout ol;
  ol.shape = {cols};
  ol.strides = {1};
  ol.storage = cols;
  OutBuffer out(ol, dtype_size(shape.dtype));
  const DeviceBuffer d_out = upload_bytes(out.bytes.data(), out.bytes.size());
  const std::string plan = cuda::describe_reduce(Op, view, axes, false, out.view(shape.dtype, d_out.get(), dev));
  SCOPED_TRACE(std::string(op_name(Op)) + " " + dtype_name(dtype_v<T>) + " " + std::to_string(rows) + " x " +
               std::to_string(cols) + ": " + plan);
  ASSERT_NE(plan.find("kernel=outer-flat"), std::string::npos);
  const std::vector<RefAcc> ref = reference(storage.data(), in, 1u);
  std::vector<unsigned char> first;
  for (int call = 0; call < 2; ++call) {
    std::fill(out.bytes.begin(), out.bytes.end(), static_cast<unsigned char>(0xFF));
    FOLDKIT_CUDA_CHECK(cudaMemset(d_out.get(), 0xFF, out.bytes.size()));
    cuda::reduce(Op, view, axes, false, out.view(shape.dtype, d_out.get(), dev));
    download_bytes(out.bytes.data(), d_out, out.bytes.size());
    ASSERT_TRUE(out.untouched_outside(cols));
    for (std::int64_t o = 0; o < cols; ++o)
      ASSERT_TRUE((check_element<Op, T>(ref[static_cast<std::size_t>(o)], out, nullptr, o, storage, in, {}))) << "column " << o;
    if (call == 0) first = out.bytes;
    else ASSERT_TRUE(first == out.bytes) << "the second call gave other bits";
  }
}

TEST_F(CudaTensorReduce, OuterFlatMatchesTheReference) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (DType dt : kAllDTypes)
    visit_dtype(dt, [&](auto tag) {
      using T = decltype(tag);
      constexpr std::int64_t V = 16 / sizeof(T);
      for_each_reduce_op([&](auto op) {
        constexpr ReduceOp Op = decltype(op)::value;
        if constexpr (Op != ReduceOp::argmin && Op != ReduceOp::argmax) {
          // Products stay within range over at most ~3000 factors of 1 +- 2/128.
          const std::vector<std::int64_t> rows = Op == ReduceOp::prod ? std::vector<std::int64_t>{3, 2999}
                                                                      : std::vector<std::int64_t>{3, 4099, 40001};
          for (std::int64_t r : rows)
            for (std::int64_t vpr : {1, 2, 8}) outer_flat_case<Op, T>(rng, r, V * vpr);
        }
      });
    });
}

// The way foldkit-bench calls it: on a non-blocking stream, the output poisoned by
// cudaMemsetAsync just before each call, calls back to back over rotating inputs with no
// synchronisation between them, the convenient workspace shared with other reductions on that
// stream first. Values k/4 (k = 0..8): every column sum is exact in f32, so each output is
// compared exactly. (The bench's (32768, 32) sum over dim 0 read a quarter of its column sums
// at cd3fcc8 while OuterFlatMatchesTheReference passed.)
TEST_F(CudaTensorReduce, OuterFlatBackToBackOnAStream) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const Device cu = Device::cuda(current_device());
  Stream stream;
  for (const std::int64_t rows : {std::int64_t{32768}, std::int64_t{40001}, std::int64_t{4096}}) {
    const std::int64_t cols = 32, copies = 4, calls = 16;
    const std::size_t numel = static_cast<std::size_t>(rows * cols);
    std::vector<float> host(numel * copies);
    const CounterRng values = rng.counter();
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(values.in_range<std::int64_t>(i, 0, 8)) / 4.0f;
    DeviceBuffer d_in(host.size() * sizeof(float));
    DeviceBuffer d_out(static_cast<std::size_t>(std::max<std::int64_t>(calls * cols, 1024)) * sizeof(float));
    FOLDKIT_CUDA_CHECK(cudaMemcpyAsync(d_in.get(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
    auto input = [&](std::int64_t k) {
      return TensorView::contiguous(static_cast<const float*>(d_in.get()) + (k % copies) * numel, DType::f32, {rows, cols}, cu);
    };
    auto output = [&](std::int64_t k) {
      return TensorView::contiguous(static_cast<float*>(d_out.get()) + k * cols, DType::f32, {cols}, cu);
    };
    SCOPED_TRACE(std::to_string(rows) + " x 32: " + cuda::describe_reduce(ReduceOp::sum, input(0), {0}, false, output(0)));
    // Other users of the stream's workspace first: a sum over dim 0 of 1024 columns and the
    // full-array sum (their outputs in the first calls' slots, poisoned again below).
    cuda::reduce(ReduceOp::sum, TensorView::contiguous(d_in.get(), DType::f32, {rows * cols / 1024, 1024}, cu), {0}, false,
                 TensorView::contiguous(d_out.get(), DType::f32, {1024}, cu), stream);
    cuda::reduce(ReduceOp::sum, input(1), {}, false, TensorView::contiguous(d_out.get(), DType::f32, {}, cu), stream);
    for (std::int64_t k = 0; k < calls; ++k) {
      FOLDKIT_CUDA_CHECK(cudaMemsetAsync(static_cast<float*>(d_out.get()) + k * cols, 0xFF, cols * sizeof(float), stream));
      cuda::reduce(ReduceOp::sum, input(k), {0}, false, output(k), stream);
    }
    std::vector<float> got(static_cast<std::size_t>(calls * cols));
    FOLDKIT_CUDA_CHECK(cudaMemcpyAsync(got.data(), d_out.get(), got.size() * sizeof(float), cudaMemcpyDeviceToHost, stream));
    FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::int64_t k = 0; k < calls; ++k)
      for (std::int64_t c = 0; c < cols; ++c) {
        double want = 0;
        const float* x = host.data() + (k % copies) * numel;
        for (std::int64_t r = 0; r < rows; ++r) want += x[r * cols + c];
        ASSERT_EQ(static_cast<double>(got[static_cast<std::size_t>(k * cols + c)]), want) << "call " << k << ", column " << c;
      }
  }
}

// The workspace contract (tensor_reduce.hpp): a call leaves its workspace as it found it, zeroed,
// for the next call of any family. One explicit workspace, zeroed once, through the shapes and
// ops foldkit-bench axes runs before its (32768, 32) sum over dim 0 (the matrices of 2^26, the
// 3-D sums, bf16 rows), every word checked after every call; then that sum itself.
TEST_F(CudaTensorReduce, BenchShapesLeaveTheWorkspaceZeroed) {
  const Device cu = Device::cuda(current_device());
  Stream stream;
  const std::int64_t n = std::min<std::int64_t>(std::int64_t{1} << 26, max_n());
  std::vector<float> host(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(static_cast<std::uint32_t>(i * 2654435761u) >> 29) / 4.0f;
  DeviceBuffer d_in(host.size() * sizeof(float));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(d_in.get(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  struct Call {
    ReduceOp op;
    DType dtype;
    std::vector<std::int64_t> shape;
    std::vector<int> axes;
  };
  std::vector<Call> calls;
  for (std::int64_t rows : {n / 4, n / 16, n / 64, n / 256, n / 1024, n / 4096, n / 16384, n / 262144, std::int64_t{16}})
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::argmax})
      for (int axis : {1, 0})
        if (rows > 0 && n / rows > 0) calls.push_back({op, DType::f32, {rows, n / rows}, {axis}});
  for (const auto& s3 : {std::vector<std::int64_t>{64, 4096, 256}, {256, 256, 1024}, {4096, 64, 1024}}) {
    if (s3[0] * s3[1] * s3[2] > n) continue;
    calls.push_back({ReduceOp::sum, DType::f32, s3, {1}});
    calls.push_back({ReduceOp::sum, DType::f32, s3, {0, 2}});
  }
  calls.push_back({ReduceOp::sum, DType::bf16, {n / 8, 4}, {1}});
  calls.push_back({ReduceOp::sum, DType::bf16, {n / 32, 16}, {1}});
  calls.push_back({ReduceOp::sum, DType::f32, {std::min<std::int64_t>(7840000, n / 4), 4}, {-1}});
  calls.push_back({ReduceOp::sum, DType::f32, {std::min<std::int64_t>(1000000, n / 2), 2}, {-1}});
  if (32768 * 32 <= n) calls.push_back({ReduceOp::sum, DType::f32, {32768, 32}, {0}});  // FOLDKIT_TEST_MAX_N may cap n
  // The workspace, the outputs and argmax's values, each sized for the largest call (under
  // FOLDKIT_TEST_MAX_N the shape (1, n) over dim 0 writes n outputs: memcheck found 2 bytes an
  // element too few).
  std::size_t ws_bytes = 16, out_bytes = 16, vals_bytes = 16;
  for (const Call& c : calls) {
    const TensorView in = TensorView::contiguous(d_in.get(), c.dtype, c.shape.data(), static_cast<int>(c.shape.size()), cu);
    ws_bytes = std::max(ws_bytes, cuda::tensor_reduce_workspace_bytes(c.op, in, c.axes, false));
    const ReduceOutput o = cuda::reduce_output_shape(c.op, in, c.axes, false);
    out_bytes = std::max(out_bytes, static_cast<std::size_t>(o.numel()) * dtype_size(o.dtype));
    vals_bytes = std::max(vals_bytes, static_cast<std::size_t>(o.numel()) * dtype_size(c.dtype));
  }
  DeviceBuffer ws(ws_bytes), out(out_bytes), vals(vals_bytes);
  FOLDKIT_CUDA_CHECK(cudaMemset(ws.get(), 0, ws_bytes));
  std::vector<unsigned long long> words(ws_bytes / 8);
  for (const Call& c : calls) {
    const TensorView in = TensorView::contiguous(d_in.get(), c.dtype, c.shape.data(), static_cast<int>(c.shape.size()), cu);
    const ReduceOutput o = cuda::reduce_output_shape(c.op, in, c.axes, false);
    const TensorView ov = TensorView::contiguous(out.get(), o.dtype, o.shape, o.rank, cu);
    std::string what = std::string(op_name(c.op)) + " " + dtype_name(c.dtype) + " [";
    for (std::int64_t d : c.shape) what += std::to_string(d) + " ";
    what += "] axes " + std::to_string(c.axes[0]) + (c.axes.size() > 1 ? ",.." : "") + ": " + cuda::describe_reduce(c.op, in, c.axes, false, ov);
    const cuda::Workspace w{ws.get(), ws_bytes};
    if (c.op == ReduceOp::argmax)
      cuda::arg_reduce(c.op, in, c.axes, false, ov, TensorView::contiguous(vals.get(), c.dtype, o.shape, o.rank, cu), w, stream);
    else
      cuda::reduce(c.op, in, c.axes, false, ov, w, stream);
    FOLDKIT_CUDA_CHECK(cudaMemcpyAsync(words.data(), ws.get(), words.size() * 8, cudaMemcpyDeviceToHost, stream));
    FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    const auto dirty = std::find_if(words.begin(), words.end(), [](unsigned long long v) { return v != 0; });
    ASSERT_TRUE(dirty == words.end()) << what << " left word " << (dirty - words.begin()) << " of the workspace at 0x"
                                      << std::hex << *dirty;
    if (c.shape == std::vector<std::int64_t>{32768, 32}) {
      std::vector<float> got(32);
      FOLDKIT_CUDA_CHECK(cudaMemcpy(got.data(), out.get(), 32 * sizeof(float), cudaMemcpyDeviceToHost));
      for (int col = 0; col < 32; ++col) {
        double want = 0;
        for (std::int64_t r = 0; r < 32768; ++r) want += host[static_cast<std::size_t>(r * 32 + col)];
        ASSERT_EQ(static_cast<double>(got[static_cast<std::size_t>(col)]), want) << what << ", column " << col;
      }
    }
  }
}

// ---- the same bits on every call ---------------------------------------------------------------

TEST_F(CudaTensorReduce, SameBitsOnEveryCall) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const int dev = current_device();
  const std::int64_t a = 512, b = 1536;
  std::vector<float> host(static_cast<std::size_t>(a * b));
  const CounterRng r = rng.counter();
  for (std::size_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<float>(r.unit(i) * 2 - 1) * (i % 97 == 0 ? 4096.0f : 1.0f);
  const DeviceBuffer d = upload_bytes(host.data(), host.size() * sizeof(float));
  const TensorView rm = TensorView::contiguous(d.get(), DType::f32, {a, b}, Device::cuda(dev));
  const TensorView tr = TensorView::strided(d.get(), DType::f32, {b, a}, {1, b}, Device::cuda(dev));
  const TensorView r3 = TensorView::contiguous(d.get(), DType::f32, {8, 64, 1536}, Device::cuda(dev));
  struct Call { TensorView in; std::vector<int> axes; ReduceOp op; };
  const std::vector<Call> calls = {
      {rm, {-1}, ReduceOp::sum},   {rm, {0}, ReduceOp::sum},     {tr, {}, ReduceOp::sum},
      {tr, {0}, ReduceOp::mean},   {r3, {0, 2}, ReduceOp::mean}, {r3, {1}, ReduceOp::sum},
      {tr, {-1}, ReduceOp::argmax}, {rm, {}, ReduceOp::argmin}};
  for (const Call& c : calls) {
    const ReduceOutput shape = cuda::reduce_output_shape(c.op, c.in, c.axes, false);
    const std::size_t bytes = static_cast<std::size_t>(shape.numel()) * dtype_size(shape.dtype);
    auto run = [&] {
      DeviceBuffer out(bytes);
      FOLDKIT_CUDA_CHECK(cudaMemset(out.get(), 0xFF, bytes));
      cuda::reduce(c.op, c.in, c.axes, false, TensorView::contiguous(out.get(), shape.dtype, shape.shape, shape.rank, Device::cuda(dev)));
      std::vector<unsigned char> h(bytes);
      download_bytes(h.data(), out, bytes);
      return h;
    };
    const auto one = run();
    EXPECT_TRUE(run() == one) << op_name(c.op) << ", plan " << detail::describe_plan(detail::plan_reduce(c.in, c.axes, false));
    EXPECT_TRUE(run() == one) << op_name(c.op) << " (third call)";
  }
}

// ---- bad arguments: the right Errc, nothing written ---------------------------------------------

TEST_F(CudaTensorReduce, BadArgumentsThrowAndWriteNothing) {
  const int dev = current_device();
  const Device cu = Device::cuda(dev);
  std::vector<float> host(64, 1.0f);
  const DeviceBuffer d_in = upload_bytes(host.data(), host.size() * sizeof(float));
  DeviceBuffer d_out(1024);
  FOLDKIT_CUDA_CHECK(cudaMemset(d_out.get(), 0xFF, 1024));
  void* o = d_out.get();
  auto* ob = static_cast<unsigned char*>(o);
  const TensorView in = TensorView::contiguous(d_in.get(), DType::f32, {4, 16}, cu);
  const TensorView out4 = TensorView::contiguous(o, DType::f32, {4}, cu);
  std::vector<unsigned char> host_out(1024, 0xFF);
  auto expect = [&](Errc want, auto&& f, const char* what) {
    EXPECT_TRUE(throws_errc(want, f)) << what;
    FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned char> now(1024);
    download_bytes(now.data(), d_out, 1024);
    EXPECT_TRUE(std::all_of(now.begin(), now.end(), [](unsigned char c) { return c == 0xFF; })) << what << " wrote";
    EXPECT_TRUE(std::all_of(host_out.begin(), host_out.end(), [](unsigned char c) { return c == 0xFF; })) << what << " wrote host memory";
  };
  // Memory space.
  expect(Errc::wrong_memory, [&] { cuda::reduce(ReduceOp::sum, TensorView::contiguous(host.data(), DType::f32, {4, 16}), {1}, false, out4); }, "host input view");
  expect(Errc::wrong_memory, [&] { cuda::reduce(ReduceOp::sum, TensorView::contiguous(host.data(), DType::f32, {4, 16}, cu), {1}, false, out4); }, "cuda view of host memory");
  expect(Errc::wrong_memory, [&] { cuda::reduce(ReduceOp::sum, in, {1}, false, TensorView::contiguous(host_out.data(), DType::f32, {4})); }, "host output view");
  expect(Errc::wrong_memory, [&] { cuda::reduce(ReduceOp::sum, in, {1}, false, TensorView::contiguous(host_out.data(), DType::f32, {4}, cu)); }, "cuda view of host output memory");
  expect(Errc::wrong_memory, [&] { cuda::reduce(ReduceOp::sum, TensorView::contiguous(d_in.get(), DType::f32, {4, 16}, Device::cuda(dev + 1)), {1}, false, out4); }, "view of another device");
  expect(Errc::wrong_memory, [&] { cuda::arg_reduce(ReduceOp::argmax, in, {1}, false, TensorView::contiguous(o, DType::i64, {4}, cu), TensorView::contiguous(host_out.data(), DType::f32, {4})); }, "host values view");
  // Shapes, dtypes, strides, overlap, axes.
  expect(Errc::invalid_argument, [&] { cuda::reduce(ReduceOp::sum, in, {1}, false, TensorView::contiguous(o, DType::f32, {16}, cu)); }, "wrong output shape");
  expect(Errc::invalid_argument, [&] { cuda::reduce(ReduceOp::sum, in, {1}, true, out4); }, "shape without the kept dim");
  expect(Errc::invalid_argument, [&] { cuda::reduce(ReduceOp::sum, in, {1}, false, TensorView::contiguous(o, DType::f64, {4}, cu)); }, "wrong dtype");
  expect(Errc::invalid_argument, [&] { cuda::reduce(ReduceOp::sum, in, {2}, false, out4); }, "axis out of range");
  expect(Errc::invalid_argument, [&] { cuda::reduce(ReduceOp::sum, in, {1}, false, TensorView::strided(o, DType::f32, {4}, {0}, cu)); }, "zero output stride");
  expect(Errc::invalid_argument, [&] { cuda::reduce(ReduceOp::sum, in, {1}, false, TensorView::contiguous(static_cast<float*>(d_in.get()) + 60, DType::f32, {4}, cu)); }, "output overlaps input");
  expect(Errc::invalid_argument, [&] { cuda::reduce(ReduceOp::argmax, in, {0, 1}, false, TensorView::contiguous(o, DType::i64, {}, cu)); }, "argmax with two axes");
  expect(Errc::invalid_argument, [&] { cuda::arg_reduce(ReduceOp::max, in, {1}, false, TensorView::contiguous(o, DType::i64, {4}, cu), TensorView::contiguous(ob + 512, DType::f32, {4}, cu)); }, "arg_reduce of max");
  expect(Errc::invalid_argument, [&] { cuda::arg_reduce(ReduceOp::argmax, in, {1}, false, TensorView::contiguous(o, DType::i64, {4}, cu), TensorView::contiguous(ob + 8, DType::f32, {4}, cu)); }, "values overlap indices");
  // Empty reduced extents without identity.
  expect(Errc::empty_input, [&] { cuda::reduce(ReduceOp::max, TensorView::contiguous(d_in.get(), DType::f32, {4, 0}, cu), {1}, false, out4); }, "max over an empty extent");
  expect(Errc::empty_input, [&] { cuda::reduce(ReduceOp::argmin, TensorView::contiguous(d_in.get(), DType::f32, {0, 4}, cu), {}, false, TensorView::contiguous(o, DType::i64, {}, cu)); }, "argmin of an empty tensor");
  expect(Errc::unsupported, [&] { cuda::reduce(static_cast<ReduceOp>(42), in, {1}, false, out4); }, "unknown op");
}

TEST_F(CudaTensorReduce, EmptyExtentsForOpsWithIdentity) {
  const Device cu = Device::cuda(current_device());
  const DeviceBuffer d_in(64);
  DeviceBuffer d_out(3 * sizeof(float));
  float out[3];
  auto run = [&](ReduceOp op, std::initializer_list<std::int64_t> shape, int axis) {
    FOLDKIT_CUDA_CHECK(cudaMemset(d_out.get(), 0xFF, sizeof out));
    cuda::reduce(op, TensorView::contiguous(d_in.get(), DType::f32, shape, cu), {axis}, false, TensorView::contiguous(d_out.get(), DType::f32, {3}, cu));
    download_bytes(out, d_out, sizeof out);
  };
  run(ReduceOp::prod, {3, 0}, 1);
  for (float v : out) EXPECT_EQ(v, 1.0f);
  run(ReduceOp::sum, {3, 0}, 1);
  for (float v : out) EXPECT_TRUE(bits_equal(v, 0.0f));
  run(ReduceOp::mean, {0, 3}, 0);
  for (float v : out) EXPECT_TRUE(is_nan_result(v));
  // An empty output: nothing to launch, even for max (the reduced extent, 4, is not empty); a
  // null data pointer is fine for views without elements.
  EXPECT_NO_THROW(cuda::reduce(ReduceOp::max, TensorView::contiguous(nullptr, DType::f32, {0, 4}, cu), {1}, false, TensorView::contiguous(nullptr, DType::f32, {0}, cu)));
}

// ---- stream order: work on a non-default stream, only that stream synchronised -----------------

TEST_F(CudaTensorReduce, RunsInStreamOrderOnTheGivenStream) {
  const Device cu = Device::cuda(current_device());
  Stream stream;
  const std::int64_t rows = 1000, cols = 257;
  std::vector<std::int32_t> host(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<std::int32_t>((i * 7919u) % 1000) - 500;
  DeviceBuffer d_in(host.size() * sizeof(std::int32_t));
  DeviceBuffer d_sum(cols * sizeof(std::int64_t)), d_idx(rows * sizeof(std::int64_t)), d_val(rows * sizeof(std::int32_t));
  // Everything on `stream`: the upload, the poison, both reductions, the copies back.
  FOLDKIT_CUDA_CHECK(cudaMemcpyAsync(d_in.get(), host.data(), host.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice, stream));
  FOLDKIT_CUDA_CHECK(cudaMemsetAsync(d_sum.get(), 0xFF, d_sum.bytes(), stream));
  FOLDKIT_CUDA_CHECK(cudaMemsetAsync(d_idx.get(), 0xFF, d_idx.bytes(), stream));
  const TensorView in = TensorView::contiguous(d_in.get(), DType::i32, {rows, cols}, cu);
  cuda::reduce(ReduceOp::sum, in, {0}, false, TensorView::contiguous(d_sum.get(), DType::i64, {cols}, cu), stream);
  cuda::arg_reduce(ReduceOp::argmax, in, {1}, true, TensorView::contiguous(d_idx.get(), DType::i64, {rows, 1}, cu),
                   TensorView::contiguous(d_val.get(), DType::i32, {rows, 1}, cu), stream);
  std::vector<std::int64_t> sums(static_cast<std::size_t>(cols)), idx(static_cast<std::size_t>(rows));
  std::vector<std::int32_t> vals(static_cast<std::size_t>(rows));
  FOLDKIT_CUDA_CHECK(cudaMemcpyAsync(sums.data(), d_sum.get(), d_sum.bytes(), cudaMemcpyDeviceToHost, stream));
  FOLDKIT_CUDA_CHECK(cudaMemcpyAsync(idx.data(), d_idx.get(), d_idx.bytes(), cudaMemcpyDeviceToHost, stream));
  FOLDKIT_CUDA_CHECK(cudaMemcpyAsync(vals.data(), d_val.get(), d_val.bytes(), cudaMemcpyDeviceToHost, stream));
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (std::int64_t c = 0; c < cols; ++c) {
    std::int64_t want = 0;
    for (std::int64_t r = 0; r < rows; ++r) want += host[static_cast<std::size_t>(r * cols + c)];
    ASSERT_EQ(sums[static_cast<std::size_t>(c)], want) << "column " << c;
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto* row = host.data() + r * cols;
    const std::int64_t want = std::max_element(row, row + cols) - row;  // the first maximum
    ASSERT_EQ(idx[static_cast<std::size_t>(r)], want) << "row " << r;
    ASSERT_EQ(vals[static_cast<std::size_t>(r)], row[want]) << "row " << r;
  }
}

}  // namespace
}  // namespace foldkit::test
