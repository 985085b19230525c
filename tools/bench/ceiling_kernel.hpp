// The streaming-read ceiling: the fastest this GPU reads a buffer once, which is the bound any
// full-array reduction is measured against. It must be a real ceiling, so the kernel does
// nothing but read: 16-byte streaming loads (ld.global.cs), several independent loads in flight
// per thread, a grid sized from the SM count, and a result written only under a condition the
// compiler cannot see through (so the loads stay). It is launched with programmatic dependent
// launch, as the library's reductions are. Several launch shapes are timed and the fastest wins
// (see gpu_suite.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

namespace fkbench {

struct CeilingVariant {
  int blocks_per_sm;  // grid = min(blocks_per_sm * SMs, blocks that give every thread a load)
  int block_threads;
  int unroll;  // independent 16-byte loads per thread per iteration: 1, 2, 4 or 8
};

std::vector<CeilingVariant> ceiling_variants();
// The grid a variant launches over `bytes`: blocks_per_sm x SMs, or fewer when fewer blocks give
// every thread a 16-byte word.
unsigned ceiling_grid(std::size_t bytes, const CeilingVariant& v, int sm_count);
std::string describe(const CeilingVariant& v);

// Reads every byte of [d, d + bytes) once. Any alignment and any length: bytes before the first
// 16-byte boundary and after the last one are read with byte loads. d_sink: one unsigned of
// device memory, written only when the XOR of all data equals `sentinel` (practically never).
void launch_read_ceiling(const void* d, std::size_t bytes, const CeilingVariant& v, int sm_count, unsigned* d_sink,
                         unsigned sentinel, cudaStream_t s);

}  // namespace fkbench
