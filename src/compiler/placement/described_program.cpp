#include "compiler/placement/described_program.hpp"

namespace pock {

bool stored_in_weights(const TensorDesc& t) {
  return t.kind == TensorKind::kConstant || (t.kind == TensorKind::kParameter && !t.trainable);
}

DescribedProgram describe_program(TrainingProgram& program) {
  DescribedProgram d;
  const Graph& g = program.graph;
  d.spec.tensors.resize(g.num_tensors());
  for (size_t i = 0; i < g.num_tensors(); ++i) {
    const TensorDesc& src = g.tensors()[i];
    TensorSpec& t = d.spec.tensors[i];
    t.name = src.name;
    t.dtype = src.dtype;
    t.shape = src.shape;
    t.kind = src.kind;
    t.trainable = src.trainable;
    t.nbytes = src.nbytes();
    t.storage = stored_in_weights(src) ? Storage::kWeights : Storage::kArena;
  }
  for (FunctionDef& fn : program.functions) {
    for (Node& n : fn.nodes) {
      OpSpec op;
      op.op = n.op;
      op.name = n.name;
      op.inputs.assign(n.inputs.begin(), n.inputs.end());
      op.outputs.assign(n.outputs.begin(), n.outputs.end());
      op.attrs = n.attrs;
      d.spec.ops.push_back(std::move(op));
      d.nodes.push_back(&n);
    }
  }
  return d;
}

}  // namespace pock
