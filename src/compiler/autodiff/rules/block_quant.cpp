// Gradient rules of the block_quant family. The block-quantized weights are frozen constants:
// only the activations (and LinearQ's bias) get gradients.
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

Status frozen(GradContext& c, const char* what) {
  return Status(Code::kInvalidArgument, c.node().op + " '" + c.node().name + "': " + what + " is a frozen block-quantized constant");
}

// y = x dequant(w)ᵀ + b: dx = dy dequant(w), computed from the same rows of blocks (no transposed
// copy of the weight); the bias trains as Linear's.
Status linear_q_grad(GradContext& c) {
  if (c.needs(1)) return frozen(c, "the weight");
  if (c.needs(0)) {
    Attrs attrs = c.attrs();
    // compute int8 quantizes dy per 32 of the weight's rows; other row counts stay exact.
    if (attrs.get_string("compute", "f32") == "int8" && c.desc(c.x(1)).shape[0] % 32 != 0) attrs.set("compute", std::string("f32"));
    c.set_dx(0, c.emit1("LinearQInputGrad", {c.dy(0), c.x(1)}, attrs));
  }
  if (c.needs(2)) {
    const Shape shape = c.desc(c.x(2)).shape;  // a copy: emitting nodes grows the tensor table
    c.set_dx(2, c.sum_to_shape(c.dy(0), shape));
  }
  return Status::ok();
}

// loss = CrossEntropy(LinearQ(x)): the op's second output is dloss/dx for dloss = 1.
Status linear_q_cross_entropy_grad(GradContext& c) {
  if (c.needs(1)) return frozen(c, "the weight");
  if (!c.needs(0)) return Status::ok();
  if (c.node().outputs.size() < 2) {
    return Status(Code::kInvalidArgument, c.node().op + " '" + c.node().name + "': built without its gradient output");
  }
  c.set_dx(0, c.emit1("Mul", {c.y(1), c.dy(0)}));
  return Status::ok();
}

// The table is frozen and indices are integers: nothing flows back.
Status gather_q_grad(GradContext& c) {
  if (c.needs(0)) return frozen(c, "the table");
  return Status::ok();
}

}  // namespace

void register_block_quant_gradients(GradRegistry& r) {
  r.add("LinearQ", linear_q_grad);
  r.add("LinearQCrossEntropy", linear_q_cross_entropy_grad);
  r.add("GatherQ", gather_q_grad);
}

}  // namespace pock
