#include "frontend/safetensors/untrusted_json.hpp"

#include <fstream>
#include <set>
#include <vector>

namespace pock::hf {
namespace {

// Real headers and configs nest three or four levels (an object of tensors, each with a shape
// array; rope_scaling's object).
constexpr int kMaxDepth = 16;
constexpr std::streamoff kMaxFileBytes = std::streamoff{16} << 20;

}  // namespace

Result<nlohmann::json> parse_untrusted_json(const char* text, size_t size, const std::string& what) {
  using Json = nlohmann::json;
  std::vector<std::set<std::string>> open_objects;  // the keys seen so far in each open object
  std::string problem;
  const Json::parser_callback_t check = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (!problem.empty()) return false;  // the result is refused anyway: keep nothing more
    if (depth > kMaxDepth) {
      problem = "nests deeper than " + std::to_string(kMaxDepth) + " levels";
      return false;
    }
    switch (event) {
      case Json::parse_event_t::object_start: open_objects.emplace_back(); break;
      case Json::parse_event_t::object_end:
        if (!open_objects.empty()) open_objects.pop_back();
        break;
      case Json::parse_event_t::key: {
        const std::string* key = parsed.get_ptr<const std::string*>();
        if (key && !open_objects.empty() && !open_objects.back().insert(*key).second) {
          problem = "repeats the key '" + *key + "'";
          return false;
        }
        break;
      }
      default: break;
    }
    return true;
  };
  Json j = Json::parse(text, text + size, check, /*allow_exceptions=*/false);
  if (!problem.empty()) return Status(Code::kInvalidArgument, what + " " + problem);
  if (j.is_discarded()) return Status(Code::kInvalidArgument, what + " is not valid JSON");
  return j;
}

Result<nlohmann::json> read_untrusted_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return Status(Code::kIo, "cannot open '" + path + "'");
  const std::streamoff size = in.tellg();
  if (size < 0 || size > kMaxFileBytes) return Status(Code::kInvalidArgument, "'" + path + "' is larger than 16 MiB");
  std::string text(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(text.data(), size)) return Status(Code::kIo, "cannot read '" + path + "'");
  return parse_untrusted_json(text.data(), text.size(), "'" + path + "'");
}

}  // namespace pock::hf
