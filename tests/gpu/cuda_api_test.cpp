// CUDA backend API surface: argument and memory-space errors (both backends' view of device
// memory), the type-erased entry point's enum checks, reduce_to_host and the named wrappers.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "common/reduce_checks.hpp"
#include "foldkit/cuda/reduce.hpp"
#include "foldkit/cuda/scan.hpp"
#include "foldkit/reduce.hpp"
#include "support/cuda_backend.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

using CudaErrors = CudaTest;
using CudaApi = CudaTest;

TEST_F(CudaErrors, NullInputWithElementsIsInvalidArgument) {
  DeviceSlot out;
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cuda::reduce<ReduceOp::sum>(static_cast<const float*>(nullptr), 5, out.get<float>());
  }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cuda::reduce<ReduceOp::argmax>(static_cast<const half*>(nullptr), 1, out.get<ArgResult<half>>());
  }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cuda::reduce(ReduceOp::min, DType::i32, nullptr, 7, out.get<void>()); }));
}

TEST_F(CudaErrors, NegativeLengthIsInvalidArgument) {
  const auto in = to_device(make_exact_sum_data<float>(16, 0, CounterRng{1}));
  DeviceSlot out;
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::reduce<ReduceOp::sum>(in.ptr, -1, out.get<float>()); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cuda::reduce(ReduceOp::max, DType::f32, in.ptr, -16, out.get<void>()); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::reduce_to_host<ReduceOp::sum>(in.ptr, -1); }));
}

TEST_F(CudaErrors, NullOutputIsInvalidArgument) {
  const auto in = to_device(make_exact_sum_data<float>(16, 0, CounterRng{1}));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::reduce<ReduceOp::sum>(in.ptr, 16, nullptr); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cuda::reduce(ReduceOp::argmin, DType::f32, in.ptr, 16, nullptr); }));
}

// The validation rule, one for every entry point (README, "Errors"): with n = 0 the n-element
// arrays (input, a scan's output) are never accessed, so any pointer will do (null, host memory);
// every other argument (a reduction's result, a workspace, block_length, offsets, num_segments)
// is checked as for any n.
TEST_F(CudaErrors, ZeroLengthRuleIsTheSameForEveryEntryPoint) {
  const float* null_in = nullptr;
  float* null_out = nullptr;
  float host_array[4] = {1, 2, 3, 4};
  DeviceSlot out;
  const DeviceBuffer offsets(sizeof(std::int64_t));
  FOLDKIT_CUDA_CHECK(cudaMemset(offsets.get(), 0, sizeof(std::int64_t)));
  const auto* d_offsets = offsets.as<const std::int64_t>();
  const DeviceBuffer ws_buffer(cuda::reduce_workspace_bytes() + 64);
  FOLDKIT_CUDA_CHECK(cudaMemset(ws_buffer.get(), 0, ws_buffer.bytes()));
  const cuda::Workspace ws{ws_buffer.get(), ws_buffer.bytes()};
  // Accepted with n = 0: null and host arrays.
  EXPECT_NO_THROW(cuda::reduce<ReduceOp::sum>(null_in, 0, out.get<float>()));
  EXPECT_NO_THROW(cuda::reduce<ReduceOp::sum>(host_array, 0, out.get<float>(), ws));
  EXPECT_NO_THROW(cuda::reduce(ReduceOp::sum, DType::f32, nullptr, 0, out.get<void>()));
  for (float* o : {null_out, host_array}) {
    const float* in = o;
    EXPECT_NO_THROW(cuda::inclusive_scan<ReduceOp::sum>(in, 0, o));
    EXPECT_NO_THROW(cuda::inclusive_scan<ReduceOp::sum>(in, 0, o, ws));
    EXPECT_NO_THROW(cuda::exclusive_scan<ReduceOp::max>(in, 0, o, 1.0f));
    EXPECT_NO_THROW(cuda::inclusive_scan_blocked<ReduceOp::sum>(in, 0, o, 4));
    EXPECT_NO_THROW(cuda::exclusive_scan_blocked<ReduceOp::sum>(in, 0, o, 4, 0.0f, ws));
    EXPECT_NO_THROW(cuda::inclusive_scan_segmented<ReduceOp::sum>(in, 0, o, d_offsets, 0));
    EXPECT_NO_THROW(cuda::exclusive_scan_segmented<ReduceOp::sum>(in, 0, o, d_offsets, 0, 0.0f, ws));
    EXPECT_NO_THROW(cuda::inclusive_scan(ReduceOp::sum, DType::f32, in, 0, o));
  }
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  // Checked with n = 0 as with any n.
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::reduce<ReduceOp::sum>(null_in, 0, null_out); }));
  EXPECT_TRUE(throws_errc(Errc::wrong_memory, [&] { cuda::reduce<ReduceOp::sum>(null_in, 0, host_array); }));
  const cuda::Workspace host_ws{host_array, cuda::reduce_workspace_bytes()};
  const cuda::Workspace misaligned{static_cast<char*>(ws_buffer.get()) + 8, ws_buffer.bytes() - 8};
  EXPECT_TRUE(throws_errc(Errc::wrong_memory, [&] { cuda::reduce<ReduceOp::sum>(null_in, 0, out.get<float>(), host_ws); }));
  EXPECT_TRUE(throws_errc(Errc::wrong_memory, [&] { cuda::inclusive_scan<ReduceOp::sum>(null_in, 0, null_out, host_ws); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cuda::reduce<ReduceOp::sum>(null_in, 0, out.get<float>(), misaligned); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cuda::inclusive_scan<ReduceOp::sum>(null_in, 0, null_out, misaligned); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cuda::inclusive_scan<ReduceOp::sum>(null_in, 0, null_out, cuda::Workspace{}); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cuda::inclusive_scan_blocked<ReduceOp::sum>(null_in, 0, null_out, 0); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cuda::inclusive_scan_segmented<ReduceOp::sum>(null_in, 0, null_out, static_cast<const std::int64_t*>(nullptr), 0);
  }));
  const std::int64_t host_offsets[1] = {0};
  EXPECT_TRUE(throws_errc(Errc::wrong_memory,
                          [&] { cuda::inclusive_scan_segmented<ReduceOp::sum>(null_in, 0, null_out, host_offsets, 0); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cuda::inclusive_scan_segmented<ReduceOp::sum>(null_in, 0, null_out, d_offsets, -1); }));
}

// Pageable host memory is not device-accessible: the CUDA API must refuse it, not crash.
TEST_F(CudaErrors, HostPointerIsWrongMemory) {
  const std::unique_ptr<float, decltype(&std::free)> host(static_cast<float*>(std::malloc(64 * sizeof(float))), &std::free);
  for (int i = 0; i < 64; ++i) host.get()[i] = 1.0f;
  DeviceSlot out;
  EXPECT_TRUE(throws_errc(Errc::wrong_memory, [&] { cuda::reduce<ReduceOp::sum>(host.get(), 64, out.get<float>()); }));
  EXPECT_TRUE(throws_errc(Errc::wrong_memory,
                          [&] { cuda::reduce(ReduceOp::max, DType::f32, host.get(), 64, out.get<void>()); }));
  EXPECT_TRUE(throws_errc(Errc::wrong_memory, [&] { cuda::reduce_to_host<ReduceOp::sum>(host.get(), 64); }));
  // A host output pointer is refused the same way.
  const auto in = to_device(make_exact_sum_data<float>(64, 0, CounterRng{2}));
  float host_out = 0;
  EXPECT_TRUE(throws_errc(Errc::wrong_memory, [&] { cuda::reduce<ReduceOp::sum>(in.ptr, 64, &host_out); }));
}

// Device memory handed to the CPU backend: refused, never dereferenced on the host.
TEST_F(CudaErrors, DevicePointerToCpuApiIsWrongMemory) {
  const auto in = to_device(make_exact_sum_data<float>(64, 1, CounterRng{3}));
  EXPECT_TRUE(throws_errc(Errc::wrong_memory, [&] { cpu::sum(in.ptr, 64); }));
  EXPECT_TRUE(throws_errc(Errc::wrong_memory, [&] { cpu::argmax(in.ptr, 64); }));
  PoisonedSlot out;
  EXPECT_TRUE(throws_errc(Errc::wrong_memory, [&] { cpu::reduce(ReduceOp::min, DType::f32, in.ptr, 64, out.bytes); }));
  EXPECT_TRUE(throws_errc(Errc::wrong_memory,
                          [&] { cpu::reduce_custom(in.ptr, 64, [](float a, float b) { return a + b; }, 0.0f); }));
  // The type-erased result pointer is checked too, whatever n is (the validation rule).
  const std::vector<float> host_in(8, 1.0f);
  DeviceSlot d_out;
  EXPECT_TRUE(throws_errc(Errc::wrong_memory,
                          [&] { cpu::reduce(ReduceOp::sum, DType::f32, host_in.data(), 8, d_out.get<void>()); }));
  EXPECT_TRUE(throws_errc(Errc::wrong_memory, [&] { cpu::reduce(ReduceOp::sum, DType::f32, nullptr, 0, d_out.get<void>()); }));
}

TEST_F(CudaErrors, TypeErasedInvalidEnumIsUnsupported) {
  const auto in = to_device(make_exact_sum_data<float>(16, 0, CounterRng{4}));
  DeviceSlot out;
  const OwnedWorkspace ws;
  EXPECT_TRUE(throws_errc(Errc::unsupported,
                          [&] { cuda::reduce(ReduceOp::sum, static_cast<DType>(99), in.ptr, 16, out.get<void>()); }));
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
    cuda::reduce(ReduceOp::sum, static_cast<DType>(99), in.ptr, 16, out.get<void>(), ws.get());
  }));
  EXPECT_TRUE(throws_errc(Errc::unsupported,
                          [&] { cuda::reduce(static_cast<ReduceOp>(99), DType::f32, in.ptr, 16, out.get<void>()); }));
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
    cuda::reduce(static_cast<ReduceOp>(-1), DType::f32, in.ptr, 16, out.get<void>(), ws.get());
  }));
}

// A corrupt n of 2^62 or more elements is refused before anything is read (the kernel takes
// n >> 62 as a run-time zero), as is a negative one.
TEST_F(CudaErrors, AbsurdElementCountIsRefused) {
  const auto in = to_device(make_exact_sum_data<float>(16, 0, CounterRng{6}));
  DeviceSlot out;
  const OwnedWorkspace ws;
  const std::int64_t huge = std::int64_t{1} << 62;
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] { cuda::reduce<ReduceOp::sum>(in.ptr, huge, out.get<float>(), ws.get()); }));
  EXPECT_TRUE(throws_errc(Errc::unsupported,
                          [&] { cuda::reduce<ReduceOp::max>(in.ptr, INT64_MAX, out.get<float>(), ws.get()); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cuda::reduce<ReduceOp::sum>(in.ptr, -1, out.get<float>(), ws.get()); }));
}

// After a refused call the backend still works (no sticky error left behind).
TEST_F(CudaErrors, ValidCallAfterErrorsSucceeds) {
  const auto a = make_exact_sum_data<std::int32_t>(1000, 2, CounterRng{5});
  const auto in = to_device(a);
  DeviceSlot out;
  EXPECT_THROW(cuda::reduce<ReduceOp::sum>(in.ptr, -1, out.get<std::int64_t>()), Error);
  EXPECT_THROW(cuda::reduce<ReduceOp::max>(in.ptr, 0, out.get<std::int32_t>()), Error);
  EXPECT_TRUE(bits_equal(CudaBackend::run<ReduceOp::sum>(in), ref_int_sum(a)));
}

// reduce_to_host gives the same bits as reduce + copy, on the default and on a created stream.
template <class T> void expect_reduce_to_host_matches(Rng& rng, cudaStream_t stream) {
  const auto a = make_all_ops_data<T>(capped({100003}).front(), rng.uniform(0, 3), rng);
  SCOPED_TRACE(a.describe());
  const auto in = to_device(a);
  for_each_op([&](auto op) {
    constexpr ReduceOp kOp = decltype(op)::value;
    const auto got = cuda::reduce_to_host<kOp>(in.ptr, in.n, stream);
    static_assert(std::is_same_v<decltype(got), const expected_result_t<kOp, T>>);
    EXPECT_TRUE(bits_equal(got, CudaBackend::run<kOp>(in))) << op_name(kOp);
  });
}

TEST_F(CudaApi, ReduceToHostMatchesReduce) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const Stream stream;
  for (cudaStream_t s : {cudaStream_t{nullptr}, static_cast<cudaStream_t>(stream)}) {
    expect_reduce_to_host_matches<std::int32_t>(rng, s);
    expect_reduce_to_host_matches<std::uint32_t>(rng, s);
    expect_reduce_to_host_matches<std::int64_t>(rng, s);
    expect_reduce_to_host_matches<std::uint64_t>(rng, s);
    expect_reduce_to_host_matches<float>(rng, s);
    expect_reduce_to_host_matches<double>(rng, s);
    expect_reduce_to_host_matches<half>(rng, s);
    expect_reduce_to_host_matches<bfloat16>(rng, s);
  }
}

TEST_F(CudaApi, ReduceToHostEmptyInput) {
  const auto in = to_device(make_exact_sum_data<double>(0, 0, CounterRng{6}));
  EXPECT_EQ(cuda::reduce_to_host<ReduceOp::sum>(in.ptr, 0), 0.0);
  EXPECT_EQ(cuda::reduce_to_host<ReduceOp::prod>(in.ptr, 0), 1.0);
  EXPECT_TRUE(throws_errc(Errc::empty_input, [&] { cuda::reduce_to_host<ReduceOp::argmin>(in.ptr, 0); }));
}

// The named wrappers (cuda::sum, ...) are the typed reduce for their op.
TEST_F(CudaApi, NamedWrappersMatchReduce) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const auto a = make_real_data<float>(5003, 3, rng.counter(), 0.99, 1.01);
  const auto in = to_device(a);
  DeviceSlot out;
  auto via = [&](auto call, auto tag) {
    using R = decltype(tag);
    out.poison();
    call(out.get<R>());
    return out.take<R>("named wrapper");
  };
  const float* p = in.ptr;
  const std::int64_t n = in.n;
  EXPECT_TRUE(bits_equal(via([&](float* o) { cuda::sum(p, n, o); }, float{}), CudaBackend::run<ReduceOp::sum>(in)));
  EXPECT_TRUE(bits_equal(via([&](float* o) { cuda::prod(p, n, o); }, float{}), CudaBackend::run<ReduceOp::prod>(in)));
  EXPECT_TRUE(bits_equal(via([&](float* o) { cuda::min(p, n, o); }, float{}), CudaBackend::run<ReduceOp::min>(in)));
  EXPECT_TRUE(bits_equal(via([&](float* o) { cuda::max(p, n, o); }, float{}), CudaBackend::run<ReduceOp::max>(in)));
  EXPECT_TRUE(bits_equal(via([&](float* o) { cuda::mean(p, n, o); }, float{}), CudaBackend::run<ReduceOp::mean>(in)));
  EXPECT_TRUE(bits_equal(via([&](ArgResult<float>* o) { cuda::argmin(p, n, o); }, ArgResult<float>{}),
                         CudaBackend::run<ReduceOp::argmin>(in)));
  EXPECT_TRUE(bits_equal(via([&](ArgResult<float>* o) { cuda::argmax(p, n, o); }, ArgResult<float>{}),
                         CudaBackend::run<ReduceOp::argmax>(in)));
}

}  // namespace
}  // namespace foldkit::test
