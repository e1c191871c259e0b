#include "compiler/lowering/optimizer.hpp"

namespace pock {
namespace {

TensorId add_zero_state(Graph& g, const std::string& name, const TensorDesc& like) {
  TensorDesc d;
  d.name = name;
  d.dtype = like.dtype;
  d.shape = like.shape;
  d.kind = TensorKind::kState;
  d.data = std::make_shared<const std::vector<uint8_t>>(like.nbytes(), uint8_t{0});
  return g.add_tensor(std::move(d));
}

Status append(Graph& g, std::vector<Node>& nodes, const std::string& op, std::vector<TensorId> inputs, Attrs attrs,
              const std::string& name, TensorId* out = nullptr) {
  auto node = g.create_node(op, std::move(inputs), std::move(attrs), g.unique_name(name));
  if (!node.is_ok()) return Status(node.status().code(), "optimizer: " + node.status().message());
  node->phase = Phase::kUpdate;
  if (out) *out = node->outputs.empty() ? kNoTensor : node->outputs[0];
  nodes.push_back(std::move(node.value()));
  return Status::ok();
}

// Optimizer state and accumulators are shaped like the gradient: under a partial-channel update
// they hold only the trained leading rows, not the whole parameter.
TensorDesc slot_like(const Graph& g, const ParamGrad& pg) {
  TensorDesc d = g.tensor(pg.param);
  d.shape = g.tensor(pg.grad).shape;
  return d;
}

}  // namespace

Attrs update_attrs(const Recipe& r) {
  Attrs a{{"lr", r.optimizer.lr},
          {"weight_decay", r.optimizer.weight_decay},
          {"accumulation", r.grad_accumulation},
          {"schedule", r.schedule.type},
          {"warmup_steps", r.schedule.warmup_steps},
          {"total_steps", r.schedule.total_steps},
          {"min_lr", r.schedule.min_lr}};
  if (r.optimizer.type == "sgd") {
    a.set("momentum", r.optimizer.momentum);
    a.set("nesterov", static_cast<int64_t>(r.optimizer.nesterov ? 1 : 0));
  } else {
    a.set("beta1", r.optimizer.beta1);
    a.set("beta2", r.optimizer.beta2);
    a.set("eps", r.optimizer.eps);
    a.set("decoupled", static_cast<int64_t>(r.optimizer.type == "adamw" ? 1 : 0));
  }
  return a;
}

Status append_optimizer(Graph& g, std::vector<Node>& nodes, const Recipe& r, TensorId step,
                        const std::vector<ParamGrad>& params) {
  const std::string& type = r.optimizer.type;
  if (type != "sgd" && type != "adam" && type != "adamw") {
    return Status(Code::kInvalidArgument, "optimizer.type: unknown optimizer '" + type + "'");
  }
  // What each update reads as "the gradient": this step's, or the micro-batch accumulator.
  std::vector<TensorId> sources;
  for (const ParamGrad& pg : params) {
    const TensorDesc slot = slot_like(g, pg);
    if (r.grad_accumulation > 1) {
      const TensorId acc = add_zero_state(g, slot.name + ".grad_accum", slot);
      POCK_RETURN_IF_ERROR(append(g, nodes, "AccumulateGrad", {acc, pg.grad}, {}, slot.name + "/accumulate"));
      sources.push_back(acc);
    } else {
      sources.push_back(pg.grad);
    }
  }
  TensorId clip_scale = kNoTensor;
  if (r.clip_grad_norm > 0 && !sources.empty()) {
    const Attrs attrs{{"max_norm", r.clip_grad_norm}, {"grad_scale", 1.0 / static_cast<double>(r.grad_accumulation)}};
    POCK_RETURN_IF_ERROR(append(g, nodes, "GlobalNormClipScale", sources, attrs, "clip_grad_norm", &clip_scale));
  }
  const Attrs attrs = update_attrs(r);
  for (size_t i = 0; i < params.size(); ++i) {
    const TensorDesc slot = slot_like(g, params[i]);
    std::vector<TensorId> inputs{params[i].param, sources[i], step};
    if (type == "sgd") {
      inputs.push_back(r.optimizer.momentum != 0.0 ? add_zero_state(g, slot.name + ".momentum_buffer", slot) : kNoTensor);
      inputs.push_back(clip_scale);
      POCK_RETURN_IF_ERROR(append(g, nodes, "SgdUpdate", inputs, attrs, slot.name + "/sgd"));
    } else {
      inputs.push_back(add_zero_state(g, slot.name + ".exp_avg", slot));
      inputs.push_back(add_zero_state(g, slot.name + ".exp_avg_sq", slot));
      inputs.push_back(clip_scale);
      POCK_RETURN_IF_ERROR(append(g, nodes, "AdamUpdate", inputs, attrs, slot.name + "/adam"));
    }
  }
  return Status::ok();
}

}  // namespace pock
