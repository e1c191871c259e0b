// A BERT encoder with transformers' BertModel names (embeddings.*, encoder.layer.N.*, pooler.*)
// and BertForSequenceClassification's head (classifier.*): post-LayerNorm blocks, exact GELU,
// additive attention mask, logits from the pooled [CLS] token; or, with no head, BertModel's
// outputs.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "models/layers.hpp"
#include "pock/compiler/models.hpp"

namespace pock::models {
namespace {

TensorId maybe_dropout(ModelBuilder& b, TensorId x, const std::string& name, double ratio) {
  return ratio > 0 ? b.named(name).dropout(x, ratio) : x;
}

// embeddings: word + token type + position embeddings, LayerNorm, dropout.
TensorId embeddings(Params& p, const BertConfig& c, TensorId input_ids, TensorId token_type_ids) {
  ModelBuilder& b = p.builder();
  const int64_t h = c.hidden_size;
  // transformers zeroes the padding token's row at init (nn.Embedding padding_idx).
  std::vector<float> words =
      p.normal_values("embeddings.word_embeddings.weight", c.vocab_size * h, c.initializer_range);
  if (c.pad_token_id >= 0 && c.pad_token_id < c.vocab_size) {
    std::fill_n(words.begin() + c.pad_token_id * h, h, 0.0f);
  }
  const TensorId word_table = b.parameter("embeddings.word_embeddings.weight", {c.vocab_size, h}, words);
  const TensorId position_table =
      p.normal("embeddings.position_embeddings.weight", {c.max_position_embeddings, h}, c.initializer_range);
  const TensorId type_table =
      p.normal("embeddings.token_type_embeddings.weight", {c.type_vocab_size, h}, c.initializer_range);

  TensorId x = b.named("embeddings.word_embeddings").embedding(word_table, input_ids);  // [B, S, H]
  // Without token_type_ids every token is segment 0: row 0, broadcast over [B, S].
  const TensorId types = token_type_ids != kNoTensor
                             ? b.named("embeddings.token_type_embeddings").embedding(type_table, token_type_ids)
                             : b.slice(type_table, {0}, {1}, {0});
  x = b.add(x, types);
  x = b.add(x, b.slice(position_table, {0}, {c.seq_len}, {0}));  // positions 0..S-1: [S, H]
  x = layer_norm(p, x, "embeddings.LayerNorm", h, c.layer_norm_eps);
  return maybe_dropout(b, x, "embeddings.dropout", c.hidden_dropout);
}

// attention_mask [B, S] (1 attend, 0 pad) -> additive bias [B, 1, 1, S]: 0 or the lowest float,
// as transformers' get_extended_attention_mask computes (1 - mask) * finfo.min.
TensorId mask_bias(ModelBuilder& b, TensorId attention_mask) {
  const double lowest = std::numeric_limits<float>::lowest();
  const TensorId mask = b.reshape(b.cast(attention_mask, DType::kF32), {0, 1, 1, -1});
  return b.named("extended_attention_mask").scale_shift(mask, -lowest, lowest);
}

// BertSelfAttention + BertSelfOutput: LayerNorm(x + dropout(dense(softmax(qk^T / sqrt(d) + bias) v))).
TensorId attention(Params& p, const BertConfig& c, TensorId x, TensorId bias, const std::string& name) {
  ModelBuilder& b = p.builder();
  const int64_t h = c.hidden_size, d = c.hidden_size / c.num_heads;
  const LinearInit init{.normal_std = c.initializer_range};
  auto heads = [&](const char* which) {
    return split_heads(b, linear(p, x, name + ".self." + which, h, h, true, init), c.num_heads, d);
  };
  const TensorId q = heads("query"), k = heads("key"), v = heads("value");
  TensorId scores = b.scale_shift(b.named(name + ".self.scores").matmul(q, k, false, true), 1.0 / std::sqrt(double(d)));
  if (bias != kNoTensor) scores = b.add(scores, bias);
  TensorId probs = b.named(name + ".self.softmax").softmax(scores, -1);
  probs = maybe_dropout(b, probs, name + ".self.dropout", c.attention_dropout);
  const TensorId context = merge_heads(b, b.named(name + ".self.context").matmul(probs, v));
  TensorId out = linear(p, context, name + ".output.dense", h, h, true, init);
  out = maybe_dropout(b, out, name + ".output.dropout", c.hidden_dropout);
  return layer_norm(p, b.add(out, x), name + ".output.LayerNorm", h, c.layer_norm_eps);
}

// BertIntermediate + BertOutput: LayerNorm(x + dropout(dense(gelu(dense(x))))).
TensorId feed_forward(Params& p, const BertConfig& c, TensorId x, const std::string& name) {
  ModelBuilder& b = p.builder();
  const LinearInit init{.normal_std = c.initializer_range};
  TensorId y = linear(p, x, name + ".intermediate.dense", c.hidden_size, c.intermediate_size, true, init);
  y = b.named(name + ".intermediate.gelu").gelu(y, false);
  y = linear(p, y, name + ".output.dense", c.intermediate_size, c.hidden_size, true, init);
  y = maybe_dropout(b, y, name + ".output.dropout", c.hidden_dropout);
  return layer_norm(p, b.add(y, x), name + ".output.LayerNorm", c.hidden_size, c.layer_norm_eps);
}

Status check(const BertConfig& c) {
  if (c.batch < 1 || c.seq_len < 1 || c.vocab_size < 1 || c.hidden_size < 1 || c.num_layers < 0 || c.num_heads < 1 ||
      c.intermediate_size < 1 || c.type_vocab_size < 1 || c.num_labels < 0) {
    return Status(Code::kInvalidArgument, "bert_classifier: sizes must be >= 1 (num_layers, num_labels >= 0)");
  }
  if (c.num_labels > 0 && !c.pooler) {
    return Status(Code::kInvalidArgument, "bert_classifier: a classification head (num_labels > 0) needs the pooler");
  }
  if (c.hidden_size % c.num_heads != 0) {
    return Status(Code::kInvalidArgument, "bert_classifier: hidden_size " + std::to_string(c.hidden_size) +
                                              " is not a multiple of num_heads " + std::to_string(c.num_heads));
  }
  if (c.seq_len > c.max_position_embeddings) {
    return Status(Code::kInvalidArgument, "bert_classifier: seq_len " + std::to_string(c.seq_len) +
                                              " exceeds max_position_embeddings " +
                                              std::to_string(c.max_position_embeddings));
  }
  if (!(c.hidden_dropout >= 0 && c.hidden_dropout < 1 && c.attention_dropout >= 0 && c.attention_dropout < 1)) {
    return Status(Code::kInvalidArgument, "bert_classifier: dropout ratios must be in [0, 1)");
  }
  return Status::ok();
}

}  // namespace

BertConfig minilm_l6_config() { return BertConfig{}; }

Result<Graph> bert_classifier(const BertConfig& c) {
  POCK_RETURN_IF_ERROR(check(c));
  ModelBuilder b;
  Params p(b, c.seed);
  const TensorId input_ids = b.input("input_ids", DType::kI64, {c.batch, c.seq_len});
  const TensorId attention_mask =
      c.attention_mask ? b.input("attention_mask", DType::kI64, {c.batch, c.seq_len}) : kNoTensor;
  const TensorId token_types =
      c.token_type_ids ? b.input("token_type_ids", DType::kI64, {c.batch, c.seq_len}) : kNoTensor;

  TensorId x = embeddings(p, c, input_ids, token_types);
  const TensorId bias = attention_mask != kNoTensor ? mask_bias(b, attention_mask) : kNoTensor;
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string name = "encoder.layer." + std::to_string(i);
    x = feed_forward(p, c, attention(p, c, x, bias, name + ".attention"), name);
  }
  // BertPooler on the first ([CLS]) token, then BertForSequenceClassification's dropout + classifier.
  const LinearInit init{.normal_std = c.initializer_range};
  if (c.num_labels == 0) b.output(x, "last_hidden_state");
  if (!c.pooler) return b.finish();
  const TensorId cls = b.squeeze(b.slice(x, {0}, {1}, {1}), {1});  // [B, H]
  const TensorId dense = linear(p, cls, "pooler.dense", c.hidden_size, c.hidden_size, true, init);
  const TensorId pooler_output = b.named("pooler.activation").tanh(dense);
  if (c.num_labels == 0) {
    b.output(pooler_output, "pooler_output");
    return b.finish();
  }
  const TensorId pooled = maybe_dropout(b, pooler_output, "dropout", c.hidden_dropout);
  b.output(linear(p, pooled, "classifier", c.hidden_size, c.num_labels, true, init), "logits");
  return b.finish();
}

}  // namespace pock::models
