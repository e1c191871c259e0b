#include "compiler/backend_profile.hpp"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <type_traits>
#include <variant>

#include "ir/conv_algorithm.hpp"

namespace pock {
namespace {

constexpr const char* kFormat = "pock-backend-profile";
constexpr int kVersion = 1;

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);  // round-trips, so equal attributes give equal signatures
  return buf;
}

std::string attr_text(const AttrValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          return number(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return v;
        } else {
          std::string s = "[";
          for (size_t i = 0; i < v.size(); ++i) {
            if (i) s += ",";
            if constexpr (std::is_same_v<T, std::vector<int64_t>>) s += std::to_string(v[i]);
            else s += number(v[i]);
          }
          return s + "]";
        }
      },
      value);
}

std::string tensor_text(const ProgramSpec& spec, int32_t id) {
  if (id < 0 || static_cast<size_t>(id) >= spec.tensors.size()) return "-";
  const TensorSpec& t = spec.tensors[static_cast<size_t>(id)];
  std::string s = t.storage == Storage::kWeights ? "const " : "";
  s += dtype_name(t.dtype);
  s += "[";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(t.shape[i]);
  }
  return s + "]";
}

std::string tensor_list(const ProgramSpec& spec, const std::vector<int32_t>& ids) {
  std::string s = "(";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ", ";
    s += tensor_text(spec, ids[i]);
  }
  return s + ")";
}

Status bad(const std::string& source, const std::string& what) {
  return Status(Code::kInvalidArgument, source + ": " + what + " (a profile is written by 'pockc tune')");
}

}  // namespace

std::string op_signature(const ProgramSpec& spec, const OpSpec& op) {
  std::string s = op.op + tensor_list(spec, op.inputs) + " -> " + tensor_list(spec, op.outputs) + " {";
  bool first = true;
  for (const auto& [name, value] : op.attrs.items()) {
    if (name == kConvAlgorithmAttr) continue;
    if (!first) s += ", ";
    s += name + "=" + attr_text(value);
    first = false;
  }
  return s + "}";
}

namespace {

// Signature -> the name with the lowest median among each op's `timings`.
std::unordered_map<std::string, std::string> fastest(const BackendProfile& profile,
                                                     std::vector<BackendTiming> ProfiledOp::*timings) {
  std::unordered_map<std::string, std::string> out;
  for (const ProfiledOp& op : profile.ops) {
    if (const BackendTiming* best = lowest_median(op.*timings)) out[op.signature] = best->backend;
  }
  return out;
}

// A JSON object of medians (name -> microseconds >= 0); `where` names it in errors.
Status parse_medians(const nlohmann::json& o, const std::string& source, const std::string& where,
                     std::vector<BackendTiming>* out) {
  for (const auto& [name, us] : o.items()) {
    if (!us.is_number() || us.get<double>() < 0) return bad(source, where + "." + name + " must be a number >= 0");
    out->push_back({name, us.get<double>()});
  }
  return Status::ok();
}

}  // namespace

const BackendTiming* lowest_median(const std::vector<BackendTiming>& timings) {
  const BackendTiming* best = nullptr;
  for (const BackendTiming& t : timings) {
    if (!best || t.median_us < best->median_us) best = &t;
  }
  return best;
}

std::unordered_map<std::string, std::string> fastest_backends(const BackendProfile& profile) {
  return fastest(profile, &ProfiledOp::timings);
}

std::unordered_map<std::string, std::string> fastest_cpu_algorithms(const BackendProfile& profile) {
  return fastest(profile, &ProfiledOp::cpu_algorithms);
}

std::string backend_profile_json(const BackendProfile& profile) {
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["threads"] = profile.threads;
  j["repeats"] = profile.repeats;
  j["backends"] = profile.backends;
  j["ops"] = nlohmann::ordered_json::array();
  for (const ProfiledOp& op : profile.ops) {
    nlohmann::ordered_json o;
    o["signature"] = op.signature;
    o["op"] = op.op;
    o["count"] = op.count;
    o["median_us"] = nlohmann::ordered_json::object();
    for (const BackendTiming& t : op.timings) o["median_us"][t.backend] = t.median_us;
    if (!op.errors.empty()) o["errors"] = op.errors;
    if (!op.cpu_algorithms.empty()) {
      o["cpu_algorithm_us"] = nlohmann::ordered_json::object();
      for (const BackendTiming& t : op.cpu_algorithms) o["cpu_algorithm_us"][t.backend] = t.median_us;
    }
    j["ops"].push_back(std::move(o));
  }
  return j.dump(1) + "\n";
}

Result<BackendProfile> parse_backend_profile(std::string_view text, const std::string& source) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad(source, "not a JSON object");
  if (j.value("format", "") != kFormat) return bad(source, "'format' must be \"" + std::string(kFormat) + "\"");
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() != kVersion) {
    return bad(source, "'version' must be " + std::to_string(kVersion));
  }
  BackendProfile p;
  if (j.contains("threads") && j["threads"].is_number_integer()) p.threads = j["threads"].get<int>();
  if (j.contains("repeats") && j["repeats"].is_number_integer()) p.repeats = j["repeats"].get<int>();
  if (j.contains("backends")) {
    if (!j["backends"].is_array()) return bad(source, "'backends' must be a list of names");
    for (const auto& b : j["backends"]) {
      if (!b.is_string()) return bad(source, "'backends' must be a list of names");
      p.backends.push_back(b.get<std::string>());
    }
  }
  if (!j.contains("ops") || !j["ops"].is_array()) return bad(source, "'ops' must be a list");
  for (size_t i = 0; i < j["ops"].size(); ++i) {
    const auto& o = j["ops"][i];
    const std::string where = "ops[" + std::to_string(i) + "]";
    if (!o.is_object() || !o.contains("signature") || !o["signature"].is_string()) {
      return bad(source, where + " needs a 'signature' string");
    }
    ProfiledOp op;
    op.signature = o["signature"].get<std::string>();
    op.op = o.value("op", "");
    if (o.contains("count") && o["count"].is_number_integer()) op.count = o["count"].get<int64_t>();
    if (!o.contains("median_us") || !o["median_us"].is_object()) return bad(source, where + " needs a 'median_us' object");
    POCK_RETURN_IF_ERROR(parse_medians(o["median_us"], source, where + ".median_us", &op.timings));
    if (o.contains("cpu_algorithm_us")) {
      const auto& algorithms = o["cpu_algorithm_us"];
      if (!algorithms.is_object()) return bad(source, where + ".cpu_algorithm_us must be an object");
      POCK_RETURN_IF_ERROR(parse_medians(algorithms, source, where + ".cpu_algorithm_us", &op.cpu_algorithms));
      for (const BackendTiming& t : op.cpu_algorithms) {
        if (!parse_conv_algorithm(t.backend)) {
          return bad(source, where + ".cpu_algorithm_us names '" + t.backend + "', not " + kConvAlgorithmNames);
        }
      }
    }
    if (o.contains("errors") && o["errors"].is_object()) {
      for (const auto& [backend, why] : o["errors"].items()) op.errors[backend] = why.is_string() ? why.get<std::string>() : why.dump();
    }
    p.ops.push_back(std::move(op));
  }
  return p;
}

Result<BackendProfile> load_backend_profile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::kIo, "cannot read the profile '" + path + "': write one with 'pockc tune BLOB -o " + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_backend_profile(text.str(), path);
}

}  // namespace pock
