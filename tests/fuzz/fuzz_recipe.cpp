// Fuzz target: parse a recipe; one that parses (with a small batch) is compiled against the fuzz
// MLP, so that values the parser lets through reach the compiler.
#include <cstdint>
#include <string_view>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  pock::Result<pock::Recipe> recipe = pock::parse_recipe(text);
  if (!recipe.is_ok()) return 0;
  if (recipe.value().batch_size > 8 || recipe.value().grad_accumulation > 8) return 0;  // time, not safety
  static const pock::Graph graph = pock::fuzz::mlp_graph();
  (void)pock::compile(graph, &recipe.value());
  return 0;
}
