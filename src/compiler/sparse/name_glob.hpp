// Parameter-name globs of the recipe's `trainable` rules. A pattern matches a whole name:
//   *        any run of characters, dots included      "*.bias"
//   ?        one character                             "layer?.weight"
//   {a-b}    a decimal number n with a <= n <= b       "model.layers.{26-29}.mlp.*"
//   {x,y,z}  one of the listed literal alternatives    "*.{q,k,v}_proj.weight"
// Numbers match as written in the name, without leading zeros ("07" is not 7), as PyTorch and
// GGUF print layer indices.
#pragma once
#include <string_view>

#include "pock/status.hpp"

namespace pock {

// A malformed pattern (an unclosed '{', an empty group, a range whose bounds are reversed) is an
// error saying what is wrong; the caller adds which rule it came from.
Status validate_name_glob(std::string_view pattern);

// Whether `pattern` matches all of `name`. A malformed group matches nothing.
bool name_glob_match(std::string_view pattern, std::string_view name);

}  // namespace pock
