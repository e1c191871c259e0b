#include "compiler/lowering/lora.hpp"

#include <cmath>
#include <map>

#include "compiler/lowering/trainable.hpp"

namespace pock {
namespace {

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [-bound, bound) from a stream keyed by (seed, name): the same values on every platform.
std::vector<float> uniform_values(uint64_t seed, const std::string& name, int64_t count, double bound) {
  uint64_t key = mix(seed);
  for (unsigned char c : name) key = mix(key ^ c);
  std::vector<float> v(static_cast<size_t>(count));
  for (size_t i = 0; i < v.size(); ++i) {
    const double u = static_cast<double>(mix(key + i) >> 11) * 0x1.0p-53;
    v[i] = static_cast<float>((2.0 * u - 1.0) * bound);
  }
  return v;
}

struct Adapter {
  TensorId a = kNoTensor, b = kNoTensor;
};

// The module's A and B, created once and shared by every function that runs the module.
Result<Adapter> adapter_for(Graph& g, const std::string& module, int64_t in, int64_t out, const Recipe::Lora& lora) {
  const std::string a_name = module + ".lora_A.weight", b_name = module + ".lora_B.weight";
  Adapter ad{g.find(a_name), g.find(b_name)};
  if (ad.a != kNoTensor && ad.b != kNoTensor) return ad;
  if (ad.a != kNoTensor || ad.b != kNoTensor) {
    return Status(Code::kInvalidArgument, "lora: the model already has a tensor named '" + (ad.a != kNoTensor ? a_name : b_name) + "'");
  }
  ad.a = g.add_parameter_f32(a_name, {lora.rank, in}, uniform_values(lora.seed, a_name, lora.rank * in, 1.0 / std::sqrt(double(in))));
  ad.b = g.add_parameter_f32(b_name, {out, lora.rank}, std::vector<float>(static_cast<size_t>(out * lora.rank), 0.0f));
  return ad;
}

// Rewrites one node list; returns the modules adapted in it.
Result<int> adapt(Graph& g, std::vector<Node>& nodes, const Recipe::Lora& lora) {
  const double scale = lora.alpha / static_cast<double>(lora.rank);
  std::vector<Node> out;
  out.reserve(nodes.size());
  int adapted = 0;
  for (Node& n : nodes) {
    const bool linear = n.op == "Linear" && n.inputs.size() >= 2 && n.inputs[1] != kNoTensor && n.outputs.size() == 1;
    const TensorDesc* w = linear ? &g.tensor(n.inputs[1]) : nullptr;
    const std::string suffix = ".weight";
    const bool named = w && w->kind == TensorKind::kParameter && w->shape.size() == 2 && w->name.size() > suffix.size() &&
                       w->name.compare(w->name.size() - suffix.size(), suffix.size(), suffix) == 0;
    const std::string module = named ? w->name.substr(0, w->name.size() - suffix.size()) : "";
    if (!named || !lora_targets(lora.target_modules, module)) {
      out.push_back(std::move(n));
      continue;
    }
    const int64_t rows = w->shape[0], cols = w->shape[1];
    POCK_ASSIGN_OR_RETURN(const Adapter ad, adapter_for(g, module, cols, rows, lora));
    // The base layer writes a new tensor; the sum takes over its old output, so readers stay.
    const TensorId result = n.outputs[0];
    TensorDesc base = g.tensor(result);
    base.name = g.unique_name(module + ".base");
    const TensorId base_out = g.add_tensor(base);
    n.outputs[0] = base_out;
    const TensorId x = n.inputs[0];
    out.push_back(std::move(n));
    TensorId in = x;
    auto emit = [&](const std::string& op, std::vector<TensorId> inputs, Attrs attrs, const std::string& name) -> Result<TensorId> {
      POCK_ASSIGN_OR_RETURN(Node node, g.create_node(op, std::move(inputs), std::move(attrs), module + "." + name));
      const TensorId y = node.outputs[0];
      out.push_back(std::move(node));
      return y;
    };
    if (lora.dropout > 0.0) {
      POCK_ASSIGN_OR_RETURN(in, emit("Dropout", {x}, Attrs{{"ratio", lora.dropout}}, "lora_dropout"));
    }
    POCK_ASSIGN_OR_RETURN(const TensorId down, emit("Linear", {in, ad.a}, {}, "lora_A"));
    POCK_ASSIGN_OR_RETURN(const TensorId up, emit("Linear", {down, ad.b}, {}, "lora_B"));
    POCK_ASSIGN_OR_RETURN(const TensorId scaled, emit("ScaleShift", {up}, Attrs{{"alpha", scale}, {"beta", 0.0}}, "lora_scale"));
    POCK_ASSIGN_OR_RETURN(Node sum, g.create_node("Add", {base_out, scaled}, {}, module + ".lora_add"));
    sum.outputs[0] = result;
    out.push_back(std::move(sum));
    ++adapted;
  }
  nodes = std::move(out);
  return adapted;
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

Result<int> add_lora_adapters(Graph& graph, const Recipe::Lora& lora) {
  if (lora.rank <= 0) return 0;
  POCK_ASSIGN_OR_RETURN(int adapted, adapt(graph, graph.mutable_nodes(), lora));
  for (GraphFunction& f : graph.mutable_functions()) {
    POCK_ASSIGN_OR_RETURN(const int more, adapt(graph, f.nodes, lora));
    (void)more;  // the same modules again, sharing their adapters
  }
  if (adapted == 0) {
    return Status(Code::kInvalidArgument, "lora.target_modules: no Linear layer of the model matches (its weights are named "
                                          "like 'model.layers.0.self_attn.q_proj.weight': target 'q_proj' or a glob)");
  }
  return adapted;
}

}  // namespace pock
