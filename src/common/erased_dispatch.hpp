// What the type-erased entry points of both backends share (src/cpu/reduce_dispatch.cpp,
// src/cpu/scan_dispatch.cpp, src/cuda/dispatch/reduce_erased.cpp, scan_erased.cpp): the checks
// of a run-time (op, dtype) pair, and the switch from a run-time op and dtype to compile-time
// ones (the scans: visit_inclusive_scan / visit_exclusive_scan).
#pragma once

#include <cstring>
#include <string>
#include <type_traits>

#include "foldkit/dtype.hpp"
#include "foldkit/error.hpp"
#include "foldkit/ops.hpp"
#include "foldkit/scan.hpp"  // is_scan_op

namespace foldkit::erased {

// Throws Error(unsupported) for an op or dtype outside the enumerations.
inline void check_enums(ReduceOp op, DType dtype) {
  if (!is_valid(op)) throw Error(Errc::unsupported, "unknown ReduceOp value " + std::to_string(static_cast<int>(op)));
  if (!is_valid(dtype)) throw Error(Errc::unsupported, "unknown DType value " + std::to_string(static_cast<int>(dtype)));
}

// As check_enums, and Error(unsupported) for an op that is not a scan op.
inline void check_scan(ReduceOp op, DType dtype) {
  check_enums(op, dtype);
  if (!is_scan_op(op))
    throw Error(Errc::unsupported, "scans take sum, prod, min or max (not ReduceOp value " +
                                       std::to_string(static_cast<int>(op)) + ")");
}

// Calls f(std::integral_constant<ReduceOp, Op>) for a valid op (checked first).
template <class F>
void visit_reduce_op(ReduceOp op, F&& f) {
  switch (op) {
    case ReduceOp::sum: return f(std::integral_constant<ReduceOp, ReduceOp::sum>{});
    case ReduceOp::prod: return f(std::integral_constant<ReduceOp, ReduceOp::prod>{});
    case ReduceOp::min: return f(std::integral_constant<ReduceOp, ReduceOp::min>{});
    case ReduceOp::max: return f(std::integral_constant<ReduceOp, ReduceOp::max>{});
    case ReduceOp::mean: return f(std::integral_constant<ReduceOp, ReduceOp::mean>{});
    case ReduceOp::argmin: return f(std::integral_constant<ReduceOp, ReduceOp::argmin>{});
    case ReduceOp::argmax: return f(std::integral_constant<ReduceOp, ReduceOp::argmax>{});
  }
}

// The same for a scan op (check_scan first): only the scan ops instantiate f.
template <class F>
void visit_scan_op(ReduceOp op, F&& f) {
  visit_reduce_op(op, [&](auto op_tag) {
    if constexpr (is_scan_op(decltype(op_tag)::value)) f(op_tag);
  });
}

// The one element of type R that a type-erased call's `init` points at (only an R is promised
// there, so it is copied, never dereferenced as R).
template <class R>
R read_init(const void* init) {
  R value;
  std::memcpy(&value, init, sizeof(R));
  return value;
}

// An erased inclusive scan: check_scan, then f(op_tag, dtype_tag) for the compile-time pair.
template <class F>
void visit_inclusive_scan(ReduceOp op, DType dtype, F&& f) {
  check_scan(op, dtype);
  visit_dtype(dtype, [&](auto tag) { visit_scan_op(op, [&](auto op_tag) { f(op_tag, tag); }); });
}

// An erased exclusive scan: check_scan, a non-null init, then f(op_tag, dtype_tag, init as the
// scan's result type).
template <class F>
void visit_exclusive_scan(ReduceOp op, DType dtype, const void* init, F&& f) {
  check_scan(op, dtype);
  if (init == nullptr) throw Error(Errc::invalid_argument, "exclusive_scan: init is null");
  visit_dtype(dtype, [&](auto tag) {
    visit_scan_op(op, [&](auto op_tag) {
      f(op_tag, tag, read_init<scan_result_t<decltype(op_tag)::value, decltype(tag)>>(init));
    });
  });
}

}  // namespace foldkit::erased
