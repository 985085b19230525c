// Every full-array reduction of f32 (one dtype per file keeps compile units small and parallel),
// and the sweep's entry points for the f32 ops it tunes beside the sums.
#include "cuda/dispatch/reduce_typed.cuh"

FOLDKIT_INSTANTIATE_REDUCE(float)
FOLDKIT_INSTANTIATE_REDUCE_WITH_CONFIG(foldkit::ReduceOp::max, float)
FOLDKIT_INSTANTIATE_REDUCE_WITH_CONFIG(foldkit::ReduceOp::argmax, float)
