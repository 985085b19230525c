// Checks of output views shared by the tensor reductions' and scans' preparation
// (reduce_prepare.cpp, tensor_scan_prepare.cpp): one rule, one message for each.
#pragma once

#include <cstdint>
#include <string>

#include "foldkit/tensor.hpp"

namespace foldkit::detail {

// "(2, 3, 4)": a shape or strides list for error messages.
std::string shape_text(const std::int64_t* shape, int rank);

// Throws Error(invalid_argument), naming `what`, unless no two elements of `out` share an
// address: taken by increasing stride, every dimension of size > 1 must step past everything
// the smaller-stride dimensions span. Sufficient (it also rejects a few interleaved layouts that
// do not collide; no framework makes those) and cheap.
void check_no_self_overlap(const TensorView& out, const char* what);

// Whether the byte ranges of two views with elements intersect.
bool views_overlap(const TensorView& a, const TensorView& b);

}  // namespace foldkit::detail
