#include <memory>

#include "compiler/passes/eval_node.hpp"
#include "compiler/passes/passes.hpp"

namespace pock {
namespace {

constexpr uint64_t kMaxFoldedBytes = 64ull << 20;  // don't bloat the blob with huge constants

bool is_constant(const Graph& g, TensorId id) { return id == kNoTensor || g.tensor(id).kind == TensorKind::kConstant; }

}  // namespace

Result<int> fold_constants(TrainingProgram& program, FunctionDef& fn) {
  Graph& g = program.graph;
  int folded = 0;
  std::vector<Node> kept;
  for (Node& n : fn.nodes) {
    bool foldable = !has_side_effects(n) && n.op != "DropoutTrain";
    uint64_t out_bytes = 0;
    for (TensorId in : n.inputs) foldable = foldable && is_constant(g, in);
    for (TensorId out : n.outputs) {
      out_bytes += g.tensor(out).nbytes();
      for (TensorId o : fn.outputs) foldable = foldable && o != out;
    }
    if (!foldable || out_bytes > kMaxFoldedBytes) {
      kept.push_back(std::move(n));
      continue;
    }
    std::vector<const void*> inputs;
    for (TensorId in : n.inputs) inputs.push_back(in == kNoTensor ? nullptr : g.tensor(in).data->data());
    std::vector<std::vector<uint8_t>> values;
    Status s = evaluate_node(g, n, inputs, &values);
    if (!s.is_ok()) {  // no kernel or a kernel error: keep the node, the runtime will run it
      kept.push_back(std::move(n));
      continue;
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      TensorDesc& t = g.mutable_tensor(n.outputs[i]);
      t.kind = TensorKind::kConstant;
      t.data = std::make_shared<const std::vector<uint8_t>>(std::move(values[i]));
    }
    ++folded;
  }
  fn.nodes = std::move(kept);
  return folded;
}

}  // namespace pock
