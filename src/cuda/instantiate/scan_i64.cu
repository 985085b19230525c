// Every prefix scan of i64 (one dtype per file keeps compile units small and parallel).
#include "cuda/dispatch/scan_typed.cuh"

FOLDKIT_INSTANTIATE_SCAN(std::int64_t)
