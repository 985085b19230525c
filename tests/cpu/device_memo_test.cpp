// per_device_memo (include/foldkit/cuda/dispatch/runtime.hpp), the per-device cache of SM
// counts, occupancies and kernel attributes, is plain host C++: checked here on every machine
// of a CUDA build, GPU or not.
#include <gtest/gtest.h>

#include "foldkit/config.hpp"

#if FOLDKIT_WITH_CUDA
#include <atomic>

#include "foldkit/cuda/dispatch/runtime.hpp"

namespace foldkit::test {
namespace {

using foldkit::cuda::detail::kMemoDevices;
using foldkit::cuda::detail::per_device_memo;

TEST(PerDeviceMemo, ComputesOncePerDeviceAndEveryTimeForOrdinalsItCannotKeep) {
  static std::atomic<int> memo[kMemoDevices] = {};
  int calls = 0;
  auto compute = [&] { return 100 + ++calls; };
  EXPECT_EQ(per_device_memo(memo, 0, compute), 101);
  EXPECT_EQ(per_device_memo(memo, 0, compute), 101) << "device 0 is remembered";
  EXPECT_EQ(per_device_memo(memo, 3, compute), 102) << "device 3 is asked on its own";
  EXPECT_EQ(per_device_memo(memo, 0, compute), 101);
  EXPECT_EQ(per_device_memo(memo, 3, compute), 102);
  EXPECT_EQ(calls, 2);
  // -1 (the runtime could not say) and ordinals past the memo are computed on every call.
  EXPECT_EQ(per_device_memo(memo, -1, compute), 103);
  EXPECT_EQ(per_device_memo(memo, -1, compute), 104);
  EXPECT_EQ(per_device_memo(memo, kMemoDevices, compute), 105);
  EXPECT_EQ(per_device_memo(memo, kMemoDevices, compute), 106);
  EXPECT_EQ(per_device_memo(memo, kMemoDevices - 1, compute), 107);
  EXPECT_EQ(per_device_memo(memo, kMemoDevices - 1, compute), 107) << "the last ordinal kept";
}

}  // namespace
}  // namespace foldkit::test
#endif
