// Every full-array reduction of f64 (one dtype per file keeps compile units small and parallel).
#include "cuda/dispatch/reduce_typed.cuh"

FOLDKIT_INSTANTIATE_REDUCE(double)
