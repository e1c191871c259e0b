// Recipe checks shared by the JSON parser and by compile() for recipes built in C++.
#pragma once
#include "pock/compiler/compiler.hpp"

namespace pock {

// Every value in range and every string one of its choices; errors name the field path
// ("optimizer.beta2", "trainable[1].match").
Status validate_recipe(const Recipe& recipe);

}  // namespace pock
