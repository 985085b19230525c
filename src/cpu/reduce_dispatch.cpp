// The type-erased CPU entry point: runtime (op, dtype) -> reduce<Op, T>.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "common/erased_dispatch.hpp"
#include "foldkit/reduce.hpp"

namespace foldkit::cpu {
namespace {

template <class R> struct is_arg_result : std::false_type {};
template <class V> struct is_arg_result<ArgResult<V>> : std::true_type {};

template <ReduceOp Op, class T>
void reduce_into(const void* in, std::int64_t n, void* out) {
  using R = reduce_result_t<Op, T>;
  const R r = reduce<Op, T>(static_cast<const T*>(in), n);
  // memcpy: `out` is only promised to point at an R, and through void* we should not assume more.
  // ArgResult is written field by field so its padding bytes are never copied out (they are
  // indeterminate, and callers comparing results bytewise would see noise).
  if constexpr (is_arg_result<R>::value) {
    std::memcpy(static_cast<char*>(out) + offsetof(R, value), &r.value, sizeof r.value);
    std::memcpy(static_cast<char*>(out) + offsetof(R, index), &r.index, sizeof r.index);
  } else {
    std::memcpy(out, &r, sizeof r);
  }
}

}  // namespace

void reduce(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out) {
  erased::check_enums(op, dtype);
  if (out == nullptr) throw Error(Errc::invalid_argument, "out is null");
  detail::check_host_input(out, 1);  // the one result is written whatever n is: wrong_memory for device memory
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    erased::visit_reduce_op(op, [&](auto op_tag) { reduce_into<decltype(op_tag)::value, T>(in, n, out); });
  });
}

}  // namespace foldkit::cpu
