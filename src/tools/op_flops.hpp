// Floating-point operations of one op instance, from its shapes and attributes: the counts behind
// `pockc inspect`'s FLOPs per phase. A multiply-add counts 2. docs/pockc.md lists the formulas.
#pragma once
#include <cstdint>

#include "blob/program_spec.hpp"

namespace pock::tools {

int64_t op_flops(const ProgramSpec& spec, const OpSpec& op);

}  // namespace pock::tools
