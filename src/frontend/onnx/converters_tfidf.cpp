// ONNX TfIdfVectorizer (opset 9) over integer tokens: one pock op with ONNX's attributes. A pool of
// strings needs string tensors, which pock does not have.
#include <string>
#include <vector>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

Status convert_tfidf_vectorizer(NodeView& node) {
  if (node.attrs().has("pool_strings")) {
    return node.unsupported("a pool of strings (pool_strings) needs string tensors, which pock does not have; "
                            "map the tokens to integers and give pool_int64s");
  }
  const DType t = node.value(0).dtype;
  if (t != DType::kI32 && t != DType::kI64) return node.input_error(0, "(tokens) must be int32 or int64");
  const NodeAttrs& a = node.attrs();
  Attrs attrs;
  for (const auto& [name, fallback] : {std::pair{"min_gram_length", 1}, {"max_gram_length", 1}, {"max_skip_count", 0}}) {
    POCK_ASSIGN_OR_RETURN(int64_t v, a.get_int(name, fallback));
    attrs.set(name, v);
  }
  for (const char* name : {"pool_int64s", "ngram_counts", "ngram_indexes"}) {
    POCK_ASSIGN_OR_RETURN(std::vector<int64_t> v, a.get_ints(name, {}));
    attrs.set(name, std::move(v));
  }
  POCK_ASSIGN_OR_RETURN(std::vector<double> weights, a.get_floats("weights", {}));
  if (!weights.empty()) attrs.set("weights", std::move(weights));
  POCK_ASSIGN_OR_RETURN(std::string mode, a.get_string("mode", ""));
  if (mode.empty()) return node.error("attribute 'mode' (TF, IDF or TFIDF) is required");
  attrs.set("mode", mode);
  POCK_ASSIGN_OR_RETURN(TensorId tokens, node.input(0));
  return node.emit_final("TfIdfVectorizer", {tokens}, std::move(attrs));
}

}  // namespace

void register_tfidf_converters(std::unordered_map<std::string, Converter>& t) {
  t["TfIdfVectorizer"] = convert_tfidf_vectorizer;
}

}  // namespace pock::onnx_import
