#include "support/test_config.hpp"

#include <cstdlib>
#include <limits>
#include <random>
#include <string>

namespace foldkit::test {
namespace {

std::uint64_t parse_env_u64(const char* name, std::uint64_t fallback, bool* found) {
  const char* text = std::getenv(name);
  *found = text != nullptr && *text != '\0';
  if (!*found) return fallback;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 0);
  if (end == text || *end != '\0') {
    ADD_FAILURE() << name << "='" << text << "' is not an unsigned integer";
    *found = false;
    return fallback;
  }
  return v;
}

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

std::uint64_t base_seed() {
  static const std::uint64_t seed = [] {
    bool found = false;
    const std::uint64_t from_env = parse_env_u64("FOLDKIT_TEST_SEED", 0, &found);
    if (found) return from_env;
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }();
  return seed;
}

std::int64_t max_n() {
  static const std::int64_t cap = [] {
    bool found = false;
    const std::uint64_t v = parse_env_u64("FOLDKIT_TEST_MAX_N", 0, &found);
    if (!found) return std::numeric_limits<std::int64_t>::max();
    return static_cast<std::int64_t>(v < 1 ? 1 : v);
  }();
  return cap;
}

static std::string current_test_name() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) return "(no test)";
  return std::string(info->test_suite_name()) + "." + info->name();
}

std::uint64_t test_seed() { return base_seed() ^ fnv1a(current_test_name()); }

std::string seed_note() {
  const std::string s = std::to_string(base_seed());
  return "FOLDKIT_TEST_SEED=" + s + " (replay: FOLDKIT_TEST_SEED=" + s +
         " <test binary> --gtest_filter='" + current_test_name() + "')";
}

std::vector<std::int64_t> capped(std::vector<std::int64_t> sizes) {
  std::vector<std::int64_t> kept;
  for (std::int64_t n : sizes)
    if (n <= max_n()) kept.push_back(n);
  if (kept.empty() && !sizes.empty()) kept.push_back(max_n());
  return kept;
}

std::vector<std::int64_t> standard_sizes() {
  std::vector<std::int64_t> sizes = {1, 2, 3};
  for (int k : {5, 10, 12, 15, 16, 20}) {
    const std::int64_t p = std::int64_t{1} << k;
    sizes.insert(sizes.end(), {p - 1, p, p + 1});
  }
  sizes.insert(sizes.end(), {65521, 1000003});
  return capped(sizes);
}

}  // namespace foldkit::test
