// Every prefix scan of u32 (one dtype per file keeps compile units small and parallel).
#include "cuda/dispatch/scan_typed.cuh"

FOLDKIT_INSTANTIATE_SCAN(std::uint32_t)
