// Seed 004's launchers for kernel_0 (global memory), kernel_1 (shared memory) and kernel_2
// (double buffer): one instantiation per power-of-two block size, picked at run time.
// n == 0 launches nothing (there is no output element to write).
#include "ladder/seed004/dispatch.hpp"
#include "ladder/seed004/kernels.cuh"
#include "ladder/seed004/launch_args.hpp"

namespace foldkit::ladder::seed004 {

template <class T>
void launch_kernel_0(const void* in, std::size_t n, void* out, void*, const Shape& s,
                     cudaStream_t stream) {
  require_shape(accepts_block(s), "seed004/kernel_0", s);
  if (n == 0) return;
  const LaunchArgs<T> a = launch_args<T>(in, n, out, tile_of_block(s), s);
  with_pow2_block(s.block_threads, "seed004", [&](auto block) {
    constexpr int B = decltype(block)::value;
    kernel_0<T, B><<<a.grid, B, 0, stream>>>(a.in, a.out, a.n, a.tiles);
  });
  check_launch("seed004/kernel_0");
}

template <class T>
void launch_kernel_1(const void* in, std::size_t n, void* out, void*, const Shape& s,
                     cudaStream_t stream) {
  require_shape(accepts_block(s), "seed004/kernel_1", s);
  if (n == 0) return;
  const LaunchArgs<T> a = launch_args<T>(in, n, out, tile_of_block(s), s);
  with_pow2_block(s.block_threads, "seed004", [&](auto block) {
    constexpr int B = decltype(block)::value;
    kernel_1<T, B><<<a.grid, B, 0, stream>>>(a.in, a.out, a.n, a.tiles);
  });
  check_launch("seed004/kernel_1");
}

template <class T>
void launch_kernel_2(const void* in, std::size_t n, void* out, void*, const Shape& s,
                     cudaStream_t stream) {
  require_shape(accepts_block(s), "seed004/kernel_2", s);
  if (n == 0) return;
  const LaunchArgs<T> a = launch_args<T>(in, n, out, tile_of_block(s), s);
  with_pow2_block(s.block_threads, "seed004", [&](auto block) {
    constexpr int B = decltype(block)::value;
    kernel_2<T, B><<<a.grid, B, 0, stream>>>(a.in, a.out, a.n, a.tiles);
  });
  check_launch("seed004/kernel_2");
}

template void launch_kernel_0<int>(const void*, std::size_t, void*, void*, const Shape&,
                                   cudaStream_t);
template void launch_kernel_0<float>(const void*, std::size_t, void*, void*, const Shape&,
                                     cudaStream_t);
template void launch_kernel_1<int>(const void*, std::size_t, void*, void*, const Shape&,
                                   cudaStream_t);
template void launch_kernel_1<float>(const void*, std::size_t, void*, void*, const Shape&,
                                     cudaStream_t);
template void launch_kernel_2<int>(const void*, std::size_t, void*, void*, const Shape&,
                                   cudaStream_t);
template void launch_kernel_2<float>(const void*, std::size_t, void*, void*, const Shape&,
                                     cudaStream_t);

}  // namespace foldkit::ladder::seed004
