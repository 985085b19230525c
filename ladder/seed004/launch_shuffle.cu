// Seed 004's launchers for kernel_3 (warp-shuffle block scan) and kernel_4 (thread coarsening):
// one instantiation per power-of-two block size (x batch 1, 2, 4, 8, 16 for kernel_4), picked at
// run time. n == 0 launches nothing (there is no output element to write).
#include "ladder/seed004/dispatch.hpp"
#include "ladder/seed004/kernels.cuh"
#include "ladder/seed004/launch_args.hpp"

namespace foldkit::ladder::seed004 {

template <class T>
void launch_kernel_3(const void* in, std::size_t n, void* out, void*, const Shape& s,
                     cudaStream_t stream) {
  require_shape(accepts_block(s), "seed004/kernel_3", s);
  if (n == 0) return;
  const LaunchArgs<T> a = launch_args<T>(in, n, out, tile_of_block(s), s);
  with_pow2_block(s.block_threads, "seed004", [&](auto block) {
    constexpr int B = decltype(block)::value;
    kernel_3<T, B><<<a.grid, B, 0, stream>>>(a.in, a.out, a.n, a.tiles);
  });
  check_launch("seed004/kernel_3");
}

template <class T>
void launch_kernel_4(const void* in, std::size_t n, void* out, void*, const Shape& s,
                     cudaStream_t stream) {
  require_shape(accepts_coarsened(s), "seed004/kernel_4", s);
  if (n == 0) return;
  const LaunchArgs<T> a = launch_args<T>(in, n, out, tile_of_coarsened(s), s);
  with_pow2_block(s.block_threads, "seed004", [&](auto block) {
    constexpr int B = decltype(block)::value;
    with_batch(s.items_per_thread, [&](auto batch) {
      constexpr int K = decltype(batch)::value;
      kernel_4<T, B, K><<<a.grid, B, 0, stream>>>(a.in, a.out, a.n, a.tiles);
    });
  });
  check_launch("seed004/kernel_4");
}

template void launch_kernel_3<int>(const void*, std::size_t, void*, void*, const Shape&,
                                   cudaStream_t);
template void launch_kernel_3<float>(const void*, std::size_t, void*, void*, const Shape&,
                                     cudaStream_t);
template void launch_kernel_4<int>(const void*, std::size_t, void*, void*, const Shape&,
                                   cudaStream_t);
template void launch_kernel_4<float>(const void*, std::size_t, void*, void*, const Shape&,
                                     cudaStream_t);

}  // namespace foldkit::ladder::seed004
