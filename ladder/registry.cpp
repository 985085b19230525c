// The ladder's registry: every seed's variants in one list.
#include "ladder/variant.hpp"

namespace foldkit::ladder {

const std::vector<Variant>& all_variants() {
  static const std::vector<Variant> variants = [] {
    std::vector<Variant> all;
    for (auto* seed : {&seed000_variants, &seed002_variants, &seed003_variants, &seed004_variants}) {
      std::vector<Variant> v = seed();
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  }();
  return variants;
}

}  // namespace foldkit::ladder
