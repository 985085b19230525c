// Every prefix scan of bf16 (one dtype per file keeps compile units small and parallel).
#include "cuda/dispatch/scan_typed.cuh"

FOLDKIT_INSTANTIATE_SCAN(foldkit::bfloat16)
