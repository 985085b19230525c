// The type-erased CUDA scans of every form (cuda::inclusive_scan / exclusive_scan,
// *_scan_blocked, *_scan_segmented with a run-time op and dtype) give the typed scans' bits, for
// every scan op x dtype, with an explicit workspace and in the convenient form; the exclusive
// forms' Scalar init follows foldkit/scalar.hpp's exactness rule (a rejected init launches and
// writes nothing); and their own errors (an op that is not a scan op, an unknown enumerator).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "foldkit/cuda/scan.hpp"
#include "foldkit/scalar.hpp"
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

enum class Form { whole, blocked, segmented };
const char* form_name(Form f) { return f == Form::whole ? "whole" : f == Form::blocked ? "blocked" : "segmented"; }

// Random segment offsets for n elements, some segments empty (the last one too).
std::vector<std::int64_t> random_offsets(std::int64_t n, Rng& rng) {
  std::vector<std::int64_t> offsets{0};
  while (offsets.back() < n) {
    const std::int64_t r = rng.uniform(0, 9);
    const std::int64_t len = r == 0 ? 0 : r < 8 ? rng.uniform(1, 3000) : rng.uniform(3000, 80000);
    offsets.push_back(offsets.back() + len < n ? offsets.back() + len : n);
  }
  offsets.push_back(n);
  return offsets;
}

template <class T>
void expect_erased_matches_typed(Rng& rng) {
  const std::int64_t n = capped({70001}).front();  // several tiles and a partial last one
  const CounterRng bits = rng.counter();
  std::vector<T> host(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    if constexpr (is_floating_v<T>) host[static_cast<std::size_t>(i)] = from_double<T>(4.0 * bits.unit(i) - 2.0);
    else host[static_cast<std::size_t>(i)] = static_cast<T>(bits.bits(i));
  }
  const DeviceBuffer in(host.size() * sizeof(T));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(in.get(), host.data(), in.bytes(), cudaMemcpyHostToDevice));
  const std::int64_t block_length = rng.uniform(1, 5000);
  const std::vector<std::int64_t> offsets = random_offsets(n, rng);
  const std::int64_t segments = static_cast<std::int64_t>(offsets.size()) - 1;
  const DeviceBuffer d_offsets_buf(offsets.size() * sizeof(std::int64_t));
  FOLDKIT_CUDA_CHECK(
      cudaMemcpy(d_offsets_buf.get(), offsets.data(), d_offsets_buf.bytes(), cudaMemcpyHostToDevice));
  const auto* d_offsets = d_offsets_buf.as<const std::int64_t>();
  const std::size_t ws_bytes = cuda::scan_workspace_bytes(n, dtype_v<T>);
  const DeviceBuffer ws_buf(ws_bytes);
  const cuda::Workspace ws{ws_buf.get(), ws_bytes};
  cuda::init_scan_workspace(ws);
  auto one_op = [&](auto op_tag) {
    constexpr ReduceOp Op = decltype(op_tag)::value;
    using R = scan_result_t<Op, T>;
    const std::string what = std::string(op_name(Op)) + " " + dtype_name(dtype_v<T>) +
                             " block_length=" + std::to_string(block_length) +
                             " segments=" + std::to_string(segments);
    const R init = from_double<R>(3.0);
    // The exclusive forms take the init as R, as T and as a double (each converts exactly).
    const Scalar inits[] = {Scalar(init), Scalar(from_double<T>(3.0)), Scalar(3.0)};
    const DeviceBuffer typed(host.size() * sizeof(R)), erased(host.size() * sizeof(R));
    const auto* d_in = in.as<T>();
    R* d_typed = typed.as<R>();
    void* d_erased = erased.get();
    for (const Form form : {Form::whole, Form::blocked, Form::segmented}) {
      // inclusive / exclusive x explicit / convenient workspace
      for (int variant = 0; variant < 4; ++variant) {
        const bool exclusive = variant >= 2, explicit_ws = variant % 2 == 0;
        const Scalar& scalar = inits[(static_cast<int>(form) + variant) % 3];
        FOLDKIT_CUDA_CHECK(cudaMemset(typed.get(), 0x11, typed.bytes()));
        FOLDKIT_CUDA_CHECK(cudaMemset(erased.get(), 0xEE, erased.bytes()));
        switch (form) {
          case Form::whole:
            if (exclusive) {
              cuda::exclusive_scan<Op>(d_in, n, d_typed, init, ws);
              if (explicit_ws) cuda::exclusive_scan(Op, dtype_v<T>, d_in, n, d_erased, scalar, ws);
              else cuda::exclusive_scan(Op, dtype_v<T>, d_in, n, d_erased, scalar);
            } else {
              cuda::inclusive_scan<Op>(d_in, n, d_typed, ws);
              if (explicit_ws) cuda::inclusive_scan(Op, dtype_v<T>, d_in, n, d_erased, ws);
              else cuda::inclusive_scan(Op, dtype_v<T>, d_in, n, d_erased);
            }
            break;
          case Form::blocked:
            if (exclusive) {
              cuda::exclusive_scan_blocked<Op>(d_in, n, d_typed, block_length, init, ws);
              if (explicit_ws) cuda::exclusive_scan_blocked(Op, dtype_v<T>, d_in, n, d_erased, block_length, scalar, ws);
              else cuda::exclusive_scan_blocked(Op, dtype_v<T>, d_in, n, d_erased, block_length, scalar);
            } else {
              cuda::inclusive_scan_blocked<Op>(d_in, n, d_typed, block_length, ws);
              if (explicit_ws) cuda::inclusive_scan_blocked(Op, dtype_v<T>, d_in, n, d_erased, block_length, ws);
              else cuda::inclusive_scan_blocked(Op, dtype_v<T>, d_in, n, d_erased, block_length);
            }
            break;
          case Form::segmented:
            if (exclusive) {
              cuda::exclusive_scan_segmented<Op>(d_in, n, d_typed, d_offsets, segments, init, ws);
              if (explicit_ws)
                cuda::exclusive_scan_segmented(Op, dtype_v<T>, d_in, n, d_erased, d_offsets, segments, scalar, ws);
              else cuda::exclusive_scan_segmented(Op, dtype_v<T>, d_in, n, d_erased, d_offsets, segments, scalar);
            } else {
              cuda::inclusive_scan_segmented<Op>(d_in, n, d_typed, d_offsets, segments, ws);
              if (explicit_ws)
                cuda::inclusive_scan_segmented(Op, dtype_v<T>, d_in, n, d_erased, d_offsets, segments, ws);
              else cuda::inclusive_scan_segmented(Op, dtype_v<T>, d_in, n, d_erased, d_offsets, segments);
            }
            break;
        }
        FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
        EXPECT_EQ(to_host(typed), to_host(erased))
            << what << " " << form_name(form) << (exclusive ? " exclusive" : " inclusive")
            << (explicit_ws ? ", explicit workspace" : ", convenient")
            << (exclusive ? std::string(", init dtype ") + dtype_name(scalar.dtype()) : std::string());
      }
    }
  };
  one_op(std::integral_constant<ReduceOp, ReduceOp::sum>{});
  one_op(std::integral_constant<ReduceOp, ReduceOp::prod>{});
  one_op(std::integral_constant<ReduceOp, ReduceOp::min>{});
  one_op(std::integral_constant<ReduceOp, ReduceOp::max>{});
}

TEST_F(CudaScanErased, MatchesTypedForEveryFormOpAndDtype) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (const DType t : kAllDTypes) visit_dtype(t, [&](auto tag) { expect_erased_matches_typed<decltype(tag)>(rng); });
}

// An i32 sum writes i64; its init may be an int32 (the former `const void*` init read 8 bytes).
TEST_F(CudaScanErased, Int32InitForInt32Sum) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const CounterRng bits = rng.counter();
  const std::int64_t n = 5000;
  std::vector<std::int32_t> host(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) host[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(bits.bits(i));
  const DeviceBuffer in(host.size() * sizeof(std::int32_t));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(in.get(), host.data(), in.bytes(), cudaMemcpyHostToDevice));
  const std::int64_t offsets[] = {0, 10, 10, 4000, n};
  const DeviceBuffer d_offsets(sizeof offsets);
  FOLDKIT_CUDA_CHECK(cudaMemcpy(d_offsets.get(), offsets, sizeof offsets, cudaMemcpyHostToDevice));
  const DeviceBuffer typed(host.size() * sizeof(std::int64_t)), erased(host.size() * sizeof(std::int64_t));
  const auto* d_in = in.as<std::int32_t>();
  auto* d_typed = typed.as<std::int64_t>();
  const auto* d_off = d_offsets.as<const std::int64_t>();
  for (const std::int32_t init : {std::int32_t{-5}, std::numeric_limits<std::int32_t>::min(),
                                  std::numeric_limits<std::int32_t>::max()}) {
    const std::int64_t wide = init;
    for (int form = 0; form < 3; ++form) {
      FOLDKIT_CUDA_CHECK(cudaMemset(typed.get(), 0x11, typed.bytes()));
      FOLDKIT_CUDA_CHECK(cudaMemset(erased.get(), 0xEE, erased.bytes()));
      std::int64_t head = 0;  // an element that is init
      if (form == 0) {
        cuda::exclusive_scan<ReduceOp::sum>(d_in, n, d_typed, wide);
        cuda::exclusive_scan(ReduceOp::sum, DType::i32, d_in, n, erased.get(), Scalar(init));
      } else if (form == 1) {
        cuda::exclusive_scan_blocked<ReduceOp::sum>(d_in, n, d_typed, 7, wide);
        cuda::exclusive_scan_blocked(ReduceOp::sum, DType::i32, d_in, n, erased.get(), 7, init);
        head = 7;
      } else {
        cuda::exclusive_scan_segmented<ReduceOp::sum>(d_in, n, d_typed, d_off, 4, wide);
        cuda::exclusive_scan_segmented(ReduceOp::sum, DType::i32, d_in, n, erased.get(), d_off, 4, init);
        head = 10;
      }
      FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<unsigned char> got = to_host(erased);
      std::int64_t at_head;
      std::memcpy(&at_head, got.data() + head * 8, 8);
      EXPECT_EQ(at_head, wide) << form_name(static_cast<Form>(form)) << ", init " << init;
      EXPECT_EQ(to_host(typed), got) << form_name(static_cast<Form>(form)) << ", init " << init;
    }
  }
}

// Runs every exclusive erased form of (op, dtype) on 64 elements with `init` (explicit and
// convenient workspace), each into an output poisoned with 0xEE; expects Error(want) and, after a
// synchronisation, the poison intact.
template <class T>
void expect_rejected(ReduceOp op, const Scalar& init, Errc want, const char* what) {
  const std::int64_t n = 64;
  const std::vector<T> host(static_cast<std::size_t>(n), from_double<T>(1.0));
  const DeviceBuffer in(host.size() * sizeof(T)), out(static_cast<std::size_t>(n) * 8);
  FOLDKIT_CUDA_CHECK(cudaMemcpy(in.get(), host.data(), in.bytes(), cudaMemcpyHostToDevice));
  const std::int64_t offsets[] = {0, 30, n};
  const DeviceBuffer d_offsets(sizeof offsets);
  FOLDKIT_CUDA_CHECK(cudaMemcpy(d_offsets.get(), offsets, sizeof offsets, cudaMemcpyHostToDevice));
  const auto* d_off = d_offsets.as<const std::int64_t>();
  const std::size_t ws_bytes = cuda::scan_workspace_bytes(n, DType::f64);
  const DeviceBuffer ws_buf(ws_bytes);
  const cuda::Workspace ws{ws_buf.get(), ws_bytes};
  cuda::init_scan_workspace(ws);
  const std::vector<unsigned char> poisoned(out.bytes(), 0xEE);
  for (int variant = 0; variant < 6; ++variant) {
    const int form = variant / 2;
    const bool explicit_ws = variant % 2 == 0;
    FOLDKIT_CUDA_CHECK(cudaMemset(out.get(), 0xEE, out.bytes()));
    FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(throws_errc(want, [&] {
      if (form == 0) {
        if (explicit_ws) cuda::exclusive_scan(op, dtype_v<T>, in.get(), n, out.get(), init, ws);
        else cuda::exclusive_scan(op, dtype_v<T>, in.get(), n, out.get(), init);
      } else if (form == 1) {
        if (explicit_ws) cuda::exclusive_scan_blocked(op, dtype_v<T>, in.get(), n, out.get(), 16, init, ws);
        else cuda::exclusive_scan_blocked(op, dtype_v<T>, in.get(), n, out.get(), 16, init);
      } else {
        if (explicit_ws) cuda::exclusive_scan_segmented(op, dtype_v<T>, in.get(), n, out.get(), d_off, 2, init, ws);
        else cuda::exclusive_scan_segmented(op, dtype_v<T>, in.get(), n, out.get(), d_off, 2, init);
      }
    })) << what << ", " << form_name(static_cast<Form>(form)) << (explicit_ws ? ", explicit" : ", convenient");
    FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(to_host(out), poisoned) << what << ": output written, " << form_name(static_cast<Form>(form))
                                      << (explicit_ws ? ", explicit" : ", convenient");
  }
}

TEST_F(CudaScanErased, InexactInitIsRejectedBeforeAnyWrite) {
  expect_rejected<float>(ReduceOp::sum, Scalar(0.1), Errc::invalid_argument, "double 0.1 to an f32 sum");
  expect_rejected<half>(ReduceOp::sum, Scalar(0.1f), Errc::invalid_argument, "float 0.1f to an f16 sum");
  expect_rejected<std::int32_t>(ReduceOp::max, Scalar(std::int64_t{1} << 40), Errc::invalid_argument,
                                "int64 2^40 to an i32 max (result i32)");
  expect_rejected<std::uint32_t>(ReduceOp::sum, Scalar(-1), Errc::invalid_argument, "-1 to a u32 sum (result u64)");
  expect_rejected<float>(ReduceOp::argmax, Scalar(0.0f), Errc::unsupported, "argmax");
}

TEST_F(CudaScanErased, ExactCrossDtypeInitsAreAccepted) {
  const std::vector<std::int32_t> ints(4, 1);
  const DeviceBuffer d_ints(4 * sizeof(std::int32_t)), d_int_out(4 * sizeof(std::int32_t));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(d_ints.get(), ints.data(), d_ints.bytes(), cudaMemcpyHostToDevice));
  cuda::exclusive_scan(ReduceOp::max, DType::i32, d_ints.get(), 4, d_int_out.get(), Scalar(std::int64_t{2147483647}));
  std::vector<std::int32_t> int_out(4, 0);
  FOLDKIT_CUDA_CHECK(cudaMemcpy(int_out.data(), d_int_out.get(), d_int_out.bytes(), cudaMemcpyDeviceToHost));
  EXPECT_EQ(int_out, (std::vector<std::int32_t>{2147483647, 2147483647, 2147483647, 2147483647}));

  const std::vector<float> floats(4, 1.0f);
  const DeviceBuffer d_floats(4 * sizeof(float)), d_float_out(4 * sizeof(float));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(d_floats.get(), floats.data(), d_floats.bytes(), cudaMemcpyHostToDevice));
  cuda::exclusive_scan_blocked(ReduceOp::sum, DType::f32, d_floats.get(), 4, d_float_out.get(), 2, Scalar(std::nan("")));
  std::vector<float> float_out(4, 0.0f);
  FOLDKIT_CUDA_CHECK(cudaMemcpy(float_out.data(), d_float_out.get(), d_float_out.bytes(), cudaMemcpyDeviceToHost));
  for (const float v : float_out) EXPECT_TRUE(std::isnan(v));

  cuda::exclusive_scan(ReduceOp::sum, DType::f32, d_floats.get(), 4, d_float_out.get(), Scalar(0.5));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(float_out.data(), d_float_out.get(), d_float_out.bytes(), cudaMemcpyDeviceToHost));
  EXPECT_EQ(float_out, (std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f}));
}

TEST_F(CudaScanErased, Errors) {
  const DeviceBuffer in(64 * sizeof(float)), out(64 * sizeof(float));
  FOLDKIT_CUDA_CHECK(cudaMemset(in.get(), 0, in.bytes()));
  const std::int64_t offsets[] = {0, 30, 64};
  const DeviceBuffer d_offsets(sizeof offsets);
  FOLDKIT_CUDA_CHECK(cudaMemcpy(d_offsets.get(), offsets, sizeof offsets, cudaMemcpyHostToDevice));
  const auto* d_off = d_offsets.as<const std::int64_t>();
  const ReduceOp bad_ops[] = {ReduceOp::mean, ReduceOp::argmin, ReduceOp::argmax, static_cast<ReduceOp>(99)};
  for (const ReduceOp op : bad_ops) {
    const std::string what = "ReduceOp " + std::to_string(static_cast<int>(op));
    EXPECT_TRUE(throws_errc(Errc::unsupported, [&] { cuda::inclusive_scan(op, DType::f32, in.get(), 64, out.get()); }))
        << what;
    EXPECT_TRUE(throws_errc(Errc::unsupported,
                            [&] { cuda::exclusive_scan(op, DType::f32, in.get(), 64, out.get(), 0.0f); }))
        << what;
    EXPECT_TRUE(throws_errc(Errc::unsupported,
                            [&] { cuda::inclusive_scan_blocked(op, DType::f32, in.get(), 64, out.get(), 8); }))
        << what;
    EXPECT_TRUE(throws_errc(Errc::unsupported,
                            [&] { cuda::exclusive_scan_blocked(op, DType::f32, in.get(), 64, out.get(), 8, 0.0f); }))
        << what;
    EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
      cuda::inclusive_scan_segmented(op, DType::f32, in.get(), 64, out.get(), d_off, 2);
    })) << what;
    EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
      cuda::exclusive_scan_segmented(op, DType::f32, in.get(), 64, out.get(), d_off, 2, 0.0f);
    })) << what;
  }
  const DType bad_dtype = static_cast<DType>(-1);
  EXPECT_TRUE(throws_errc(Errc::unsupported,
                          [&] { cuda::inclusive_scan(ReduceOp::sum, bad_dtype, in.get(), 64, out.get()); }));
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
    cuda::exclusive_scan_blocked(ReduceOp::sum, bad_dtype, in.get(), 64, out.get(), 8, 0.0f);
  }));
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
    cuda::inclusive_scan_segmented(ReduceOp::sum, bad_dtype, in.get(), 64, out.get(), d_off, 2);
  }));
  // The typed forms' argument errors come through.
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cuda::inclusive_scan(ReduceOp::sum, DType::f32, in.get(), 64, out.get(), cuda::Workspace{nullptr, 1 << 20});
  }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cuda::inclusive_scan_blocked(ReduceOp::sum, DType::f32, in.get(), 64, out.get(), 0);
  }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cuda::exclusive_scan_segmented(ReduceOp::max, DType::f32, in.get(), 64, out.get(), nullptr, 2, 0.0f);
  }));
  EXPECT_TRUE(throws_errc(Errc::wrong_memory, [&] {
    cuda::inclusive_scan_segmented(ReduceOp::sum, DType::f32, in.get(), 64, out.get(), offsets, 2);
  }));
}

}  // namespace
}  // namespace foldkit::test
