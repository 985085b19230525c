// What the type-erased entry points of both backends share (src/cpu/reduce_dispatch.cpp,
// src/cpu/scan_dispatch.cpp, src/cuda/dispatch/reduce_erased.cpp, scan_erased.cpp): the checks
// of a run-time (op, dtype) pair, and the switch from a run-time op and dtype to compile-time
// ones (the scans, all six forms: visit_scan over a WholeArray, Blocks or Segments shape).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "foldkit/dtype.hpp"
#include "foldkit/error.hpp"
#include "foldkit/ops.hpp"
#include "foldkit/scalar.hpp"
#include "foldkit/scan.hpp"  // is_scan_op, scan_result_t

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

// The shape of an erased scan: the whole array, blocks of block_length, or segments between
// offsets (host or device memory: passed on to the typed form, never read here).
struct WholeArray {};
struct Blocks {
  std::int64_t block_length;
};
struct Segments {
  const std::int64_t* offsets;
  std::int64_t num_segments;
};

// The seed argument of an inclusive scan's callback: there is none.
struct NoInit {};
template <class Seed>
inline constexpr bool is_inclusive_v = std::is_same_v<Seed, NoInit>;

// Every erased scan, inclusive (init == nullptr) or exclusive: check_scan, then the init
// converted exactly to the scan's result type R (Scalar::to_exact: Error(invalid_argument)
// before anything is written if it does not convert), then f(op_tag, dtype_tag, seed) for the
// compile-time pair, where seed is that R, or NoInit{} for an inclusive scan.
template <class F>
void visit_scan(ReduceOp op, DType dtype, const Scalar* init, F&& f) {
  check_scan(op, dtype);
  visit_dtype(dtype, [&](auto tag) {
    visit_scan_op(op, [&](auto op_tag) {
      using R = scan_result_t<decltype(op_tag)::value, decltype(tag)>;
      if (init == nullptr) f(op_tag, tag, NoInit{});
      else f(op_tag, tag, init->to_exact<R>("exclusive scan init"));
    });
  });
}

}  // namespace foldkit::erased
