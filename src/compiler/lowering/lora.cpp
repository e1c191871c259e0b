#include "compiler/lowering/lora.hpp"
#include "ir/splitmix64.hpp"

#include <cmath>
#include <cstdint>
#include <map>

#include "compiler/lowering/trainable.hpp"
#include "compiler/sparse/blocks.hpp"

namespace pock {

double Recipe::Lora::scaling() const {
  if (rank <= 0) return 0.0;
  return use_rslora ? alpha / std::sqrt(static_cast<double>(rank)) : alpha / static_cast<double>(rank);
}

namespace {

// Uniform in [-bound, bound) from a stream keyed by (seed, name): the same values on every platform.
std::vector<float> uniform_values(uint64_t seed, const std::string& name, int64_t count, double bound) {
  uint64_t key = splitmix64(seed);
  for (unsigned char c : name) key = splitmix64(key ^ c);
  std::vector<float> v(static_cast<size_t>(count));
  for (size_t i = 0; i < v.size(); ++i) {
    const double u = unit_interval(splitmix64(key + i));
    v[i] = static_cast<float>((2.0 * u - 1.0) * bound);
  }
  return v;
}

constexpr std::string_view kWeightSuffix = ".weight";

// The module a Linear node computes: its weight is the 2-D parameter "<module>.weight". "" else.
std::string linear_module(const Graph& g, const Node& n) {
  if (n.op != "Linear" || n.inputs.size() < 2 || n.inputs[1] == kNoTensor || n.outputs.size() != 1) return "";
  const TensorDesc& w = g.tensor(n.inputs[1]);
  if (w.kind != TensorKind::kParameter || w.shape.size() != 2 || w.name.size() <= kWeightSuffix.size()) return "";
  if (w.name.compare(w.name.size() - kWeightSuffix.size(), kWeightSuffix.size(), kWeightSuffix) != 0) return "";
  return w.name.substr(0, w.name.size() - kWeightSuffix.size());
}

struct Adapter {
  TensorId a = kNoTensor, b = kNoTensor;
};

// The module's A and B, created once and shared by every function that runs the module.
Result<Adapter> adapter_for(Graph& g, const LoraModule& m, uint64_t seed) {
  const std::string a_name = m.name + ".lora_A.weight", b_name = m.name + ".lora_B.weight";
  Adapter ad{g.find(a_name), g.find(b_name)};
  if (ad.a != kNoTensor && ad.b != kNoTensor) return ad;
  if (ad.a != kNoTensor || ad.b != kNoTensor) {
    return Status(Code::kInvalidArgument, "lora: the model already has a tensor named '" + (ad.a != kNoTensor ? a_name : b_name) + "'");
  }
  ad.a = g.add_parameter_f32(a_name, {m.rank, m.in}, uniform_values(seed, a_name, m.rank * m.in, 1.0 / std::sqrt(double(m.in))));
  ad.b = g.add_parameter_f32(b_name, {m.out, m.rank}, std::vector<float>(static_cast<size_t>(m.out * m.rank), 0.0f));
  return ad;
}

// Rewrites one node list: every Linear of a planned module gains its adapter branch.
Status adapt(Graph& g, std::vector<Node>& nodes, const std::map<std::string, LoraModule>& planned, const Recipe::Lora& lora) {
  std::vector<Node> out;
  out.reserve(nodes.size());
  for (Node& n : nodes) {
    const auto it = planned.find(linear_module(g, n));
    if (it == planned.end()) {
      out.push_back(std::move(n));
      continue;
    }
    const LoraModule& m = it->second;
    POCK_ASSIGN_OR_RETURN(const Adapter ad, adapter_for(g, m, lora.seed));
    // The base layer writes a new tensor; the sum takes over its old output, so readers stay.
    const TensorId result = n.outputs[0];
    TensorDesc base = g.tensor(result);
    base.name = g.unique_name(m.name + ".base");
    const TensorId base_out = g.add_tensor(base);
    n.outputs[0] = base_out;
    const TensorId x = n.inputs[0];
    out.push_back(std::move(n));
    auto emit = [&](const std::string& op, std::vector<TensorId> inputs, Attrs attrs, const std::string& name) -> Result<TensorId> {
      POCK_ASSIGN_OR_RETURN(Node node, g.create_node(op, std::move(inputs), std::move(attrs), m.name + "." + name));
      const TensorId y = node.outputs[0];
      out.push_back(std::move(node));
      return y;
    };
    TensorId in = x;
    if (lora.dropout > 0.0) {
      POCK_ASSIGN_OR_RETURN(in, emit("Dropout", {x}, Attrs{{"ratio", lora.dropout}}, "lora_dropout"));
    }
    POCK_ASSIGN_OR_RETURN(const TensorId down, emit("Linear", {in, ad.a}, {}, "lora_A"));
    POCK_ASSIGN_OR_RETURN(const TensorId up, emit("Linear", {down, ad.b}, {}, "lora_B"));
    POCK_ASSIGN_OR_RETURN(const TensorId scaled, emit("ScaleShift", {up}, Attrs{{"alpha", m.scaling}, {"beta", 0.0}}, "lora_scale"));
    POCK_ASSIGN_OR_RETURN(Node sum, g.create_node("Add", {base_out, scaled}, {}, m.name + ".lora_add"));
    sum.outputs[0] = result;
    out.push_back(std::move(sum));
  }
  nodes = std::move(out);
  return Status::ok();
}

}  // namespace

bool lora_targets(const std::vector<std::string>& targets, const std::string& module) {
  for (const std::string& t : targets) {
    if (t.find_first_of(".*?{") == std::string::npos) {
      const size_t dot = module.rfind('.');
      if (module.compare(dot == std::string::npos ? 0 : dot + 1, std::string::npos, t) == 0) return true;
    } else if (glob_match(t, module)) {
      return true;
    }
  }
  return false;
}

Result<std::vector<LoraModule>> plan_lora(const Graph& model, const Recipe::Lora& lora) {
  std::vector<LoraModule> modules;
  if (lora.rank <= 0) return modules;
  LayerSpan blocks{0, SIZE_MAX};
  if (!lora.layers.empty()) {
    auto span = parse_block_span(lora.layers, count_blocks(model));
    if (!span.is_ok()) return Status(Code::kInvalidArgument, "lora.layers: " + span.status().message());
    blocks = *span;
  }
  bool targeted = false;
  for (const Node& n : model.nodes()) {
    const std::string module = linear_module(model, n);
    if (module.empty() || !lora_targets(lora.target_modules, module)) continue;
    targeted = true;
    if (!lora.layers.empty() && !in_block_span(module, blocks)) continue;
    bool seen = false;
    for (const LoraModule& m : modules) seen = seen || m.name == module;
    if (seen) continue;  // a weight read by two nodes is one module with one adapter
    const Shape& w = model.tensor(n.inputs[1]).shape;
    modules.push_back(LoraModule{module, w[1], w[0], lora.rank, lora.scaling()});
  }
  if (!targeted) {
    return Status(Code::kInvalidArgument, "lora.target_modules: no Linear layer of the model matches (its weights are named "
                                          "like 'model.layers.0.self_attn.q_proj.weight': target 'q_proj' or a glob)");
  }
  if (modules.empty()) {
    return Status(Code::kInvalidArgument, "lora.layers: '" + lora.layers + "' holds none of the modules lora.target_modules matches");
  }
  return modules;
}

Result<std::vector<LoraModule>> add_lora_adapters(Graph& graph, const Recipe::Lora& lora) {
  POCK_ASSIGN_OR_RETURN(std::vector<LoraModule> modules, plan_lora(graph, lora));
  if (modules.empty()) return modules;
  std::map<std::string, LoraModule> planned;
  for (const LoraModule& m : modules) planned[m.name] = m;
  POCK_RETURN_IF_ERROR(adapt(graph, graph.mutable_nodes(), planned, lora));
  // The model's own functions (a decode step) run the same modules, sharing their adapters.
  for (GraphFunction& f : graph.mutable_functions()) POCK_RETURN_IF_ERROR(adapt(graph, f.nodes, planned, lora));
  return modules;
}

}  // namespace pock
