// The attribute "cpu_algorithm" (ir/conv_algorithm.hpp) of a convolution, parsed at prepare by the
// cpu backend, the one backend that chooses between these algorithms.
#pragma once
#include <optional>

#include "ir/conv_algorithm.hpp"
#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

// nullopt when the op does not name one (the backend's own rule then chooses); an unknown name or
// a value that is not a string is an error naming the op and the attribute.
Status parse(const pock_op_desc& op, std::optional<ConvAlgorithm>* out);

}  // namespace pock::params
