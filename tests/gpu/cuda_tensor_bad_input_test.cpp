// Bad arguments to foldkit::cuda::reduce / arg_reduce / reduce_output_shape: every class of issue #22
// (tests/common/tensor_random_cases.hpp's bad_calls() table over device buffers, shared with the
// CPU backend's test: rank > 8, axes out of range or repeated, output shape / dtype / strides
// that do not match, outputs overlapping the input or themselves or each other, negative or
// overflowing strides, null data, unknown op / dtype / device kind, empty reduced extents) plus
// the memory-space rules: host views, CUDA views of host memory, views of another device, and
// the CPU backend handed device memory. Each call must throw the stated Errc, enqueue nothing
// and leave every buffer (device input and poisoned output, host input and output) byte for byte
// as it was, checked after a device synchronisation.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "common/tensor_random_cases.hpp"
#include "foldkit/cuda/tensor_reduce.hpp"
#include "foldkit/tensor_reduce.hpp"
#include "support/cuda_backend.hpp"
#include "support/random_arrays.hpp"
#include "support/result_checks.hpp"

namespace foldkit::test {
namespace {

using CudaTensorBadInput = CudaTest;
using Bytes = std::vector<unsigned char, AlignedAllocator<unsigned char>>;

struct Call {
  BadCall c;
  bool on_cpu = false;  // run through the CPU backend
};

void run(const Call& call) {
  const BadCall& c = call.c;
  if (call.on_cpu) {
    if (c.arg) cpu::arg_reduce(c.op, c.in, c.axes, c.keepdims, c.out, c.values);
    else cpu::reduce(c.op, c.in, c.axes, c.keepdims, c.out);
  } else {
    if (c.arg) cuda::arg_reduce(c.op, c.in, c.axes, c.keepdims, c.out, c.values);
    else cuda::reduce(c.op, c.in, c.axes, c.keepdims, c.out);
  }
}

TEST_F(CudaTensorBadInput, EveryClassThrowsAndWritesNothing) {
  const int dev = current_device();
  const Device cu = Device::cuda(dev);
  Bytes pattern(kBadInBytes);
  for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<unsigned char>(mix64(i) >> 56);
  const Bytes poison(kBadOutBytes, 0xFF);
  DeviceBuffer d_in(kBadInBytes), d_out(kBadOutBytes);
  FOLDKIT_CUDA_CHECK(cudaMemcpy(d_in.get(), pattern.data(), kBadInBytes, cudaMemcpyHostToDevice));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(d_out.get(), poison.data(), kBadOutBytes, cudaMemcpyHostToDevice));
  Bytes h_in = pattern, h_out = poison;  // host memory handed to the CUDA backend

  std::vector<Call> calls;
  for (const BadCall& c : bad_calls(d_in.get(), d_out.get(), cu)) calls.push_back(Call{c, false});

  // Memory spaces (Errc::wrong_memory).
  auto* dx = static_cast<float*>(d_in.get()) + 256;
  auto* hx = reinterpret_cast<float*>(h_in.data()) + 256;
  auto* dob = static_cast<unsigned char*>(d_out.get());
  unsigned char* hob = h_out.data();
  const TensorView x = TensorView::contiguous(dx, DType::f32, {4, 16}, cu);
  const TensorView out4 = TensorView::contiguous(dob, DType::f32, {4}, cu);
  const TensorView idx4 = TensorView::contiguous(dob, DType::i64, {4}, cu);
  const TensorView vals4 = TensorView::contiguous(dob + 512, DType::f32, {4}, cu);
  auto add = [&](const char* what, bool on_cpu, TensorView in, TensorView out, bool arg = false, TensorView values = {}) {
    BadCall c;
    c.what = what;
    c.want = Errc::wrong_memory;
    c.op = arg ? ReduceOp::argmax : ReduceOp::sum;
    c.in = in;
    c.axes = {1};
    c.out = out;
    c.arg = arg;
    c.values = values;
    calls.push_back(Call{c, on_cpu});
  };
  const Device host = Device::host();
  add("host view of device input memory", false, TensorView::contiguous(dx, DType::f32, {4, 16}), out4);
  add("host view of host input memory", false, TensorView::contiguous(hx, DType::f32, {4, 16}), out4);
  add("CUDA view of host (pageable) input memory", false, TensorView::contiguous(hx, DType::f32, {4, 16}, cu), out4);
  add("empty host view as input", false, TensorView::contiguous(nullptr, DType::f32, {4, 0}), out4);
  add("host view of device output memory", false, x, TensorView::contiguous(dob, DType::f32, {4}));
  add("host view of host output memory", false, x, TensorView::contiguous(hob, DType::f32, {4}));
  add("CUDA view of host (pageable) output memory", false, x, TensorView::contiguous(hob, DType::f32, {4}, cu));
  add("CUDA view of host indices memory", false, x, TensorView::contiguous(hob, DType::i64, {4}, cu), true, vals4);
  add("CUDA view of host values memory", false, x, idx4, true, TensorView::contiguous(hob + 512, DType::f32, {4}, cu));
  add("host view of values", false, x, idx4, true, TensorView::contiguous(dob + 512, DType::f32, {4}));
  add("input view of device id + 1", false, TensorView::contiguous(dx, DType::f32, {4, 16}, Device::cuda(dev + 1)), out4);
  add("output view of device id + 1", false, x, TensorView::contiguous(dob, DType::f32, {4}, Device::cuda(dev + 1)));
  add("input view of device id -1", false, TensorView::contiguous(dx, DType::f32, {4, 16}, Device::cuda(-1)), out4);
  add("CPU backend: host view of device input memory", true, TensorView::contiguous(dx, DType::f32, {4, 16}, host),
      TensorView::contiguous(hob, DType::f32, {4}, host));
  add("CPU backend: host view of device output memory", true, TensorView::contiguous(hx, DType::f32, {4, 16}, host),
      TensorView::contiguous(dob, DType::f32, {4}, host));
  add("CPU backend: host view of device values memory", true, TensorView::contiguous(hx, DType::f32, {4, 16}, host),
      TensorView::contiguous(hob, DType::i64, {4}, host), true, TensorView::contiguous(dob + 512, DType::f32, {4}, host));
  add("CPU backend: CUDA input view", true, x, TensorView::contiguous(hob, DType::f32, {4}, host));

  int checked = 0;
  for (const Call& call : calls) {
    SCOPED_TRACE(std::string(call.on_cpu ? "[cpu backend] " : "") + bad_call_text(call.c));
    EXPECT_TRUE(throws_errc(call.c.want, [&] { run(call); }));
    FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
    FOLDKIT_CUDA_CHECK(cudaGetLastError());
    Bytes now_in(kBadInBytes), now_out(kBadOutBytes);
    FOLDKIT_CUDA_CHECK(cudaMemcpy(now_in.data(), d_in.get(), kBadInBytes, cudaMemcpyDeviceToHost));
    FOLDKIT_CUDA_CHECK(cudaMemcpy(now_out.data(), d_out.get(), kBadOutBytes, cudaMemcpyDeviceToHost));
    EXPECT_TRUE(now_in == pattern) << "the device input buffer changed";
    EXPECT_TRUE(now_out == poison) << "the device output buffer was written";
    EXPECT_TRUE(h_in == pattern) << "the host input buffer changed";
    EXPECT_TRUE(h_out == poison) << "the host output buffer was written";
    if (call.c.input_only && !call.on_cpu) {
      EXPECT_TRUE(throws_errc(call.c.want, [&] { (void)cuda::reduce_output_shape(call.c.op, call.c.in, call.c.axes, call.c.keepdims); }))
          << "reduce_output_shape";
    }
    if (now_in != pattern) FOLDKIT_CUDA_CHECK(cudaMemcpy(d_in.get(), pattern.data(), kBadInBytes, cudaMemcpyHostToDevice));
    if (now_out != poison) FOLDKIT_CUDA_CHECK(cudaMemcpy(d_out.get(), poison.data(), kBadOutBytes, cudaMemcpyHostToDevice));
    h_in = pattern;
    h_out = poison;
    ++checked;
  }
  EXPECT_GE(checked, 100);
}

// The table's base views with valid arguments do run on the device (so the table's failures are
// the arguments' fault), and a CUDA view of host memory without elements is not probed.
TEST_F(CudaTensorBadInput, TheTablesBaseCallIsValid) {
  const Device cu = Device::cuda(current_device());
  std::vector<float> host(64);
  for (int i = 0; i < 64; ++i) host[static_cast<std::size_t>(i)] = static_cast<float>(i % 7);
  DeviceBuffer d_in(kBadInBytes), d_out(kBadOutBytes);
  auto* dx = static_cast<float*>(d_in.get()) + 256;
  FOLDKIT_CUDA_CHECK(cudaMemcpy(dx, host.data(), 64 * sizeof(float), cudaMemcpyHostToDevice));
  const TensorView x = TensorView::contiguous(dx, DType::f32, {4, 16}, cu);
  cuda::reduce(ReduceOp::sum, x, {1}, false, TensorView::contiguous(d_out.get(), DType::f32, {4}, cu));
  float s[4];
  FOLDKIT_CUDA_CHECK(cudaMemcpy(s, d_out.get(), sizeof s, cudaMemcpyDeviceToHost));
  for (int r = 0; r < 4; ++r) {
    float want = 0;
    for (int j = 0; j < 16; ++j) want += static_cast<float>((r * 16 + j) % 7);
    EXPECT_EQ(s[r], want) << "row " << r;
  }
  auto* ob = static_cast<unsigned char*>(d_out.get());
  cuda::arg_reduce(ReduceOp::argmax, x, {1}, false, TensorView::contiguous(ob, DType::i64, {4}, cu),
                   TensorView::contiguous(ob + 512, DType::f32, {4}, cu));
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  float h;
  EXPECT_NO_THROW(cuda::reduce(ReduceOp::sum, TensorView::contiguous(&h, DType::f32, {0, 4}, cu), {0}, false,
                               TensorView::contiguous(d_out.get(), DType::f32, {4}, cu)));
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace
}  // namespace foldkit::test
