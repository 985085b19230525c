// The shared typed suites (tests/common/reduce_typed_tests.hpp) on the CUDA backend.
#include "common/reduce_typed_tests.hpp"
#include "support/cuda_backend.hpp"

FOLDKIT_INSTANTIATE_REDUCE_SUITES(Cuda, foldkit::test::CudaBackend)
