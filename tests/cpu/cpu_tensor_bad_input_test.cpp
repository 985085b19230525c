// Bad arguments to foldkit::cpu::reduce / arg_reduce / reduce_output_shape: every class of issue #22
// (tests/common/tensor_random_cases.hpp's bad_calls() table, shared with the CUDA backend's test:
// rank > 8, axes out of range or repeated, output shape / dtype / strides that do not match,
// outputs overlapping the input or themselves or each other, negative or overflowing strides,
// null data, unknown op / dtype / device kind, empty reduced extents) plus the CPU backend's
// memory-space rule (views of CUDA devices). Each call must throw the stated Errc and leave the
// input and the poisoned output buffer byte for byte as they were.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/tensor_random_cases.hpp"
#include "foldkit/tensor_reduce.hpp"
#include "support/random_arrays.hpp"
#include "support/result_checks.hpp"

namespace foldkit::test {
namespace {

using Bytes = std::vector<unsigned char, AlignedAllocator<unsigned char>>;

void run_cpu(const BadCall& c) {
  if (c.arg) cpu::arg_reduce(c.op, c.in, c.axes, c.keepdims, c.out, c.values);
  else cpu::reduce(c.op, c.in, c.axes, c.keepdims, c.out);
}

TEST(CpuTensorBadInput, EveryClassThrowsAndWritesNothing) {
  Bytes in(kBadInBytes), out(kBadOutBytes, 0xFF);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(mix64(i) >> 56);
  const Bytes in0 = in, out0 = out;
  std::vector<BadCall> calls = bad_calls(in.data(), out.data(), Device::host());

  // The CPU backend's memory space: host views only (Errc::wrong_memory), also without elements.
  const Device gpu = Device::cuda(0);
  auto* x0 = reinterpret_cast<float*>(in.data()) + 256;
  const TensorView x = TensorView::contiguous(x0, DType::f32, {4, 16});
  auto add = [&](const char* what, TensorView i, TensorView o, bool arg = false, TensorView values = {}) {
    BadCall c;
    c.what = what;
    c.want = Errc::wrong_memory;
    c.op = arg ? ReduceOp::argmax : ReduceOp::sum;
    c.in = i;
    c.axes = {1};
    c.out = o;
    c.arg = arg;
    c.values = values;
    calls.push_back(c);
  };
  add("input view of a CUDA device", TensorView::contiguous(x0, DType::f32, {4, 16}, gpu), TensorView::contiguous(out.data(), DType::f32, {4}));
  add("empty input view of a CUDA device", TensorView::contiguous(nullptr, DType::f32, {4, 0}, gpu), TensorView::contiguous(out.data(), DType::f32, {4}));
  add("out view of a CUDA device", x, TensorView::contiguous(out.data(), DType::f32, {4}, gpu));
  add("indices view of a CUDA device", x, TensorView::contiguous(out.data(), DType::i64, {4}, gpu), true,
      TensorView::contiguous(out.data() + 512, DType::f32, {4}));
  add("values view of a CUDA device", x, TensorView::contiguous(out.data(), DType::i64, {4}), true,
      TensorView::contiguous(out.data() + 512, DType::f32, {4}, gpu));

  int checked = 0;
  for (const BadCall& c : calls) {
    SCOPED_TRACE(bad_call_text(c));
    EXPECT_TRUE(throws_errc(c.want, [&] { run_cpu(c); }));
    EXPECT_TRUE(in == in0) << "the input buffer changed";
    EXPECT_TRUE(out == out0) << "the output buffer was written";
    if (c.input_only) {
      EXPECT_TRUE(throws_errc(c.want, [&] { (void)cpu::reduce_output_shape(c.op, c.in, c.axes, c.keepdims); }))
          << "reduce_output_shape";
    }
    in = in0;
    out = out0;
    ++checked;
  }
  EXPECT_GE(checked, 90);
}

// The same views with valid arguments do run (so the table's failures are the arguments' fault).
TEST(CpuTensorBadInput, TheTablesBaseCallIsValid) {
  Bytes in(kBadInBytes), out(kBadOutBytes, 0xFF);
  auto* x0 = reinterpret_cast<float*>(in.data()) + 256;
  for (int i = 0; i < 64; ++i) x0[i] = static_cast<float>(i % 7);
  const TensorView x = TensorView::contiguous(x0, DType::f32, {4, 16});
  cpu::reduce(ReduceOp::sum, x, {1}, false, TensorView::contiguous(out.data(), DType::f32, {4}));
  float s[4];
  std::memcpy(s, out.data(), sizeof s);
  for (int r = 0; r < 4; ++r) {
    float want = 0;
    for (int j = 0; j < 16; ++j) want += static_cast<float>((r * 16 + j) % 7);
    EXPECT_EQ(s[r], want) << "row " << r;
  }
  cpu::arg_reduce(ReduceOp::argmax, x, {1}, false, TensorView::contiguous(out.data(), DType::i64, {4}),
                  TensorView::contiguous(out.data() + 512, DType::f32, {4}));
}

}  // namespace
}  // namespace foldkit::test
