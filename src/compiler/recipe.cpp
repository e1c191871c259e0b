// parse_recipe / load_recipe: JSON -> pock::Recipe. Every field of docs/recipe.md; an unknown
// field, a wrong type or a bad value is an error naming the field path.
#include "compiler/recipe.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace pock {
namespace {

using json = nlohmann::json;

Status field_error(const std::string& path, const std::string& what) {
  return Status(Code::kInvalidArgument, "recipe field '" + path + "': " + what);
}

const char* type_name(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

// Reads the fields of one JSON object, remembering which were consumed so that leftovers (typos,
// fields of a newer recipe version) are reported instead of silently ignored.
class ObjectReader {
 public:
  ObjectReader(const json& object, std::string path) : object_(object), path_(std::move(path)) {}

  std::string path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  const json* get(const std::string& key) {
    consumed_.push_back(key);
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }
  Status read(const std::string& key, std::string* out) {
    const json* v = get(key);
    if (!v) return Status::ok();
    if (!v->is_string()) return field_error(path(key), std::string("expected a string, got ") + type_name(*v));
    *out = v->get<std::string>();
    return Status::ok();
  }
  Status read(const std::string& key, double* out) {
    const json* v = get(key);
    if (!v) return Status::ok();
    if (!v->is_number()) return field_error(path(key), std::string("expected a number, got ") + type_name(*v));
    *out = v->get<double>();
    if (!std::isfinite(*out)) return field_error(path(key), "must be finite");
    return Status::ok();
  }
  Status read(const std::string& key, int64_t* out) {
    const json* v = get(key);
    if (!v) return Status::ok();
    if (!v->is_number_integer()) return field_error(path(key), std::string("expected an integer, got ") + type_name(*v));
    *out = v->get<int64_t>();
    return Status::ok();
  }
  Status read(const std::string& key, bool* out) {
    const json* v = get(key);
    if (!v) return Status::ok();
    if (!v->is_boolean()) return field_error(path(key), std::string("expected true or false, got ") + type_name(*v));
    *out = v->get<bool>();
    return Status::ok();
  }
  Status finish() const {
    for (auto it = object_.begin(); it != object_.end(); ++it) {
      if (std::find(consumed_.begin(), consumed_.end(), it.key()) == consumed_.end()) {
        return field_error(path(it.key()), "unknown field");
      }
    }
    return Status::ok();
  }

 private:
  const json& object_;
  std::string path_;
  std::vector<std::string> consumed_;
};

Status require_object(const json* v, const std::string& path) {
  if (v && !v->is_object()) return field_error(path, std::string("expected an object, got ") + type_name(*v));
  return Status::ok();
}

Status parse_loss(ObjectReader& top, Recipe::Loss* loss) {
  const json* v = top.get("loss");
  POCK_RETURN_IF_ERROR(require_object(v, "loss"));
  if (!v) return Status::ok();
  ObjectReader r(*v, "loss");
  POCK_RETURN_IF_ERROR(r.read("type", &loss->type));
  POCK_RETURN_IF_ERROR(r.read("logits", &loss->logits));
  POCK_RETURN_IF_ERROR(r.read("labels", &loss->labels));
  POCK_RETURN_IF_ERROR(r.read("ignore_index", &loss->ignore_index));
  POCK_RETURN_IF_ERROR(r.read("label_smoothing", &loss->label_smoothing));
  return r.finish();
}

Status parse_optimizer(ObjectReader& top, Recipe::Optimizer* opt) {
  const json* v = top.get("optimizer");
  POCK_RETURN_IF_ERROR(require_object(v, "optimizer"));
  if (!v) return Status::ok();
  ObjectReader r(*v, "optimizer");
  POCK_RETURN_IF_ERROR(r.read("type", &opt->type));
  POCK_RETURN_IF_ERROR(r.read("lr", &opt->lr));
  POCK_RETURN_IF_ERROR(r.read("momentum", &opt->momentum));
  POCK_RETURN_IF_ERROR(r.read("nesterov", &opt->nesterov));
  POCK_RETURN_IF_ERROR(r.read("weight_decay", &opt->weight_decay));
  POCK_RETURN_IF_ERROR(r.read("beta1", &opt->beta1));
  POCK_RETURN_IF_ERROR(r.read("beta2", &opt->beta2));
  POCK_RETURN_IF_ERROR(r.read("eps", &opt->eps));
  return r.finish();
}

Status parse_schedule(ObjectReader& top, Recipe::Schedule* s) {
  const json* v = top.get("schedule");
  POCK_RETURN_IF_ERROR(require_object(v, "schedule"));
  if (!v) return Status::ok();
  ObjectReader r(*v, "schedule");
  POCK_RETURN_IF_ERROR(r.read("type", &s->type));
  POCK_RETURN_IF_ERROR(r.read("warmup_steps", &s->warmup_steps));
  POCK_RETURN_IF_ERROR(r.read("total_steps", &s->total_steps));
  POCK_RETURN_IF_ERROR(r.read("min_lr", &s->min_lr));
  return r.finish();
}

Status parse_trainable_rule(const json& v, const std::string& path, TrainableRule* rule) {
  if (!v.is_object()) return field_error(path, std::string("expected an object, got ") + type_name(v));
  ObjectReader r(v, path);
  POCK_RETURN_IF_ERROR(r.read("match", &rule->match));
  POCK_RETURN_IF_ERROR(r.read("layers", &rule->layers));
  POCK_RETURN_IF_ERROR(r.read("blocks", &rule->blocks));
  POCK_RETURN_IF_ERROR(r.read("bias_only", &rule->bias_only));
  // "channels": a fraction in (0, 1) of the leading output channels, or an integer count.
  if (const json* c = r.get("channels")) {
    if (c->is_number_integer()) {
      rule->channels = c->get<int64_t>();
    } else if (c->is_number()) {
      rule->channel_ratio = c->get<double>();
    } else {
      return field_error(r.path("channels"), std::string("expected a fraction or a count, got ") + type_name(*c));
    }
  }
  POCK_RETURN_IF_ERROR(r.read("channel_ratio", &rule->channel_ratio));
  // -1 is the struct's "not given"; a value read from the file is checked here, sentinel or not.
  if (r.get("channels") && rule->channel_ratio == -1 && rule->channels < 1) {
    return field_error(r.path("channels"), "a count must be >= 1, got " + std::to_string(rule->channels));
  }
  if ((r.get("channels") || r.get("channel_ratio")) && rule->channels == -1 &&
      !(rule->channel_ratio > 0.0 && rule->channel_ratio <= 1.0)) {
    return field_error(r.path(r.get("channel_ratio") ? "channel_ratio" : "channels"), "a fraction must be in (0, 1]");
  }
  return r.finish();
}

Status parse_trainable(ObjectReader& top, std::vector<TrainableRule>* rules) {
  const json* v = top.get("trainable");
  if (!v) return Status::ok();
  if (!v->is_array()) return field_error("trainable", std::string("expected an array of rules, got ") + type_name(*v));
  for (size_t i = 0; i < v->size(); ++i) {
    TrainableRule rule;
    POCK_RETURN_IF_ERROR(parse_trainable_rule((*v)[i], "trainable[" + std::to_string(i) + "]", &rule));
    rules->push_back(std::move(rule));
  }
  return Status::ok();
}

Status parse_lora(ObjectReader& top, Recipe::Lora* lora) {
  const json* v = top.get("lora");
  POCK_RETURN_IF_ERROR(require_object(v, "lora"));
  if (!v) return Status::ok();
  ObjectReader r(*v, "lora");
  POCK_RETURN_IF_ERROR(r.read("rank", &lora->rank));
  POCK_RETURN_IF_ERROR(r.read("alpha", &lora->alpha));
  POCK_RETURN_IF_ERROR(r.read("dropout", &lora->dropout));
  POCK_RETURN_IF_ERROR(r.read("layers", &lora->layers));
  POCK_RETURN_IF_ERROR(r.read("use_rslora", &lora->use_rslora));
  int64_t seed = 0;
  POCK_RETURN_IF_ERROR(r.read("seed", &seed));
  lora->seed = static_cast<uint64_t>(seed);
  if (const json* t = r.get("target_modules")) {
    if (!t->is_array()) return field_error("lora.target_modules", std::string("expected an array of names, got ") + type_name(*t));
    for (size_t i = 0; i < t->size(); ++i) {
      if (!(*t)[i].is_string()) {
        return field_error("lora.target_modules[" + std::to_string(i) + "]", std::string("expected a string, got ") + type_name((*t)[i]));
      }
      lora->target_modules.push_back((*t)[i].get<std::string>());
    }
  }
  return r.finish();
}

bool one_of(const std::string& v, std::initializer_list<const char*> choices) {
  for (const char* c : choices) if (v == c) return true;
  return false;
}

}  // namespace

Status validate_recipe(const Recipe& r) {
  if (r.batch_size < 0) return field_error("batch_size", "must be >= 0 (0 keeps the model's shapes)");
  if (!one_of(r.loss.type, {"cross_entropy", "mse", "output"})) {
    return field_error("loss.type", "'" + r.loss.type + "' is not one of cross_entropy, mse, output");
  }
  if (r.loss.type != "output" && r.loss.labels.empty()) return field_error("loss.labels", "must name the label input");
  if (!(r.loss.label_smoothing >= 0.0 && r.loss.label_smoothing < 1.0)) {
    return field_error("loss.label_smoothing", "must be in [0, 1)");
  }
  const auto& o = r.optimizer;
  if (!one_of(o.type, {"sgd", "adam", "adamw"})) {
    return field_error("optimizer.type", "'" + o.type + "' is not one of sgd, adam, adamw");
  }
  if (!(o.lr >= 0.0)) return field_error("optimizer.lr", "must be >= 0");
  if (!(o.weight_decay >= 0.0)) return field_error("optimizer.weight_decay", "must be >= 0");
  if (!(o.momentum >= 0.0 && o.momentum < 1.0)) return field_error("optimizer.momentum", "must be in [0, 1)");
  if (o.nesterov && (o.type != "sgd" || o.momentum <= 0.0)) {
    return field_error("optimizer.nesterov", "needs optimizer.type 'sgd' with momentum > 0");
  }
  if (o.type != "sgd" && o.momentum != 0.0) return field_error("optimizer.momentum", "applies to sgd only; adam uses beta1");
  if (!(o.beta1 >= 0.0 && o.beta1 < 1.0)) return field_error("optimizer.beta1", "must be in [0, 1)");
  if (!(o.beta2 >= 0.0 && o.beta2 < 1.0)) return field_error("optimizer.beta2", "must be in [0, 1)");
  if (!(o.eps > 0.0)) return field_error("optimizer.eps", "must be > 0");
  const auto& s = r.schedule;
  if (!one_of(s.type, {"constant", "linear_warmup", "cosine"})) {
    return field_error("schedule.type", "'" + s.type + "' is not one of constant, linear_warmup, cosine");
  }
  if (s.warmup_steps < 0) return field_error("schedule.warmup_steps", "must be >= 0");
  if (s.total_steps < 0) return field_error("schedule.total_steps", "must be >= 0");
  if (!(s.min_lr >= 0.0)) return field_error("schedule.min_lr", "must be >= 0");
  if (s.type == "linear_warmup" && s.warmup_steps == 0) {
    return field_error("schedule.warmup_steps", "linear_warmup needs warmup_steps > 0");
  }
  if (s.type == "cosine" && s.total_steps <= s.warmup_steps) {
    return field_error("schedule.total_steps", "cosine needs total_steps > warmup_steps");
  }
  if (s.type == "cosine" && s.min_lr > o.lr) return field_error("schedule.min_lr", "must not exceed optimizer.lr");
  if (r.grad_accumulation < 1) return field_error("grad_accumulation", "must be >= 1");
  if (!one_of(r.frozen_weights, {"f32", "int8", "source", "q8_0"})) {
    return field_error("frozen_weights", "'" + r.frozen_weights + "' is not one of f32, int8, source, q8_0");
  }
  if (!one_of(r.frozen_matmul, {"f32", "int8"})) {
    return field_error("frozen_matmul", "'" + r.frozen_matmul + "' is not one of f32, int8");
  }
  if (r.frozen_matmul == "int8" && r.frozen_weights != "source" && r.frozen_weights != "q8_0") {
    return field_error("frozen_matmul", "int8 multiplies block-quantized weights: set frozen_weights to source or q8_0");
  }
  if (!one_of(r.precision, {"fp32", "bf16"})) {
    return field_error("precision", "'" + r.precision + "' is not one of fp32, bf16");
  }
  if (!(r.clip_grad_norm >= 0.0)) return field_error("clip_grad_norm", "must be >= 0 (0: off)");
  if (r.lora.rank < 0 || r.lora.rank > 4096) return field_error("lora.rank", "must be in [0, 4096] (0: no LoRA)");
  if (r.lora.rank > 0) {
    if (!(r.lora.alpha > 0.0)) return field_error("lora.alpha", "must be > 0");
    if (!(r.lora.dropout >= 0.0 && r.lora.dropout < 1.0)) return field_error("lora.dropout", "must be in [0, 1)");
    if (r.lora.target_modules.empty()) return field_error("lora.target_modules", "name at least one module (\"q_proj\", \"*.v_proj\")");
    for (size_t i = 0; i < r.lora.target_modules.size(); ++i) {
      if (r.lora.target_modules[i].empty()) return field_error("lora.target_modules[" + std::to_string(i) + "]", "is empty");
    }
  }
  for (size_t i = 0; i < r.trainable.size(); ++i) {
    const TrainableRule& t = r.trainable[i];
    const std::string path = "trainable[" + std::to_string(i) + "]";
    if (t.channel_ratio >= 0 && !(t.channel_ratio > 0.0 && t.channel_ratio <= 1.0)) {
      return field_error(path + ".channels", "a fraction must be in (0, 1]");
    }
    if (t.channels == 0 || t.channels < -1) return field_error(path + ".channels", "a count must be >= 1");
    if (t.match.empty() && t.layers.empty() && t.blocks.empty() && !t.bias_only) {
      return field_error(path, "a rule needs at least one of 'match', 'layers', 'blocks', 'bias_only'");
    }
  }
  return Status::ok();
}

Result<Recipe> parse_recipe(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (j.is_discarded()) return Status(Code::kInvalidArgument, "recipe is not valid JSON");
  if (!j.is_object()) return Status(Code::kInvalidArgument, std::string("recipe must be a JSON object, got ") + type_name(j));
  Recipe recipe;
  ObjectReader top(j, "");
  POCK_RETURN_IF_ERROR(top.read("batch_size", &recipe.batch_size));
  POCK_RETURN_IF_ERROR(parse_loss(top, &recipe.loss));
  POCK_RETURN_IF_ERROR(parse_optimizer(top, &recipe.optimizer));
  POCK_RETURN_IF_ERROR(parse_schedule(top, &recipe.schedule));
  POCK_RETURN_IF_ERROR(top.read("grad_accumulation", &recipe.grad_accumulation));
  POCK_RETURN_IF_ERROR(top.read("clip_grad_norm", &recipe.clip_grad_norm));
  POCK_RETURN_IF_ERROR(parse_trainable(top, &recipe.trainable));
  POCK_RETURN_IF_ERROR(top.read("freeze_batchnorm_stats", &recipe.freeze_batchnorm_stats));
  POCK_RETURN_IF_ERROR(top.read("frozen_weights", &recipe.frozen_weights));
  POCK_RETURN_IF_ERROR(top.read("frozen_matmul", &recipe.frozen_matmul));
  POCK_RETURN_IF_ERROR(top.read("precision", &recipe.precision));
  POCK_RETURN_IF_ERROR(parse_lora(top, &recipe.lora));
  POCK_RETURN_IF_ERROR(top.finish());
  POCK_RETURN_IF_ERROR(validate_recipe(recipe));
  return recipe;
}

Result<Recipe> load_recipe(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::kIo, "cannot read recipe '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  auto recipe = parse_recipe(text.str());
  if (!recipe.is_ok()) return Status(recipe.status().code(), path + ": " + recipe.status().message());
  return recipe;
}

}  // namespace pock
