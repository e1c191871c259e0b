// Import-time evaluation of value-computing ops on known inputs: arithmetic, comparisons, logic,
// Where, Cast, Constant, ConstantOfShape, Range, MatMul. Exporters emit these on static shapes
// (index arithmetic, masks, rotary tables); folding them leaves only the model's real compute.
// Float math runs in double and is rounded to the tensor's dtype after every op, which matches
// the exporter's float32 arithmetic exactly for + - * / and to an ulp for the transcendentals.
#include <algorithm>
#include <cmath>
#include <map>
#include <type_traits>

#include "frontend/onnx/einsum_equation.hpp"
#include "frontend/onnx/folding_util.hpp"
#include "kernels/params/math_unary.hpp"
#include "kernels/logic_ops.hpp"

namespace pock::onnx_import::fold {
namespace {

using Inputs = std::vector<const HostTensor*>;
using Outputs = std::vector<HostTensor>;

// --- broadcast and index helpers --------------------------------------------------------------

}  // namespace

std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

std::vector<int64_t> broadcast_index(const Shape& in, const Shape& out) {
  const int64_t n = numel(out);
  std::vector<int64_t> idx(static_cast<size_t>(n), 0);
  const size_t offset = out.size() - in.size();
  const std::vector<int64_t> in_strides = strides_of(in);
  std::vector<int64_t> coord(out.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t flat = 0;
    for (size_t d = 0; d < in.size(); ++d) {
      if (in[d] != 1) flat += coord[d + offset] * in_strides[d];
    }
    idx[k] = flat;
    for (size_t d = out.size(); d-- > 0;) {
      if (++coord[d] < out[d]) break;
      coord[d] = 0;
    }
  }
  return idx;
}

Result<Shape> broadcast_all(const NodeView& node, const Inputs& inputs) {
  Shape out;
  for (const HostTensor* t : inputs) {
    if (!t) continue;
    auto s = broadcast_shapes(out, t->shape);
    if (!s.is_ok()) return node.error("inputs do not broadcast: " + s.status().message());
    out = s.value();
  }
  return out;
}

Result<DType> onnx_dtype(const NodeView& node, int64_t elem_type) {
  auto dt = dtype_from_onnx(static_cast<int32_t>(elem_type));
  if (!dt.is_ok()) return node.unsupported(dt.status().message());
  return dt.value();
}

Status check_folded_size(const NodeView& node, const Shape& shape) {
  POCK_RETURN_IF_ERROR(check_dims(shape, node.where() + " output"));
  if (numel(shape) > kMaxFoldedElements) {
    return node.error("folding would create a constant of " + shape_str(shape) + " elements, more than " +
                      std::to_string(kMaxFoldedElements));
  }
  return Status::ok();
}

Result<int> axis_of(const NodeView& node, int64_t axis, int rank) {
  auto a = normalize_axis(axis, rank);
  if (!a.is_ok()) return node.error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return a.value();
}

namespace {

// --- elementwise -----------------------------------------------------------------------------

using FloatFn = double (*)(double);
using IntFn = int64_t (*)(int64_t);

Status unary(const Inputs& in, Outputs* out, bool* folded, FloatFn f, IntFn i) {
  const HostTensor& x = *in[0];
  HostTensor y = HostTensor::zeros(x.dtype, x.shape);
  if (x.is_float()) {
    for (int64_t k = 0; k < x.size(); ++k) y.f[k] = round_to(x.dtype, f(x.f[k]));
  } else {
    if (!i) return Status::ok();  // not defined on integers: leave it to the converter
    for (int64_t k = 0; k < x.size(); ++k) y.i[k] = wrap_to(x.dtype, i(x.i[k]));
  }
  out->push_back(std::move(y));
  *folded = true;
  return Status::ok();
}

#define POCK_UNARY_FOLDER(NAME, FLOAT_EXPR, INT_FN)                                             \
  Status fold_##NAME(NodeView&, const Inputs& in, Outputs* out, bool* folded) {                 \
    return unary(in, out, folded, [](double v) -> double { return FLOAT_EXPR; }, INT_FN);        \
  }
POCK_UNARY_FOLDER(neg, -v, [](int64_t v) -> int64_t { return -v; })
POCK_UNARY_FOLDER(abs, std::fabs(v), [](int64_t v) -> int64_t { return v < 0 ? -v : v; })
POCK_UNARY_FOLDER(sqrt, std::sqrt(v), nullptr)
POCK_UNARY_FOLDER(exp, std::exp(v), nullptr)
POCK_UNARY_FOLDER(log, std::log(v), nullptr)
POCK_UNARY_FOLDER(reciprocal, 1.0 / v, nullptr)
POCK_UNARY_FOLDER(tanh, std::tanh(v), nullptr)
POCK_UNARY_FOLDER(sigmoid, 1.0 / (1.0 + std::exp(-v)), nullptr)
POCK_UNARY_FOLDER(not, logic::Not()(v) ? 1 : 0, [](int64_t v) -> int64_t { return logic::Not()(v); })
#undef POCK_UNARY_FOLDER

// The math_unary functions (Acos .. Sign) fold with the run-time kernels' own definition, in f32
// for f32 tensors as the kernels compute, so that folding a node does not change its value; other
// float dtypes in double, rounded. Integer inputs are left to the converter.
template <typename F>
Status fold_math(NodeView&, const Inputs& in, Outputs* out, bool* folded) {
  const HostTensor& x = *in[0];
  if (!x.is_float()) return Status::ok();
  HostTensor y = HostTensor::zeros(x.dtype, x.shape);
  for (int64_t k = 0; k < x.size(); ++k) {
    y.f[k] = x.dtype == DType::kF32 ? F()(static_cast<float>(x.f[k])) : round_to(x.dtype, F()(x.f[k]));
  }
  out->push_back(std::move(y));
  *folded = true;
  return Status::ok();
}

enum class Kind { kArith, kCompare, kLogic };

template <typename F>
Status binary(NodeView& node, const Inputs& in, Outputs* out, bool* folded, Kind kind, F fn) {
  const HostTensor& a = *in[0];
  const HostTensor& b = *in[1];
  if (a.is_float() != b.is_float()) return node.error("inputs have different dtypes");
  POCK_ASSIGN_OR_RETURN(Shape shape, broadcast_all(node, in));
  POCK_RETURN_IF_ERROR(check_folded_size(node, shape));
  const DType dt = kind == Kind::kArith ? a.dtype : DType::kBool;
  HostTensor y = HostTensor::zeros(dt, shape);
  const auto ia = broadcast_index(a.shape, shape), ib = broadcast_index(b.shape, shape);
  for (int64_t k = 0; k < y.size(); ++k) {
    if (a.is_float()) {
      const double r = fn(a.f[ia[k]], b.f[ib[k]]);
      if (kind == Kind::kArith) y.f[k] = round_to(dt, r);
      else y.i[k] = r != 0;
    } else {
      const int64_t r = fn(a.i[ia[k]], b.i[ib[k]]);
      y.i[k] = kind == Kind::kArith ? wrap_to(dt, r) : (r != 0);
    }
  }
  out->push_back(std::move(y));
  *folded = true;
  return Status::ok();
}

// Integer division truncates toward zero (ONNX Runtime); a zero divisor is an error, not UB.
Status fold_div(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  if (!in[1]->is_float()) {
    for (int64_t v : in[1]->i) {
      if (v == 0) return node.error("integer division by zero in a constant expression");
    }
  }
  return binary(node, in, out, folded, Kind::kArith, [](auto x, auto y) { return x / y; });
}

Status fold_mod(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  if (in[0]->is_float()) return Status::ok();
  for (int64_t v : in[1]->i) {
    if (v == 0) return node.error("integer modulo by zero in a constant expression");
  }
  POCK_ASSIGN_OR_RETURN(int64_t fmod, node.attrs().get_int("fmod", 0));
  // fmod = 0: the sign follows the divisor (Python's %), which is what exporters rely on; fmod = 1:
  // C's truncated remainder. x % -1 is 0 either way (INT_MIN % -1 would overflow).
  return binary(node, in, out, folded, Kind::kArith, [fmod](auto x, auto y) {
    if constexpr (std::is_integral_v<decltype(x)>) {
      const auto r = y == -1 ? decltype(x){0} : x % y;
      return (!fmod && r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
    } else {
      return x;  // unreachable: float inputs return above
    }
  });
}

Status fold_pow(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  if (!in[0]->is_float() || !in[1]->is_float()) return Status::ok();
  return binary(node, in, out, folded, Kind::kArith, [](double x, double y) { return std::pow(x, y); });
}

#define POCK_BINARY_FOLDER(NAME, KIND, EXPR)                                               \
  Status fold_##NAME(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {       \
    return binary(node, in, out, folded, KIND, [](auto x, auto y) { return EXPR; });       \
  }
POCK_BINARY_FOLDER(add, Kind::kArith, x + y)
POCK_BINARY_FOLDER(sub, Kind::kArith, x - y)
POCK_BINARY_FOLDER(mul, Kind::kArith, x * y)
POCK_BINARY_FOLDER(max2, Kind::kArith, x > y ? x : y)
POCK_BINARY_FOLDER(min2, Kind::kArith, x < y ? x : y)
POCK_BINARY_FOLDER(equal, Kind::kCompare, static_cast<decltype(x)>(logic::Equal()(x, y)))
POCK_BINARY_FOLDER(less, Kind::kCompare, static_cast<decltype(x)>(logic::Less()(x, y)))
POCK_BINARY_FOLDER(less_equal, Kind::kCompare, static_cast<decltype(x)>(logic::LessOrEqual()(x, y)))
POCK_BINARY_FOLDER(greater, Kind::kCompare, static_cast<decltype(x)>(logic::Greater()(x, y)))
POCK_BINARY_FOLDER(greater_equal, Kind::kCompare, static_cast<decltype(x)>(logic::GreaterOrEqual()(x, y)))
POCK_BINARY_FOLDER(and, Kind::kLogic, static_cast<decltype(x)>(logic::And()(x, y)))
POCK_BINARY_FOLDER(or, Kind::kLogic, static_cast<decltype(x)>(logic::Or()(x, y)))
POCK_BINARY_FOLDER(xor, Kind::kLogic, static_cast<decltype(x)>(logic::Xor()(x, y)))
#undef POCK_BINARY_FOLDER

// ONNX Max/Min are variadic; fold pairwise.
template <Status (*Pair)(NodeView&, const Inputs&, Outputs*, bool*)>
Status fold_variadic(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  if (in.empty() || !in[0]) return node.error("needs at least one input");
  HostTensor acc = *in[0];
  for (size_t k = 1; k < in.size(); ++k) {
    Outputs step;
    bool ok = false;
    POCK_RETURN_IF_ERROR(Pair(node, {&acc, in[k]}, &step, &ok));
    if (!ok) return Status::ok();
    acc = std::move(step[0]);
  }
  out->push_back(std::move(acc));
  *folded = true;
  return Status::ok();
}

Status fold_where(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  const HostTensor &c = *in[0], &a = *in[1], &b = *in[2];
  if (a.is_float() != b.is_float()) return node.error("branches have different dtypes");
  POCK_ASSIGN_OR_RETURN(Shape shape, broadcast_all(node, in));
  POCK_RETURN_IF_ERROR(check_folded_size(node, shape));
  HostTensor y = HostTensor::zeros(a.dtype, shape);
  const auto ic = broadcast_index(c.shape, shape), ia = broadcast_index(a.shape, shape), ib = broadcast_index(b.shape, shape);
  for (int64_t k = 0; k < y.size(); ++k) {
    if (c.as_int(ic[k]) != 0) copy_element(a, ia[k], y, k);
    else copy_element(b, ib[k], y, k);
  }
  out->push_back(std::move(y));
  *folded = true;
  return Status::ok();
}

HostTensor cast_to(const HostTensor& x, DType to) {
  HostTensor y = HostTensor::zeros(to, x.shape);
  for (int64_t k = 0; k < x.size(); ++k) {
    if (y.is_float()) y.f[k] = round_to(to, x.as_double(k));
    else if (x.is_float()) y.i[k] = to == DType::kBool ? x.f[k] != 0 : wrap_to(to, static_cast<int64_t>(std::trunc(x.f[k])));
    else y.i[k] = wrap_to(to, x.i[k]);
  }
  return y;
}

Status fold_cast(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  POCK_ASSIGN_OR_RETURN(int64_t to, node.attrs().get_int("to", -1));
  POCK_ASSIGN_OR_RETURN(DType dt, onnx_dtype(node, to));
  out->push_back(cast_to(*in[0], dt));
  *folded = true;
  return Status::ok();
}

Status fold_cast_like(NodeView&, const Inputs& in, Outputs* out, bool* folded) {
  out->push_back(cast_to(*in[0], in[1]->dtype));
  *folded = true;
  return Status::ok();
}

Status fold_identity(NodeView&, const Inputs& in, Outputs* out, bool* folded) {
  out->push_back(*in[0]);
  *folded = true;
  return Status::ok();
}

// The tensor of a 'value' attribute; errors name the node (such tensors usually have no name).
Result<HostTensor> value_attribute(NodeView& node, const onnx::AttributeProto& a) {
  if (a.type() != onnx::AttributeProto::TENSOR) return node.error("attribute 'value' must be a tensor");
  auto t = decode_host_tensor(a.t(), node.ctx().base_dir);
  if (!t.is_ok()) return Status(t.status().code(), node.where() + ": attribute 'value': " + t.status().message());
  return t;
}

Status fold_constant(NodeView& node, const Inputs&, Outputs* out, bool* folded) {
  const auto& attrs = node.attrs();
  if (const auto* a = attrs.find("value")) {
    POCK_ASSIGN_OR_RETURN(HostTensor t, value_attribute(node, *a));
    out->push_back(std::move(t));
  } else if (attrs.has("value_float")) {
    POCK_ASSIGN_OR_RETURN(double v, attrs.get_float("value_float", 0));
    out->push_back(HostTensor::scalar_float(v));
  } else if (attrs.has("value_floats")) {
    POCK_ASSIGN_OR_RETURN(auto v, attrs.get_floats("value_floats", {}));
    HostTensor t = HostTensor::zeros(DType::kF32, {static_cast<int64_t>(v.size())});
    for (size_t k = 0; k < v.size(); ++k) t.f[k] = round_to(DType::kF32, v[k]);
    out->push_back(std::move(t));
  } else if (attrs.has("value_int")) {
    POCK_ASSIGN_OR_RETURN(int64_t v, attrs.get_int("value_int", 0));
    out->push_back(HostTensor::scalar_int(v));
  } else if (attrs.has("value_ints")) {
    POCK_ASSIGN_OR_RETURN(auto v, attrs.get_ints("value_ints", {}));
    out->push_back(HostTensor::vector_ints(v));
  } else {
    return node.unsupported("only tensor, float(s) and int(s) constants are supported (sparse and string are not)");
  }
  *folded = true;
  return Status::ok();
}

Status fold_constant_of_shape(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  Shape shape = in[0]->ints();
  POCK_RETURN_IF_ERROR(check_folded_size(node, shape));
  HostTensor fill = HostTensor::scalar_float(0.0);
  if (const auto* a = node.attrs().find("value")) {
    POCK_ASSIGN_OR_RETURN(fill, value_attribute(node, *a));
    if (fill.size() != 1) return node.error("attribute 'value' must hold one element");
  }
  HostTensor y = HostTensor::zeros(fill.dtype, shape);
  for (int64_t k = 0; k < y.size(); ++k) copy_element(fill, 0, y, k);
  out->push_back(std::move(y));
  *folded = true;
  return Status::ok();
}

Status fold_range(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  for (int k = 0; k < 3; ++k) {
    if (in[k]->size() != 1) return node.input_error(k, "must be a scalar");
  }
  const DType dt = in[0]->dtype;
  const double start = in[0]->as_double(0), limit = in[1]->as_double(0), delta = in[2]->as_double(0);
  if (delta == 0) return node.error("delta is zero");
  const double count = std::max(std::ceil((limit - start) / delta), 0.0);
  if (count > static_cast<double>(kMaxFoldedElements)) return node.error("range of " + std::to_string(count) + " elements is too large");
  HostTensor y = HostTensor::zeros(dt, {static_cast<int64_t>(count)});
  for (int64_t k = 0; k < y.size(); ++k) {
    if (y.is_float()) y.f[k] = round_to(dt, start + static_cast<double>(k) * delta);
    else y.i[k] = in[0]->i[0] + k * in[2]->i[0];
  }
  out->push_back(std::move(y));
  *folded = true;
  return Status::ok();
}

// Batched matmul with numpy broadcasting of the batch dims; 1-D operands as in numpy.
Status fold_matmul(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  HostTensor a = *in[0], b = *in[1];
  if (!a.is_float() || !b.is_float()) return Status::ok();
  const bool a_vec = a.shape.size() == 1, b_vec = b.shape.size() == 1;
  if (a.shape.empty() || b.shape.empty()) return node.error("MatMul operands must have rank >= 1");
  if (a_vec) a.shape.insert(a.shape.begin(), 1);
  if (b_vec) b.shape.push_back(1);
  const int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back(), n = b.shape.back();
  if (b.shape[b.shape.size() - 2] != k) return node.error("MatMul inner dims differ: " + shape_str(a.shape) + " x " + shape_str(b.shape));
  const Shape ab(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  auto batch = broadcast_shapes(ab, bb);
  if (!batch.is_ok()) return node.error(batch.status().message());
  const auto ia = broadcast_index(ab, batch.value()), ib = broadcast_index(bb, batch.value());
  Shape shape = batch.value();
  shape.push_back(m);
  shape.push_back(n);
  POCK_RETURN_IF_ERROR(check_folded_size(node, shape));
  HostTensor y = HostTensor::zeros(a.dtype, shape);
  for (size_t p = 0; p < ia.size(); ++p) {
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t c = 0; c < n; ++c) {
        double acc = 0;
        for (int64_t q = 0; q < k; ++q) acc += a.f[ia[p] * m * k + r * k + q] * b.f[ib[p] * k * n + q * n + c];
        y.f[(static_cast<int64_t>(p) * m + r) * n + c] = round_to(a.dtype, acc);
      }
    }
  }
  if (a_vec) y.shape.erase(y.shape.end() - 2);
  if (b_vec) y.shape.pop_back();
  out->push_back(std::move(y));
  *folded = true;
  return Status::ok();
}

// Einsum on known operands (torch.outer and friends export it): every label combination is
// visited once, which is fine for the small tables exporters compute this way.
Status fold_einsum(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  POCK_ASSIGN_OR_RETURN(std::string equation, node.attrs().get_string("equation", ""));
  std::vector<size_t> ranks;
  for (const HostTensor* t : in) {
    if (!t->is_float()) return Status::ok();
    ranks.push_back(t->shape.size());
  }
  auto parsed = parse_einsum(equation, ranks);
  if (!parsed.is_ok()) return node.error(parsed.status().message());
  const std::vector<std::string>& terms = parsed->operands;
  const std::string& result = parsed->result;
  std::string labels;  // every distinct label
  std::map<char, int64_t> dims;
  for (size_t t = 0; t < terms.size(); ++t) {
    for (size_t d = 0; d < terms[t].size(); ++d) {
      const char c = terms[t][d];
      if (!dims.count(c)) labels += c;
      if (dims.count(c) && dims[c] != in[t]->shape[d]) return node.error("label '" + std::string(1, c) + "' has two sizes");
      dims[c] = in[t]->shape[d];
    }
  }
  Shape shape;
  for (char c : result) shape.push_back(dims[c]);
  POCK_RETURN_IF_ERROR(check_folded_size(node, shape));
  HostTensor y = HostTensor::zeros(in[0]->dtype, shape);
  std::map<char, int64_t> at;
  for (char c : labels) at[c] = 0;
  const auto out_strides = strides_of(shape);
  std::vector<std::vector<int64_t>> in_strides;
  for (const HostTensor* t : in) in_strides.push_back(strides_of(t->shape));
  for (bool more = true; more;) {
    double prod = 1;
    for (size_t t = 0; t < terms.size(); ++t) {
      int64_t flat = 0;
      for (size_t d = 0; d < terms[t].size(); ++d) flat += at[terms[t][d]] * in_strides[t][d];
      prod *= in[t]->f[flat];
    }
    int64_t o = 0;
    for (size_t d = 0; d < result.size(); ++d) o += at[result[d]] * out_strides[d];
    y.f[o] += prod;
    more = false;
    for (size_t k = labels.size(); k-- > 0;) {
      if (++at[labels[k]] < dims[labels[k]]) {
        more = true;
        break;
      }
      at[labels[k]] = 0;
    }
  }
  for (double& v : y.f) v = round_to(y.dtype, v);
  out->push_back(std::move(y));
  *folded = true;
  return Status::ok();
}

}  // namespace

void register_elementwise_folders(std::unordered_map<std::string, Folder>& t) {
  t["Neg"] = fold_neg;
  t["Abs"] = fold_abs;
  t["Sqrt"] = fold_sqrt;
  t["Exp"] = fold_exp;
  t["Log"] = fold_log;
  t["Reciprocal"] = fold_reciprocal;
  t["Tanh"] = fold_tanh;
#define POCK_MATH_UNARY_FOLDER(Op) t[#Op] = fold_math<math_unary::Op>;
  POCK_MATH_UNARY_FUNCTIONS(POCK_MATH_UNARY_FOLDER)
#undef POCK_MATH_UNARY_FOLDER
  t["Sigmoid"] = fold_sigmoid;
  t["Not"] = fold_not;
  t["Add"] = fold_add;
  t["Sub"] = fold_sub;
  t["Mul"] = fold_mul;
  t["Div"] = fold_div;
  t["Mod"] = fold_mod;
  t["Pow"] = fold_pow;
  t["Max"] = fold_variadic<fold_max2>;
  t["Min"] = fold_variadic<fold_min2>;
  t["Equal"] = fold_equal;
  t["Less"] = fold_less;
  t["LessOrEqual"] = fold_less_equal;
  t["Greater"] = fold_greater;
  t["GreaterOrEqual"] = fold_greater_equal;
  t["And"] = fold_and;
  t["Or"] = fold_or;
  t["Xor"] = fold_xor;
  t["Where"] = fold_where;
  t["Cast"] = fold_cast;
  t["CastLike"] = fold_cast_like;
  t["Identity"] = fold_identity;
  t["Constant"] = fold_constant;
  t["ConstantOfShape"] = fold_constant_of_shape;
  t["Range"] = fold_range;
  t["MatMul"] = fold_matmul;
  t["Einsum"] = fold_einsum;
}

}  // namespace pock::onnx_import::fold

namespace pock::onnx_import {
void register_folders(std::unordered_map<std::string, Folder>& table) {
  fold::register_elementwise_folders(table);
  fold::register_layout_folders(table);
  fold::register_signal_folders(table);
  fold::register_data_dependent_folders(table);
}
}  // namespace pock::onnx_import
