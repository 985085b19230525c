// Every prefix scan of u64 (one dtype per file keeps compile units small and parallel).
#include "cuda/dispatch/scan_typed.cuh"

FOLDKIT_INSTANTIATE_SCAN(std::uint64_t)
