// The shared typed suites (tests/common/reduce_typed_tests.hpp) on the CPU backend.
#include "common/reduce_typed_tests.hpp"
#include "support/cpu_backend.hpp"

FOLDKIT_INSTANTIATE_REDUCE_SUITES(Cpu, foldkit::test::CpuBackend)
