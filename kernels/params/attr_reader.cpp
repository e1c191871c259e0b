#include "kernels/params/attr_reader.hpp"

#include <cmath>
#include <string>

namespace pock::params {

const pock_attr* AttrReader::find(std::string_view name) const {
  for (int32_t i = 0; i < op_.num_attrs; ++i) {
    if (op_.attrs[i].name && name == op_.attrs[i].name) return &op_.attrs[i];
  }
  return nullptr;
}

void AttrReader::invalid(std::string_view name, const std::string& why) {
  if (!status_.is_ok()) return;
  status_ = Status(Code::kInvalidArgument, std::string(op_.op) + " '" + op_.name + "': attribute '" +
                                               std::string(name) + "' " + why);
}

void AttrReader::wrong_kind(const pock_attr& a, const char* wanted) { invalid(a.name, std::string("must be ") + wanted); }

int64_t AttrReader::integer(std::string_view name, int64_t fallback) {
  const pock_attr* a = find(name);
  if (!a) return fallback;
  if (a->kind == POCK_ATTR_INT) return a->i;
  // A whole number written as a float (some exporters do) is still that integer.
  if (a->kind == POCK_ATTR_FLOAT && std::isfinite(a->f) && a->f == std::trunc(a->f) && std::fabs(a->f) < 9.0e15) {
    return static_cast<int64_t>(a->f);
  }
  wrong_kind(*a, "an integer");
  return fallback;
}

double AttrReader::real(std::string_view name, double fallback) {
  const pock_attr* a = find(name);
  if (!a) return fallback;
  if (a->kind == POCK_ATTR_FLOAT) {
    if (std::isnan(a->f)) invalid(name, "is NaN");
    return a->f;
  }
  if (a->kind == POCK_ATTR_INT) return static_cast<double>(a->i);
  wrong_kind(*a, "a number");
  return fallback;
}

std::string_view AttrReader::text(std::string_view name, std::string_view fallback) {
  const pock_attr* a = find(name);
  if (!a) return fallback;
  if (a->kind == POCK_ATTR_STRING && a->s) return a->s;
  wrong_kind(*a, "a string");
  return fallback;
}

int32_t AttrReader::axis(std::string_view name, int32_t rank, int64_t fallback) {
  const int64_t axis = integer(name, fallback);
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    invalid(name, "is " + std::to_string(axis) + ", out of range for rank " + std::to_string(rank));
    return 0;
  }
  return static_cast<int32_t>(a);
}

Activation AttrReader::activation() {
  const std::string_view name = text("activation", "none");
  const std::optional<Activation> parsed = parse_activation(name);
  if (!parsed) invalid("activation", "is '" + std::string(name) + "', not none, relu or relu6");
  return parsed.value_or(Activation::kNone);
}

}  // namespace pock::params
