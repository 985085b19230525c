// source_commit(): see run_info.hpp.
#include "run_info.hpp"

#include <cstdio>
#include <cstdlib>

#ifndef FOLDKIT_SOURCE_DIR
#define FOLDKIT_SOURCE_DIR "."
#endif

namespace fkbench {

std::string source_commit() {
  if (const char* env = std::getenv("FOLDKIT_COMMIT"); env && *env) return env;
  const std::string cmd = std::string("git -C '") + FOLDKIT_SOURCE_DIR +
                          "' describe --always --dirty --abbrev=12 --match=NONE 2>/dev/null";
  std::string out;
  if (std::FILE* p = popen(cmd.c_str(), "r")) {
    char buf[128];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out.empty() ? "unknown" : out;
}

}  // namespace fkbench
