// Every full-array reduction of i32 (one dtype per file keeps compile units small and parallel).
#include "cuda/dispatch/reduce_typed.cuh"

FOLDKIT_INSTANTIATE_REDUCE(std::int32_t)
