// The suites main.cpp can run. Each prints its own header and table, writes its CSV when
// asked, and returns the number of failed result checks (0: every check passed).
#pragma once

#include "options.hpp"

namespace fkbench {

// CPU backend: foldkit::cpu vs a plain single-thread loop vs an all-core streaming-read ceiling.
// `why` is shown in the title, e.g. "no GPU found".
int run_cpu_table(const Options& opt, const char* why);
// `foldkit-bench axes` on the CPU backend (axes_cpu.cpp): foldkit::cpu::reduce along the axes of
// the 2^26-element matrices vs an all-core read ceiling. `why` is shown in the title.
int run_axes_cpu(const Options& opt, const char* why);

#if FOLDKIT_BENCH_CUDA
bool gpu_present();                       // foldkit::cuda::device_available()
int run_gpu_table(const Options& opt);    // gpu_suite.cpp
int run_sweep(const Options& opt);        // sweep.cpp
int run_ladder(const Options& opt);       // ladder_suite.cpp (+ ladder_sweep.cpp)
int run_scan_table(const Options& opt);   // scan_suite.cpp
int run_axes_gpu(const Options& opt);     // axes_suite.cpp: tensors along axes, segmented sums
int run_axes_scan_sweep(const Options& opt);  // axes_scan_sweep.cu: the column-scan geometries
#endif

}  // namespace fkbench
