// ONNX Einsum on tensors known at run time, lowered to pock ops that already have gradients, so an
// Einsum trains like the MatMuls it stands for (docs/onnx.md). Per operand: a repeated label
// (a diagonal, "ii" or "bii") is a Mul by an identity mask and a ReduceSum of the second axis; a
// label no other operand and not the result uses is summed out. Two operands then meet in one
// batched MatMul — Transpose each to [batch, kept, contracted] / [batch, contracted, kept], Reshape to
// rank 3, multiply, Reshape back — and further operands fold in from the left. A final Transpose
// puts the axes in the result's order. Constant operands are folded instead (fold_einsum).
#include <algorithm>
#include <numeric>

#include "frontend/onnx/einsum_equation.hpp"
#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

using Ints = std::vector<int64_t>;

// An intermediate value of the lowering: a graph tensor and the label of each of its axes.
struct Term {
  TensorId id = kNoTensor;
  std::string labels;
  Shape shape;
};

class Lowering {
 public:
  Lowering(NodeView& node, DType dtype) : node_(node), dtype_(dtype) {}

  Result<Term> emit(const char* op, const Term& in, Attrs attrs, std::string labels, Shape shape) {
    POCK_ASSIGN_OR_RETURN(auto out, node_.emit(op, {in.id}, std::move(attrs), "einsum_" + std::to_string(++steps_)));
    return Term{out[0], std::move(labels), std::move(shape)};
  }

  // x with its axes in the order of `labels` (a permutation of x's).
  Result<Term> transpose(const Term& x, const std::string& labels) {
    if (labels == x.labels) return x;
    Ints perm;
    Shape shape;
    for (char c : labels) {
      const size_t d = x.labels.find(c);
      perm.push_back(static_cast<int64_t>(d));
      shape.push_back(x.shape[d]);
    }
    return emit("Transpose", x, Attrs{{"perm", perm}}, labels, shape);
  }

  Result<Term> reshape(const Term& x, Shape shape, std::string labels) {
    if (shape == x.shape) return Term{x.id, std::move(labels), std::move(shape)};
    return emit("Reshape", x, Attrs{{"shape", shape}}, std::move(labels), shape);
  }

  Result<Term> sum_axes(const Term& x, const Ints& axes) {
    if (axes.empty()) return x;
    std::string labels;
    Shape shape;
    for (size_t d = 0; d < x.labels.size(); ++d) {
      if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end()) continue;
      labels += x.labels[d];
      shape.push_back(x.shape[d]);
    }
    return emit("ReduceSum", x, Attrs{{"axes", axes}, {"keepdims", int64_t{0}}}, labels, shape);
  }

  // The diagonal of axes p < q (one label, one size): x times an identity mask over them, summed over q.
  Result<Term> diagonal(const Term& x, size_t p, size_t q) {
    const int64_t n = x.shape[p];
    Shape mask_shape(x.shape.size(), 1);
    mask_shape[p] = mask_shape[q] = n;
    HostTensor eye = HostTensor::zeros(dtype_, mask_shape);
    for (int64_t i = 0; i < n; ++i) eye.f[static_cast<size_t>(i * n + i)] = 1.0;
    Graph& g = node_.ctx().graph;
    const TensorId mask = g.add_constant(g.unique_name(node_.where() + "/einsum_eye"), dtype_, mask_shape, eye.to_bytes());
    POCK_ASSIGN_OR_RETURN(auto masked, node_.emit("Mul", {x.id, mask}, {}, "einsum_" + std::to_string(++steps_)));
    return sum_axes(Term{masked[0], x.labels, x.shape}, {static_cast<int64_t>(q)});
  }

  // x with each repeated label reduced to one axis (its diagonal) and the labels `needed` lacks summed out.
  Result<Term> simplify(Term x, const std::string& needed) {
    for (size_t p = 0; p < x.labels.size(); ++p) {
      for (size_t q = x.labels.find(x.labels[p], p + 1); q != std::string::npos; q = x.labels.find(x.labels[p], p + 1)) {
        POCK_ASSIGN_OR_RETURN(x, diagonal(x, p, q));
      }
    }
    Ints unused;
    for (size_t d = 0; d < x.labels.size(); ++d) {
      if (needed.find(x.labels[d]) == std::string::npos) unused.push_back(static_cast<int64_t>(d));
    }
    return sum_axes(x, unused);
  }

  // a and b (each label once) multiplied and summed over the labels they share that `needed` lacks.
  Result<Term> contract(const Term& a, const Term& b, const std::string& needed) {
    std::string batch, a_only, b_only, summed;
    for (char c : a.labels) {
      const bool shared = b.labels.find(c) != std::string::npos;
      (shared ? (needed.find(c) != std::string::npos ? batch : summed) : a_only) += c;
    }
    for (char c : b.labels) {
      if (a.labels.find(c) == std::string::npos) b_only += c;
    }
    auto size = [&](const std::string& labels) {
      int64_t n = 1;
      for (char c : labels) n *= extent(a, b, c);
      return n;
    };
    POCK_ASSIGN_OR_RETURN(Term at, transpose(a, batch + a_only + summed));
    POCK_ASSIGN_OR_RETURN(Term bt, transpose(b, batch + summed + b_only));
    POCK_ASSIGN_OR_RETURN(at, reshape(at, {size(batch), size(a_only), size(summed)}, "abc"));
    POCK_ASSIGN_OR_RETURN(bt, reshape(bt, {size(batch), size(summed), size(b_only)}, "acd"));
    POCK_ASSIGN_OR_RETURN(auto product, node_.emit("MatMul", {at.id, bt.id}, {}, "einsum_" + std::to_string(++steps_)));
    const std::string labels = batch + a_only + b_only;
    Shape shape;
    for (char c : labels) shape.push_back(extent(a, b, c));
    return reshape(Term{product[0], "abd", {size(batch), size(a_only), size(b_only)}}, shape, labels);
  }

 private:
  static int64_t extent(const Term& a, const Term& b, char c) {
    const size_t d = a.labels.find(c);
    return d != std::string::npos ? a.shape[d] : b.shape[b.labels.find(c)];
  }

  NodeView& node_;
  DType dtype_;
  int steps_ = 0;
};

// Every axis of one label must have one size (pock does not broadcast a size-1 axis here).
Status check_sizes(NodeView& node, const std::string& equation, const EinsumEquation& eq) {
  for (size_t t = 0; t < eq.operands.size(); ++t) {
    for (size_t d = 0; d < eq.operands[t].size(); ++d) {
      const char c = eq.operands[t][d];
      for (size_t u = 0; u < eq.operands.size(); ++u) {
        const size_t e = eq.operands[u].find(c);
        if (e != std::string::npos && node.value(static_cast<int>(u)).shape[e] != node.value(static_cast<int>(t)).shape[d]) {
          return node.unsupported("equation '" + equation + "': label '" + std::string(1, c) + "' has sizes " +
                                  std::to_string(node.value(static_cast<int>(t)).shape[d]) + " and " +
                                  std::to_string(node.value(static_cast<int>(u)).shape[e]) +
                                  " (broadcasting a size-1 axis is not lowered)");
        }
      }
    }
  }
  return Status::ok();
}

Status convert_einsum(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(std::string equation, node.attrs().get_string("equation", ""));
  const DType dtype = node.value(0).dtype;
  std::vector<size_t> ranks;
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (node.value(i).dtype != dtype) return node.input_error(i, std::string("is ") + dtype_name(node.value(i).dtype) + ", input 0 is " + dtype_name(dtype));
    ranks.push_back(node.value(i).shape.size());
  }
  if (!is_float(dtype)) {
    return node.unsupported("equation '" + equation + "' on " + dtype_name(dtype) + ": pock lowers Einsum to float MatMuls only");
  }
  auto parsed = parse_einsum(equation, ranks);
  if (!parsed.is_ok()) return node.error(parsed.status().message());
  const EinsumEquation& eq = parsed.value();
  POCK_RETURN_IF_ERROR(check_sizes(node, equation, eq));
  Lowering lower(node, dtype);
  // The labels still needed after operand k: the result's and those of the operands after k.
  auto needed_after = [&](size_t k) {
    std::string labels = eq.result;
    for (size_t t = k + 1; t < eq.operands.size(); ++t) labels += eq.operands[t];
    return labels;
  };
  Term acc;
  for (size_t k = 0; k < eq.operands.size(); ++k) {
    POCK_ASSIGN_OR_RETURN(TensorId id, node.input(static_cast<int>(k)));
    POCK_ASSIGN_OR_RETURN(Term x, lower.simplify(Term{id, eq.operands[k], node.value(static_cast<int>(k)).shape},
                                                 needed_after(k) + (k > 0 ? acc.labels : std::string())));
    if (k == 0) {
      acc = x;
    } else {
      POCK_ASSIGN_OR_RETURN(acc, lower.contract(acc, x, needed_after(k)));
    }
  }
  POCK_ASSIGN_OR_RETURN(acc, lower.simplify(acc, eq.result));
  POCK_ASSIGN_OR_RETURN(acc, lower.transpose(acc, eq.result));
  return node.bind_output(0, acc.id);
}

}  // namespace

void register_einsum_converters(std::unordered_map<std::string, Converter>& t) { t["Einsum"] = convert_einsum; }

}  // namespace pock::onnx_import
