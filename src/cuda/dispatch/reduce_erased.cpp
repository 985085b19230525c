// Type-erased CUDA entry points (op and dtype chosen at run time) and the tuning hooks.
#include <string>

#include "common/erased_dispatch.hpp"
#include "cuda/dispatch/reduce_config.hpp"
#include "foldkit/cuda/reduce.hpp"
#include "foldkit/cuda/tuning/reduce_tuning.hpp"

namespace foldkit::cuda {

namespace detail {
template <ReduceOp Op, class T>
void reduce_with_config_typed(const T* d_in, std::int64_t n, reduce_result_t<Op, T>* d_out, Workspace ws,
                              ReduceLaunchConfig cfg, cudaStream_t stream);

tuning::ReduceFamily reduce_family_of(ReduceOp op, DType dtype) {
  erased::check_enums(op, dtype);
  std::size_t accum_bytes = 0;
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    erased::visit_reduce_op(op,
                            [&](auto op_tag) { accum_bytes = sizeof(reduce_accum_t<decltype(op_tag)::value, T>); });
  });
  return tuning::reduce_family(dtype_size(dtype), accum_bytes, op == ReduceOp::argmin || op == ReduceOp::argmax);
}

ReduceLaunchConfig tuned_reduce_config(ReduceOp op, DType dtype, std::int64_t n) {
  const tuning::ReduceTuning t =
      tuning::reduce_tuning_for(reduce_family_of(op, dtype), static_cast<std::size_t>(n < 0 ? 0 : n) * dtype_size(dtype));
  return ReduceLaunchConfig{t.block_threads, t.blocks_per_sm, t.unroll, t.programmatic_launch};
}

bool reduce_with_config_supports(ReduceOp op, DType dtype) {
  return op == ReduceOp::sum || (dtype == DType::f32 && (op == ReduceOp::max || op == ReduceOp::argmax));
}

void reduce_with_config(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, Workspace ws,
                        ReduceLaunchConfig cfg, cudaStream_t stream) {
  erased::check_enums(op, dtype);
  if (!reduce_with_config_supports(op, dtype))
    throw Error(Errc::unsupported, std::string("reduce_with_config: no entry for ") + op_name(op) + " of " +
                                       dtype_name(dtype));
  if (op == ReduceOp::sum) {
    visit_dtype(dtype, [&](auto tag) {
      using T = decltype(tag);
      reduce_with_config_typed<ReduceOp::sum, T>(static_cast<const T*>(d_in), n,
                                                 static_cast<reduce_result_t<ReduceOp::sum, T>*>(d_out), ws, cfg, stream);
    });
  } else if (op == ReduceOp::max) {
    reduce_with_config_typed<ReduceOp::max, float>(static_cast<const float*>(d_in), n,
                                                   static_cast<reduce_result_t<ReduceOp::max, float>*>(d_out), ws, cfg,
                                                   stream);
  } else {
    reduce_with_config_typed<ReduceOp::argmax, float>(static_cast<const float*>(d_in), n,
                                                      static_cast<reduce_result_t<ReduceOp::argmax, float>*>(d_out), ws,
                                                      cfg, stream);
  }
}
}  // namespace detail

void reduce(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, Workspace ws, cudaStream_t stream) {
  erased::check_enums(op, dtype);
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    erased::visit_reduce_op(op, [&](auto op_tag) {
      constexpr ReduceOp kOp = decltype(op_tag)::value;
      reduce<kOp, T>(static_cast<const T*>(d_in), n, static_cast<reduce_result_t<kOp, T>*>(d_out), ws, stream);
    });
  });
}

void reduce(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, cudaStream_t stream) {
  erased::check_enums(op, dtype);
  reduce(op, dtype, d_in, n, d_out, detail::stream_workspace(stream), stream);
}

}  // namespace foldkit::cuda
