// The type-erased CUDA scans (cuda::inclusive_scan(op, dtype, ...), exclusive_scan(op, dtype,
// ..., init, ...)) give the typed scans' bits, for every scan op x dtype, with an explicit
// workspace and in the convenient form; and their own errors (an op that is not a scan op, an
// unknown enumerator, a null init).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "foldkit/cuda/scan.hpp"
#include "support/cuda_backend.hpp"
#include "support/random_arrays.hpp"
#include "support/result_checks.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

using CudaScanErased = CudaTest;

// Copies `bytes` of device memory back.
std::vector<unsigned char> to_host(const DeviceBuffer& d) {
  std::vector<unsigned char> h(d.bytes());
  FOLDKIT_CUDA_CHECK(cudaMemcpy(h.data(), d.get(), h.size(), cudaMemcpyDeviceToHost));
  return h;
}

template <class T>
void expect_erased_matches_typed(Rng& rng) {
  const std::int64_t n = capped({70001}).front();  // several tiles and a partial last one
  const CounterRng bits = rng.counter();
  std::vector<T> host(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    host[static_cast<std::size_t>(i)] = from_double<T>(static_cast<double>(static_cast<int>(bits.bits(i) % 5) - 2));
  const DeviceBuffer in(host.size() * sizeof(T));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(in.get(), host.data(), in.bytes(), cudaMemcpyHostToDevice));
  const std::size_t ws_bytes = cuda::scan_workspace_bytes(n, dtype_v<T>);
  const DeviceBuffer ws_buf(ws_bytes);
  const cuda::Workspace ws{ws_buf.get(), ws_bytes};
  cuda::init_scan_workspace(ws);
  auto one_op = [&](auto op_tag) {
    constexpr ReduceOp Op = decltype(op_tag)::value;
    using R = scan_result_t<Op, T>;
    const std::string what = std::string(op_name(Op)) + " " + dtype_name(dtype_v<T>);
    const R init = from_double<R>(3.0);
    const DeviceBuffer typed(host.size() * sizeof(R)), erased(host.size() * sizeof(R));
    const auto* d_in = in.as<T>();
    for (int form = 0; form < 4; ++form) {  // inclusive / exclusive x explicit / convenient workspace
      const bool exclusive = form >= 2, explicit_ws = form % 2 == 0;
      FOLDKIT_CUDA_CHECK(cudaMemset(typed.get(), 0x11, typed.bytes()));
      FOLDKIT_CUDA_CHECK(cudaMemset(erased.get(), 0xEE, erased.bytes()));
      if (exclusive) {
        cuda::exclusive_scan<Op>(d_in, n, typed.as<R>(), init, ws);
        if (explicit_ws) cuda::exclusive_scan(Op, dtype_v<T>, d_in, n, erased.get(), &init, ws);
        else cuda::exclusive_scan(Op, dtype_v<T>, d_in, n, erased.get(), &init);
      } else {
        cuda::inclusive_scan<Op>(d_in, n, typed.as<R>(), ws);
        if (explicit_ws) cuda::inclusive_scan(Op, dtype_v<T>, d_in, n, erased.get(), ws);
        else cuda::inclusive_scan(Op, dtype_v<T>, d_in, n, erased.get());
      }
      FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
      EXPECT_EQ(to_host(typed), to_host(erased)) << what << (exclusive ? " exclusive" : " inclusive")
                                                 << (explicit_ws ? ", explicit workspace" : ", convenient");
    }
  };
  one_op(std::integral_constant<ReduceOp, ReduceOp::sum>{});
  one_op(std::integral_constant<ReduceOp, ReduceOp::prod>{});
  one_op(std::integral_constant<ReduceOp, ReduceOp::min>{});
  one_op(std::integral_constant<ReduceOp, ReduceOp::max>{});
}

TEST_F(CudaScanErased, MatchesTypedForEveryOpAndDtype) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (const DType t : kAllDTypes) visit_dtype(t, [&](auto tag) { expect_erased_matches_typed<decltype(tag)>(rng); });
}

TEST_F(CudaScanErased, Errors) {
  const DeviceBuffer in(64 * sizeof(float)), out(64 * sizeof(float));
  FOLDKIT_CUDA_CHECK(cudaMemset(in.get(), 0, in.bytes()));
  const float init = 0.0f;
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] { cuda::inclusive_scan(ReduceOp::mean, DType::f32, in.get(), 64, out.get()); }));
  EXPECT_TRUE(throws_errc(Errc::unsupported,
                          [&] { cuda::exclusive_scan(ReduceOp::argmax, DType::f32, in.get(), 64, out.get(), &init); }));
  EXPECT_TRUE(throws_errc(Errc::unsupported,
                          [&] { cuda::inclusive_scan(static_cast<ReduceOp>(99), DType::f32, in.get(), 64, out.get()); }));
  EXPECT_TRUE(throws_errc(Errc::unsupported,
                          [&] { cuda::inclusive_scan(ReduceOp::sum, static_cast<DType>(-1), in.get(), 64, out.get()); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cuda::exclusive_scan(ReduceOp::sum, DType::f32, in.get(), 64, out.get(), nullptr); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cuda::inclusive_scan(ReduceOp::sum, DType::f32, in.get(), 64, out.get(), cuda::Workspace{nullptr, 1 << 20});
  }));
}

}  // namespace
}  // namespace foldkit::test
