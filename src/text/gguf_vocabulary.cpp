#include "text/gguf_vocabulary.hpp"

#include <climits>

namespace pock::text {
namespace {

Status bad(const std::string& key, const std::string& why) { return Status(Code::kInvalidArgument, "'" + key + "' " + why); }

const gguf::Value* find(const gguf::File& f, const std::string& key) {
  auto it = f.metadata().find(key);
  return it == f.metadata().end() ? nullptr : &it->second;
}

Result<std::vector<std::string>> string_array(const gguf::File& f, const std::string& key) {
  const gguf::Value* v = find(f, key);
  if (!v) return bad(key, "is missing");
  if (!v->is_array) return bad(key, "is not an array");
  std::vector<std::string> out;
  out.reserve(v->array.size());
  for (size_t i = 0; i < v->array.size(); ++i) {
    const std::string* s = std::get_if<std::string>(&v->array[i]);
    if (!s) return bad(key, "holds a value that is not a string (element " + std::to_string(i) + ")");
    out.push_back(*s);
  }
  return out;
}

Result<std::vector<int32_t>> token_types(const gguf::File& f, const std::string& key, size_t count) {
  const gguf::Value* v = find(f, key);
  if (!v) return std::vector<int32_t>(count, kNormal);
  if (!v->is_array) return bad(key, "is not an array");
  if (v->array.size() != count) {
    return bad(key, "has " + std::to_string(v->array.size()) + " entries for " + std::to_string(count) + " tokens");
  }
  std::vector<int32_t> out(count);
  for (size_t i = 0; i < count; ++i) {
    const int64_t* s = std::get_if<int64_t>(&v->array[i]);
    const uint64_t* u = std::get_if<uint64_t>(&v->array[i]);
    if (!s && !u) return bad(key, "holds a value that is not an integer (element " + std::to_string(i) + ")");
    const int64_t type = s ? *s : static_cast<int64_t>(*u > INT32_MAX ? INT32_MAX : *u);
    out[i] = static_cast<int32_t>(type < INT32_MIN ? INT32_MIN : type > INT32_MAX ? INT32_MAX : type);
  }
  return out;
}

Result<int64_t> token_id(const gguf::File& f, const std::string& key, size_t vocab) {
  if (!find(f, key)) return int64_t{-1};
  auto id = f.get_uint(key);
  if (!id.is_ok()) return bad(key, "is not a token id");
  if (id.value() >= vocab) return bad(key, "is " + std::to_string(id.value()) + ", outside the " + std::to_string(vocab) + " tokens");
  return static_cast<int64_t>(id.value());
}

}  // namespace

Result<GgufVocabulary> read_gguf_vocabulary(const gguf::File& f) {
  GgufVocabulary v;
  if (!find(f, "tokenizer.ggml.model")) return bad("tokenizer.ggml.model", "is missing: the file has no tokenizer");
  POCK_ASSIGN_OR_RETURN(v.model, f.get_string("tokenizer.ggml.model"));
  v.pre = "default";
  if (find(f, "tokenizer.ggml.pre")) {
    POCK_ASSIGN_OR_RETURN(v.pre, f.get_string("tokenizer.ggml.pre"));
  }
  POCK_ASSIGN_OR_RETURN(v.tokens, string_array(f, "tokenizer.ggml.tokens"));
  if (v.tokens.empty()) return bad("tokenizer.ggml.tokens", "is empty");
  if (v.tokens.size() > static_cast<size_t>(INT32_MAX)) return bad("tokenizer.ggml.tokens", "has more tokens than int32 ids");
  POCK_ASSIGN_OR_RETURN(v.types, token_types(f, "tokenizer.ggml.token_type", v.tokens.size()));
  if (find(f, "tokenizer.ggml.merges")) {
    POCK_ASSIGN_OR_RETURN(v.merges, string_array(f, "tokenizer.ggml.merges"));
  }
  POCK_ASSIGN_OR_RETURN(v.bos, token_id(f, "tokenizer.ggml.bos_token_id", v.tokens.size()));
  POCK_ASSIGN_OR_RETURN(v.eos, token_id(f, "tokenizer.ggml.eos_token_id", v.tokens.size()));
  POCK_ASSIGN_OR_RETURN(v.unknown, token_id(f, "tokenizer.ggml.unknown_token_id", v.tokens.size()));
  POCK_ASSIGN_OR_RETURN(v.padding, token_id(f, "tokenizer.ggml.padding_token_id", v.tokens.size()));
  if (const gguf::Value* add_bos = find(f, "tokenizer.ggml.add_bos_token")) {
    const bool* b = add_bos->is_array ? nullptr : std::get_if<bool>(&add_bos->scalar);
    if (!b) return bad("tokenizer.ggml.add_bos_token", "is not a bool");
    v.add_bos = *b;
  }
  return v;
}

}  // namespace pock::text
