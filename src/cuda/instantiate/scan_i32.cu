// Every prefix scan of i32 (one dtype per file keeps compile units small and parallel).
#include "cuda/dispatch/scan_typed.cuh"

FOLDKIT_INSTANTIATE_SCAN(std::int32_t)
