// foldkit reports bad input and CUDA failures by throwing foldkit::Error; nothing is
// reported through return codes and nothing is silently clamped or ignored.
#pragma once

#include <stdexcept>
#include <string>

namespace foldkit {

enum class Errc : int {
  invalid_argument,   // null pointer with n > 0, negative n, misaligned or too-small workspace
  wrong_memory,       // a host pointer where device memory is required, or the reverse
  unsupported,        // an op x dtype (or enum value) this build does not provide
  empty_input,        // min/max/argmin/argmax of zero elements
  cuda_error,         // a CUDA runtime call failed; what() carries CUDA's own message
  no_device,          // the CUDA backend was asked for, but no usable GPU is present
  out_of_memory,      // device memory ran out (cudaErrorMemoryAllocation), e.g. for the workspace
                      // of a convenient-form call; nothing was changed, so the call can be retried
};

constexpr const char* errc_name(Errc e) {
  switch (e) {
    case Errc::invalid_argument: return "invalid_argument";
    case Errc::wrong_memory: return "wrong_memory";
    case Errc::unsupported: return "unsupported";
    case Errc::empty_input: return "empty_input";
    case Errc::cuda_error: return "cuda_error";
    case Errc::no_device: return "no_device";
    case Errc::out_of_memory: return "out_of_memory";
  }
  return "?";
}

class Error : public std::runtime_error {
 public:
  Error(Errc code, const std::string& what)
      : std::runtime_error(std::string("foldkit: ") + errc_name(code) + ": " + what), code_(code) {}
  Errc code() const noexcept { return code_; }

 private:
  Errc code_;
};

}  // namespace foldkit
