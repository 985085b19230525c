// The convenient form's workspace cache (issue #21): bounded memory over 10,000 streams, more
// live streams than cached entries, release_stream_workspaces(), and out_of_memory with
// recovery. Its own executable, run alone (RUN_SERIAL): these tests measure the device's memory
// in use or fill it, which any test running beside them on the same GPU would disturb (and be
// disturbed by: out-of-memory failures in the other tests).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/reduce_checks.hpp"
#include "foldkit/cuda/reduce.hpp"
#include "foldkit/cuda/scan.hpp"
#include "support/captured_graph.hpp"
#include "support/cuda_backend.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

using CudaWorkspace = CudaTest;

using ScanOut = scan_result_t<ReduceOp::sum, std::int32_t>;

std::vector<std::int32_t> small_ints(std::int64_t n, Rng& rng) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<std::int32_t>(rng.uniform(-1000, 1000));
  return v;
}
std::int64_t host_sum(const std::vector<std::int32_t>& v) {
  std::int64_t s = 0;
  for (std::int32_t x : v) s += x;
  return s;
}
std::vector<ScanOut> host_inclusive_sum(const std::vector<std::int32_t>& v) {
  std::vector<ScanOut> out(v.size());
  ScanOut s = 0;
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = s += v[i];
  return out;
}
template <class T> std::vector<T> from_device(const DeviceBuffer& b) {
  std::vector<T> host(b.bytes() / sizeof(T));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(host.data(), b.get(), host.size() * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}
// Device memory in use (total - free), after all work is done.
std::int64_t device_bytes_in_use() {
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  std::size_t free_bytes = 0, total_bytes = 0;
  FOLDKIT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return static_cast<std::int64_t>(total_bytes - free_bytes);
}

// A server that creates a stream per request: 10,000 streams are created, used by a convenient
// reduce and a convenient scan (nothing synchronised) and destroyed. The thread keeps at most 8
// workspaces per cache and device, so device memory in use grows by less than 16 MB; every
// result is exact. Fails if nothing is evicted (e.g. kEntriesPerDevice = 100000: about
// 10,000 x (136 KB + 4 KB) = 1.4 GB on an H100), or if an eviction frees memory that a pending
// call on the old stream still uses while a new entry gets it (wrong sums or prefixes).
TEST_F(CudaWorkspace, TenThousandStreamsKeepDeviceMemoryBounded) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  constexpr int kStreams = 10000;
  const std::int64_t n_reduce = 100003, n_scan = 4096 + 5;  // several blocks; two scan tiles
  const auto reduce_data = small_ints(n_reduce, rng), scan_data = small_ints(n_scan, rng);
  const DeviceArray<std::int32_t> reduce_in = to_device(reduce_data.data(), reduce_data.size(), 0, n_reduce);
  const DeviceArray<std::int32_t> scan_in = to_device(scan_data.data(), scan_data.size(), 0, n_scan);
  const DeviceBuffer sums(kStreams * sizeof(std::int64_t));
  const DeviceBuffer prefixes(static_cast<std::size_t>(kStreams) * n_scan * sizeof(ScanOut));
  FOLDKIT_CUDA_CHECK(cudaMemset(sums.get(), 0xFF, sums.bytes()));
  FOLDKIT_CUDA_CHECK(cudaMemset(prefixes.get(), 0xFF, prefixes.bytes()));

  auto use_new_streams = [&](int count) {
    for (int i = 0; i < count; ++i) {
      const Stream stream;
      cuda::sum(reduce_in.ptr, n_reduce, sums.as<std::int64_t>() + i, stream);
      cuda::inclusive_scan<ReduceOp::sum>(scan_in.ptr, n_scan, prefixes.as<ScanOut>() + std::int64_t{i} * n_scan,
                                          stream);
    }  // each stream is destroyed with its work possibly still pending
  };
  // Warm-up: fill the caches (and load the kernels, and let the memory pool reserve its first
  // segment: 32 MB on the H100) before measuring, so that only growth per stream is counted.
  use_new_streams(16);
  const std::int64_t before = device_bytes_in_use();
  use_new_streams(kStreams);
  const std::int64_t grown = device_bytes_in_use() - before;
  RecordProperty("device_bytes_grown", std::to_string(grown));
  EXPECT_LT(grown, std::int64_t{16} << 20) << "device memory in use grew by " << grown << " bytes over "
                                           << kStreams << " streams";

  const std::int64_t want_sum = host_sum(reduce_data);
  const std::vector<ScanOut> want_prefix = host_inclusive_sum(scan_data);
  const auto got_sums = from_device<std::int64_t>(sums);
  const auto got_prefixes = from_device<ScanOut>(prefixes);
  int wrong_sums = 0, wrong_scans = 0;
  for (int i = 0; i < kStreams; ++i) {
    if (got_sums[static_cast<std::size_t>(i)] != want_sum) ++wrong_sums;
    for (std::int64_t j = 0; j < n_scan; ++j)
      if (got_prefixes[static_cast<std::size_t>(i * n_scan + j)] != want_prefix[static_cast<std::size_t>(j)]) {
        ++wrong_scans;
        break;
      }
  }
  EXPECT_EQ(wrong_sums, 0) << "streams whose convenient sum was wrong";
  EXPECT_EQ(wrong_scans, 0) << "streams whose convenient scan was wrong";
}

// True when the convenient form, called on `stream` while it is being captured, is refused with
// invalid_argument: i.e. this thread's cache holds no workspace for that stream.
::testing::AssertionResult capture_finds_no_workspace(cudaStream_t stream, const std::int32_t* in, std::int64_t n,
                                                      std::int64_t* d_sum, ScanOut* d_prefix) {
  FOLDKIT_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const auto reduce_refused = throws_errc(Errc::invalid_argument, [&] { cuda::sum(in, n, d_sum, stream); });
  const auto scan_refused =
      throws_errc(Errc::invalid_argument, [&] { cuda::inclusive_scan<ReduceOp::sum>(in, n, d_prefix, stream); });
  cudaGraph_t graph = nullptr;
  (void)cudaStreamEndCapture(stream, &graph);
  if (graph != nullptr) (void)cudaGraphDestroy(graph);
  (void)cudaGetLastError();
  if (!reduce_refused) return ::testing::AssertionFailure() << "reduce: " << reduce_refused.message();
  if (!scan_refused) return ::testing::AssertionFailure() << "scan: " << scan_refused.message();
  return ::testing::AssertionSuccess();
}

// 12 live streams (more than the 8 cached per device) used round robin without synchronising, so
// every call evicts the workspace of a stream whose work may still be running: the eviction must
// wait for that work (the event after its last use), and results stay exact. Then
// release_stream_workspaces() empties the cache (a capture finds no workspace: fails if release
// keeps entries) and later calls allocate again and stay exact.
TEST_F(CudaWorkspace, MoreLiveStreamsThanCachedEntriesAndRelease) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  constexpr int kLive = 12, kRounds = 6, kCalls = kLive * kRounds;
  const std::int64_t n_reduce = capped({(1 << 22) + 7}).front(), n_scan = capped({(1 << 18) + 3}).front();
  std::vector<std::vector<std::int32_t>> data;
  std::vector<DeviceArray<std::int32_t>> in;
  for (int k = 0; k < kLive; ++k) {
    data.push_back(small_ints(n_reduce, rng));
    in.push_back(to_device(data.back().data(), data.back().size(), 0, n_reduce));
  }
  const DeviceBuffer sums(kCalls * sizeof(std::int64_t));
  const DeviceBuffer prefixes(static_cast<std::size_t>(kCalls) * n_scan * sizeof(ScanOut));
  std::vector<Stream> streams(kLive);

  auto run_and_check = [&](const char* phase) {
    SCOPED_TRACE(phase);
    FOLDKIT_CUDA_CHECK(cudaMemset(sums.get(), 0xFF, sums.bytes()));
    FOLDKIT_CUDA_CHECK(cudaMemset(prefixes.get(), 0xFF, prefixes.bytes()));
    for (int r = 0; r < kRounds; ++r)
      for (int k = 0; k < kLive; ++k) {
        const int call = r * kLive + k;
        cuda::sum(in[k].ptr, n_reduce, sums.as<std::int64_t>() + call, streams[k]);
        cuda::inclusive_scan<ReduceOp::sum>(in[k].ptr, n_scan, prefixes.as<ScanOut>() + std::int64_t{call} * n_scan,
                                            streams[k]);
      }
    FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
    const auto got_sums = from_device<std::int64_t>(sums);
    const auto got_prefixes = from_device<ScanOut>(prefixes);
    for (int k = 0; k < kLive && !HasFailure(); ++k) {
      const std::int64_t want_sum = host_sum(data[k]);
      const std::vector<ScanOut> want_prefix =
          host_inclusive_sum(std::vector<std::int32_t>(data[k].begin(), data[k].begin() + n_scan));
      for (int r = 0; r < kRounds; ++r) {
        const int call = r * kLive + k;
        EXPECT_EQ(got_sums[call], want_sum) << "stream " << k << ", round " << r;
        const std::vector<ScanOut> got(got_prefixes.begin() + std::int64_t{call} * n_scan,
                                       got_prefixes.begin() + std::int64_t{call + 1} * n_scan);
        EXPECT_TRUE(got == want_prefix) << "scan of stream " << k << ", round " << r;
      }
    }
  };
  // Reductions alone, all queued behind a gate (a large memset on another stream that every live
  // stream waits for), so each eviction frees a workspace whose kernel has not run yet: without
  // the wait for its event, the pool hands that memory to the new stream's workspace and the two
  // reductions run on it together (wrong sums).
  {
    SCOPED_TRACE("reductions queued behind a gate");
    const DeviceBuffer gate_bytes(std::size_t{4} << 30);
    const Stream gate;
    cudaEvent_t gate_done = nullptr;
    FOLDKIT_CUDA_CHECK(cudaEventCreateWithFlags(&gate_done, cudaEventDisableTiming));
    FOLDKIT_CUDA_CHECK(cudaMemsetAsync(sums.get(), 0xFF, sums.bytes(), gate));
    FOLDKIT_CUDA_CHECK(cudaMemsetAsync(gate_bytes.get(), 1, gate_bytes.bytes(), gate));
    FOLDKIT_CUDA_CHECK(cudaEventRecord(gate_done, gate));
    for (int k = 0; k < kLive; ++k) FOLDKIT_CUDA_CHECK(cudaStreamWaitEvent(streams[k], gate_done, 0));
    for (int r = 0; r < kRounds; ++r)
      for (int k = 0; k < kLive; ++k) cuda::sum(in[k].ptr, n_reduce, sums.as<std::int64_t>() + r * kLive + k, streams[k]);
    FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
    (void)cudaEventDestroy(gate_done);
    const auto got_sums = from_device<std::int64_t>(sums);
    for (int k = 0; k < kLive; ++k)
      for (int r = 0; r < kRounds; ++r)
        EXPECT_EQ(got_sums[r * kLive + k], host_sum(data[k])) << "stream " << k << ", round " << r;
  }
  run_and_check("12 live streams");
  cuda::release_stream_workspaces();
  EXPECT_TRUE(capture_finds_no_workspace(streams[0], in[0].ptr, 4096, sums.as<std::int64_t>(),
                                         prefixes.as<ScanOut>()))
      << "after release_stream_workspaces()";
  run_and_check("after release_stream_workspaces()");
}

// Owns device memory until destroyed: cudaMalloc chunks from 1 GiB down to 64 KiB until nothing
// more fits, then stream-ordered chunks of the default pool (in case it still holds reserved
// memory) from 1 MiB down to 256 B, so that no convenient-form workspace can be allocated.
class DeviceFiller {
 public:
  explicit DeviceFiller(cudaStream_t stream) : stream_(stream) {
    for (std::size_t size = std::size_t{1} << 30; size >= (std::size_t{64} << 10);) {
      void* p = nullptr;
      if (cudaMalloc(&p, size) == cudaSuccess) {
        chunks_.push_back(p);
      } else {
        (void)cudaGetLastError();
        size /= 2;
      }
    }
    for (std::size_t size = std::size_t{1} << 20; size >= 256;) {
      void* p = nullptr;
      if (cudaMallocAsync(&p, size, stream_) == cudaSuccess) {
        pool_chunks_.push_back(p);
      } else {
        (void)cudaGetLastError();
        size /= 2;
      }
    }
  }
  ~DeviceFiller() { release(); }
  DeviceFiller(const DeviceFiller&) = delete;
  DeviceFiller& operator=(const DeviceFiller&) = delete;
  void release() {
    for (void* p : pool_chunks_) (void)cudaFreeAsync(p, stream_);
    (void)cudaStreamSynchronize(stream_);
    for (void* p : chunks_) (void)cudaFree(p);
    pool_chunks_.clear();
    chunks_.clear();
  }
  std::size_t chunks() const { return chunks_.size(); }

 private:
  cudaStream_t stream_;
  std::vector<void*> chunks_, pool_chunks_;
};

// Out of device memory for a new stream's workspace: the convenient reduce and scan throw
// Error(out_of_memory) (not cuda_error), leave the runtime's error cleared and no cache entry
// behind (a capture of that stream then finds none), and work with exact results once memory
// is free. Fails if the code is cuda_error, if the failed call caches a half-made entry, or if
// the failure sticks.
TEST_F(CudaWorkspace, OutOfMemoryForConvenientWorkspaceThrowsAndRecovers) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t n = 100003;
  const auto data = small_ints(n, rng);
  const DeviceArray<std::int32_t> in = to_device(data.data(), data.size(), 0, n);
  DeviceSlot sum_out;
  const DeviceBuffer prefix_out(static_cast<std::size_t>(n) * sizeof(ScanOut));
  const Stream stream;  // new: no cached workspace

  // Start deterministic: no cached workspace of this thread, and nothing reserved by the pool.
  cuda::release_stream_workspaces();
  int device = 0;
  FOLDKIT_CUDA_CHECK(cudaGetDevice(&device));
  cudaMemPool_t pool = nullptr;
  FOLDKIT_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  FOLDKIT_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
  {
    DeviceFiller filler(stream);
    ASSERT_GT(filler.chunks(), 0u);
    EXPECT_TRUE(throws_errc(Errc::out_of_memory, [&] { cuda::sum(in.ptr, n, sum_out.get<std::int64_t>(), stream); }))
        << "convenient reduce, device full";
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the failed allocation's error must be cleared";
    EXPECT_TRUE(throws_errc(Errc::out_of_memory, [&] {
      cuda::inclusive_scan<ReduceOp::sum>(in.ptr, n, prefix_out.as<ScanOut>(), stream);
    })) << "convenient scan, device full";
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the failed allocation's error must be cleared";
  }  // the filler frees everything
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(capture_finds_no_workspace(stream, in.ptr, n, sum_out.get<std::int64_t>(), prefix_out.as<ScanOut>()))
      << "a failed allocation must not leave a cache entry";

  sum_out.poison(stream);
  FOLDKIT_CUDA_CHECK(cudaMemsetAsync(prefix_out.get(), 0xFF, prefix_out.bytes(), stream));
  cuda::sum(in.ptr, n, sum_out.get<std::int64_t>(), stream);
  cuda::inclusive_scan<ReduceOp::sum>(in.ptr, n, prefix_out.as<ScanOut>(), stream);
  EXPECT_EQ(sum_out.take<std::int64_t>("convenient sum after the memory came back", stream), host_sum(data));
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_TRUE(from_device<ScanOut>(prefix_out) == host_inclusive_sum(data))
      << "convenient scan after the memory came back";
}

}  // namespace
}  // namespace foldkit::test
