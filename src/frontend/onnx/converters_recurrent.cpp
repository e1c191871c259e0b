// ONNX RNN, GRU and LSTM unrolled at import over the static sequence length into pock ops (Slice,
// Linear, Add, Mul, Split, Concat and the activations), so every backend runs them and training
// goes through those ops' gradient rules: no recurrent kernel exists. W, R and B stay whole tensors
// (trainable when they are initializers); each direction slices its part once, and the input
// projection of all steps is one Linear over [S, B, I] before the loop.
//
// Gate order is ONNX's: GRU z, r, h; LSTM i, o, f, c. sequence_lens masks per batch row: a row's
// state stops changing after its length and its Y rows are 0, which also gives the reverse
// direction its per-row start (the state stays initial until the row's last valid step).
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

using Ints = std::vector<int64_t>;

enum class Cell { kRnn, kGru, kLstm };

int gate_count(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }
int activation_count(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3; }

struct Activation {
  std::string name;  // lower case
  double alpha = 0, beta = 0;
};

struct Geometry {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  int directions = 1;
  bool batch_first = false;  // layout 1
};

struct Settings {
  Cell cell = Cell::kRnn;
  Geometry g;
  std::string direction;
  std::optional<double> clip;
  bool linear_before_reset = false;  // GRU
  bool input_forget = false;         // LSTM: f = 1 - i
  std::vector<Activation> activations;  // activation_count(cell) per direction
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// ONNX's defaults for the alpha / beta of each activation that takes them (the operators' own).
bool activation_defaults(const std::string& name, int* params, double* alpha, double* beta) {
  struct Known {
    const char* name;
    int params;
    double alpha, beta;
  };
  static const Known kKnown[] = {{"relu", 0, 0, 0},        {"tanh", 0, 0, 0},          {"sigmoid", 0, 0, 0},
                                 {"softsign", 0, 0, 0},    {"softplus", 0, 0, 0},      {"leakyrelu", 1, 0.01, 0},
                                 {"thresholdedrelu", 1, 1.0, 0}, {"elu", 1, 1.0, 0},   {"affine", 2, 1.0, 0.0},
                                 {"scaledtanh", 2, 1.0, 1.0},    {"hardsigmoid", 2, 0.2, 0.5}};
  for (const Known& k : kKnown) {
    if (name == k.name) {
      *params = k.params;
      *alpha = k.alpha;
      *beta = k.beta;
      return true;
    }
  }
  return false;
}

// activations / activation_alpha / activation_beta: the alphas and betas are consumed in order by
// the activations that take them (onnxruntime's reading); absent ones take the operator defaults.
Status read_activations(NodeView& node, Settings* s) {
  const int per_direction = activation_count(s->cell);
  static const char* const kDefaults[3][3] = {{"tanh"}, {"sigmoid", "tanh"}, {"sigmoid", "tanh", "tanh"}};
  const int cell_index = static_cast<int>(s->cell);
  std::vector<std::string> names;
  if (const onnx::AttributeProto* a = node.attrs().find("activations")) {
    for (const auto& n : a->strings()) names.push_back(lower(n));
    if (static_cast<int>(names.size()) != per_direction * s->g.directions) {
      return node.error("activations lists " + std::to_string(names.size()) + " functions; " + node.op() + " needs " +
                        std::to_string(per_direction) + " per direction (" + std::to_string(s->g.directions) +
                        " direction(s))");
    }
  } else {
    for (int d = 0; d < s->g.directions; ++d) {
      for (int k = 0; k < per_direction; ++k) names.push_back(kDefaults[cell_index][k]);
    }
  }
  POCK_ASSIGN_OR_RETURN(auto alphas, node.attrs().get_floats("activation_alpha", {}));
  POCK_ASSIGN_OR_RETURN(auto betas, node.attrs().get_floats("activation_beta", {}));
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    Activation act{name};
    int params = 0;
    if (!activation_defaults(name, &params, &act.alpha, &act.beta)) {
      return node.unsupported("activation '" + name + "' is not one ONNX defines for " + node.op() +
                              " (Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, "
                              "Elu, Softsign, Softplus)");
    }
    if (params >= 1 && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (params >= 2 && next_beta < betas.size()) act.beta = betas[next_beta++];
    s->activations.push_back(act);
  }
  return Status::ok();
}

Status expect_shape(NodeView& node, int i, const char* what, const Shape& want) {
  if (node.value(i).shape == want) return Status::ok();
  return node.input_error(i, std::string("(") + what + ") must be " + shape_str(want) + ", got " +
                                 shape_str(node.value(i).shape));
}

Result<Settings> read_settings(NodeView& node, Cell cell) {
  Settings s;
  s.cell = cell;
  const int gates = gate_count(cell);
  POCK_ASSIGN_OR_RETURN(int64_t layout, node.attrs().get_int("layout", 0));
  if (layout != 0 && layout != 1) return node.error("layout must be 0 or 1, got " + std::to_string(layout));
  s.g.batch_first = layout == 1;
  POCK_ASSIGN_OR_RETURN(s.direction, node.attrs().get_string("direction", "forward"));
  if (s.direction != "forward" && s.direction != "reverse" && s.direction != "bidirectional") {
    return node.error("direction must be forward, reverse or bidirectional, got '" + s.direction + "'");
  }
  s.g.directions = s.direction == "bidirectional" ? 2 : 1;
  const Shape& x = node.value(0).shape;
  if (x.size() != 3) return node.input_error(0, "(X) must be 3-D, got " + shape_str(x));
  s.g.seq = s.g.batch_first ? x[1] : x[0];
  s.g.batch = s.g.batch_first ? x[0] : x[1];
  s.g.input = x[2];
  if (s.g.seq < 1) return node.input_error(0, "(X) has no time steps: " + shape_str(x));
  const Shape& r = node.value(2).shape;
  if (r.size() != 3) return node.input_error(2, "(R) must be 3-D, got " + shape_str(r));
  POCK_ASSIGN_OR_RETURN(s.g.hidden, node.attrs().get_int("hidden_size", r[2]));
  const int64_t d = s.g.directions, gh = gates * s.g.hidden;
  POCK_RETURN_IF_ERROR(expect_shape(node, 1, "W", {d, gh, s.g.input}));
  POCK_RETURN_IF_ERROR(expect_shape(node, 2, "R", {d, gh, s.g.hidden}));
  if (node.has_input(3)) POCK_RETURN_IF_ERROR(expect_shape(node, 3, "B", {d, 2 * gh}));
  if (node.has_input(4) && node.value(4).shape != Shape{s.g.batch}) {
    return node.input_error(4, "(sequence_lens) must be [" + std::to_string(s.g.batch) + "], got " +
                                   shape_str(node.value(4).shape));
  }
  const Shape state = s.g.batch_first ? Shape{s.g.batch, d, s.g.hidden} : Shape{d, s.g.batch, s.g.hidden};
  if (node.has_input(5)) POCK_RETURN_IF_ERROR(expect_shape(node, 5, "initial_h", state));
  if (cell == Cell::kLstm) {
    if (node.has_input(6)) POCK_RETURN_IF_ERROR(expect_shape(node, 6, "initial_c", state));
    if (node.has_input(7)) POCK_RETURN_IF_ERROR(expect_shape(node, 7, "P", {d, 3 * s.g.hidden}));
    POCK_ASSIGN_OR_RETURN(int64_t coupled, node.attrs().get_int("input_forget", 0));
    s.input_forget = coupled != 0;
  }
  if (cell == Cell::kGru) {
    POCK_ASSIGN_OR_RETURN(int64_t lbr, node.attrs().get_int("linear_before_reset", 0));
    s.linear_before_reset = lbr != 0;
  }
  if (node.attrs().has("clip")) {
    POCK_ASSIGN_OR_RETURN(double c, node.attrs().get_float("clip", 0));
    if (!(c > 0)) return node.error("clip must be positive, got " + std::to_string(c));
    s.clip = c;
  }
  POCK_RETURN_IF_ERROR(read_activations(node, &s));
  return s;
}

// Emits the unrolled graph of one node; every helper returns the single output of one pock op.
class Unroller {
 public:
  Unroller(NodeView& node, const Settings& s) : node_(node), s_(s) {}

  Status run();

 private:
  struct Direction {
    std::vector<TensorId> y;  // [1, B, H] per time step, in time order
    TensorId h = kNoTensor, c = kNoTensor;
  };

  Result<TensorId> op(const std::string& type, std::vector<TensorId> in, Attrs attrs = {}) {
    POCK_ASSIGN_OR_RETURN(auto out, node_.emit(type, std::move(in), std::move(attrs), "u" + std::to_string(count_++)));
    return out[0];
  }
  Result<std::vector<TensorId>> split_last(TensorId x, int pieces) {
    return node_.emit("Split", {x}, Attrs{{"axis", int64_t{-1}}, {"split", Ints(pieces, s_.g.hidden)}},
                      "u" + std::to_string(count_++));
  }
  Result<TensorId> slice(TensorId x, int64_t axis, int64_t begin, int64_t end) {
    return op("Slice", {x}, Attrs{{"starts", Ints{begin}}, {"ends", Ints{end}}, {"axes", Ints{axis}}});
  }
  // Row d of a [D, ...] tensor, without the leading axis.
  Result<TensorId> direction_row(TensorId x, int d) {
    POCK_ASSIGN_OR_RETURN(TensorId row, slice(x, 0, d, d + 1));
    return op("Squeeze", {row}, Attrs{{"axes", Ints{0}}});
  }
  Result<TensorId> add(TensorId a, TensorId b) { return op("Add", {a, b}); }
  Result<TensorId> mul(TensorId a, TensorId b) { return op("Mul", {a, b}); }
  Result<TensorId> sub(TensorId a, TensorId b) { return op("Sub", {a, b}); }
  // prev + gate * (next - prev): the convex blends of GRU's update and LSTM's coupled gate.
  Result<TensorId> blend(TensorId prev, TensorId next, TensorId gate) {
    POCK_ASSIGN_OR_RETURN(TensorId diff, sub(next, prev));
    POCK_ASSIGN_OR_RETURN(TensorId step, mul(gate, diff));
    return add(prev, step);
  }
  Result<TensorId> activate(TensorId x, const Activation& a, bool clipped);

  Result<TensorId> initial_state(int input, int d);
  Result<TensorId> step_mask(int64_t t);
  Result<Direction> run_direction(int d, bool reverse);
  Status bind_outputs(const std::vector<Direction>& dirs);

  NodeView& node_;
  const Settings& s_;
  int count_ = 0;
  TensorId zeros_ = kNoTensor;     // [1, B, H]: the state when no initial one is given
  TensorId lengths_ = kNoTensor;   // [1, B, 1] f32 sequence_lens, when masking is needed
};

Result<TensorId> Unroller::activate(TensorId x, const Activation& a, bool clipped) {
  if (clipped && s_.clip) {
    POCK_ASSIGN_OR_RETURN(x, op("Clip", {x}, Attrs{{"min", -*s_.clip}, {"max", *s_.clip}}));
  }
  const std::string& n = a.name;
  if (n == "relu") return op("Relu", {x});
  if (n == "tanh") return op("Tanh", {x});
  if (n == "sigmoid") return op("Sigmoid", {x});
  if (n == "softsign") return op("Softsign", {x});
  if (n == "softplus") return op("Softplus", {x});
  if (n == "leakyrelu") return op("LeakyRelu", {x}, Attrs{{"alpha", a.alpha}});
  if (n == "thresholdedrelu") return op("ThresholdedRelu", {x}, Attrs{{"alpha", a.alpha}});
  if (n == "elu") return op("Elu", {x}, Attrs{{"alpha", a.alpha}});
  if (n == "affine") return op("ScaleShift", {x}, Attrs{{"alpha", a.alpha}, {"beta", a.beta}});
  if (n == "scaledtanh") {
    POCK_ASSIGN_OR_RETURN(TensorId scaled, op("ScaleShift", {x}, Attrs{{"alpha", a.beta}, {"beta", 0.0}}));
    POCK_ASSIGN_OR_RETURN(TensorId t, op("Tanh", {scaled}));
    return op("ScaleShift", {t}, Attrs{{"alpha", a.alpha}, {"beta", 0.0}});
  }
  // hardsigmoid (read_activations admits no other name)
  POCK_ASSIGN_OR_RETURN(TensorId affine, op("ScaleShift", {x}, Attrs{{"alpha", a.alpha}, {"beta", a.beta}}));
  return op("Clip", {affine}, Attrs{{"min", 0.0}, {"max", 1.0}});
}

// Direction d's part of initial_h / initial_c as [1, B, H], or zeros.
Result<TensorId> Unroller::initial_state(int input, int d) {
  if (node_.has_input(input)) {
    POCK_ASSIGN_OR_RETURN(TensorId all, node_.input(input));
    return slice(all, s_.g.batch_first ? 1 : 0, d, d + 1);  // [1, B, H] or [B, 1, H]
  }
  if (zeros_ == kNoTensor) {
    Graph& graph = node_.ctx().graph;
    const Shape shape{1, s_.g.batch, s_.g.hidden};
    const std::vector<uint8_t> bytes(static_cast<size_t>(s_.g.batch * s_.g.hidden) * sizeof(float), 0);
    zeros_ = graph.add_constant(graph.unique_name(node_.op() + "_zero_state"), DType::kF32, shape, bytes);
  }
  return zeros_;
}

// 1 where step t is inside a row's length, else 0, as [1, B, 1]: clip(length - t, 0, 1) on
// integer lengths.
Result<TensorId> Unroller::step_mask(int64_t t) {
  POCK_ASSIGN_OR_RETURN(TensorId shifted,
                        op("ScaleShift", {lengths_}, Attrs{{"alpha", 1.0}, {"beta", -static_cast<double>(t)}}));
  return op("Clip", {shifted}, Attrs{{"min", 0.0}, {"max", 1.0}});
}

Result<Unroller::Direction> Unroller::run_direction(int d, bool reverse) {
  const int64_t hidden = s_.g.hidden, gh = gate_count(s_.cell) * hidden;
  const Activation* act = &s_.activations[static_cast<size_t>(d * activation_count(s_.cell))];
  POCK_ASSIGN_OR_RETURN(TensorId w_all, node_.input(1));
  POCK_ASSIGN_OR_RETURN(TensorId r_all, node_.input(2));
  POCK_ASSIGN_OR_RETURN(TensorId w, direction_row(w_all, d));  // [G H, I]
  POCK_ASSIGN_OR_RETURN(TensorId r, direction_row(r_all, d));  // [G H, H]

  // Biases: Wb + Rb go with the input projection, except GRU's Rb with linear_before_reset, which
  // stays inside r * (H R_h^T + Rb_h).
  std::optional<TensorId> x_bias, r_bias;
  if (node_.has_input(3)) {
    POCK_ASSIGN_OR_RETURN(TensorId b_all, node_.input(3));
    POCK_ASSIGN_OR_RETURN(TensorId b, direction_row(b_all, d));  // [2 G H]
    POCK_ASSIGN_OR_RETURN(TensorId wb, slice(b, 0, 0, gh));
    POCK_ASSIGN_OR_RETURN(TensorId rb, slice(b, 0, gh, 2 * gh));
    if (s_.cell == Cell::kGru && s_.linear_before_reset) {
      x_bias = wb;
      r_bias = rb;
    } else {
      POCK_ASSIGN_OR_RETURN(x_bias, add(wb, rb));
    }
  }
  POCK_ASSIGN_OR_RETURN(TensorId x, node_.input(0));
  if (s_.g.batch_first) {
    POCK_ASSIGN_OR_RETURN(x, op("Transpose", {x}, Attrs{{"perm", Ints{1, 0, 2}}}));
  }
  std::vector<TensorId> proj_in{x, w};
  if (x_bias) proj_in.push_back(*x_bias);
  POCK_ASSIGN_OR_RETURN(TensorId x_proj, op("Linear", proj_in));  // [S, B, G H]

  // GRU without linear_before_reset multiplies r into H before R_h, so R splits into z|r and h.
  TensorId r_zr = r, r_h = kNoTensor;
  if (s_.cell == Cell::kGru && !s_.linear_before_reset) {
    POCK_ASSIGN_OR_RETURN(r_zr, slice(r, 0, 0, 2 * hidden));
    POCK_ASSIGN_OR_RETURN(r_h, slice(r, 0, 2 * hidden, 3 * hidden));
  }
  std::vector<TensorId> peep;  // LSTM P: i, o, f as [1, H]
  if (s_.cell == Cell::kLstm && node_.has_input(7)) {
    POCK_ASSIGN_OR_RETURN(TensorId p_all, node_.input(7));
    POCK_ASSIGN_OR_RETURN(TensorId p, slice(p_all, 0, d, d + 1));  // [1, 3 H]
    POCK_ASSIGN_OR_RETURN(peep, split_last(p, 3));
  }

  Direction out;
  out.y.assign(static_cast<size_t>(s_.g.seq), kNoTensor);
  POCK_ASSIGN_OR_RETURN(TensorId h, initial_state(5, d));
  TensorId c = kNoTensor;
  if (s_.cell == Cell::kLstm) {
    POCK_ASSIGN_OR_RETURN(c, initial_state(6, d));
  }
  if (s_.g.batch_first && node_.has_input(5)) {
    POCK_ASSIGN_OR_RETURN(h, op("Transpose", {h}, Attrs{{"perm", Ints{1, 0, 2}}}));
  }
  if (s_.g.batch_first && s_.cell == Cell::kLstm && node_.has_input(6)) {
    POCK_ASSIGN_OR_RETURN(c, op("Transpose", {c}, Attrs{{"perm", Ints{1, 0, 2}}}));
  }

  for (int64_t k = 0; k < s_.g.seq; ++k) {
    const int64_t t = reverse ? s_.g.seq - 1 - k : k;
    POCK_ASSIGN_OR_RETURN(TensorId xt, slice(x_proj, 0, t, t + 1));  // [1, B, G H]
    TensorId h_new = kNoTensor, c_new = kNoTensor;
    if (s_.cell == Cell::kRnn) {
      POCK_ASSIGN_OR_RETURN(TensorId hr, op("Linear", {h, r}));
      POCK_ASSIGN_OR_RETURN(TensorId pre, add(xt, hr));
      POCK_ASSIGN_OR_RETURN(h_new, activate(pre, act[0], true));
    } else if (s_.cell == Cell::kGru) {
      POCK_ASSIGN_OR_RETURN(auto xg, split_last(xt, 3));  // z, r, h
      std::vector<TensorId> rec_in{h, r_zr};
      if (r_bias) rec_in.push_back(*r_bias);
      POCK_ASSIGN_OR_RETURN(TensorId rec, op("Linear", rec_in));
      POCK_ASSIGN_OR_RETURN(auto rg, split_last(rec, s_.linear_before_reset ? 3 : 2));
      POCK_ASSIGN_OR_RETURN(TensorId z_pre, add(xg[0], rg[0]));
      POCK_ASSIGN_OR_RETURN(TensorId r_pre, add(xg[1], rg[1]));
      POCK_ASSIGN_OR_RETURN(TensorId z, activate(z_pre, act[0], true));
      POCK_ASSIGN_OR_RETURN(TensorId rg_gate, activate(r_pre, act[0], true));
      TensorId h_rec = kNoTensor;
      if (s_.linear_before_reset) {
        POCK_ASSIGN_OR_RETURN(h_rec, mul(rg_gate, rg[2]));
      } else {
        POCK_ASSIGN_OR_RETURN(TensorId reset, mul(rg_gate, h));
        POCK_ASSIGN_OR_RETURN(h_rec, op("Linear", {reset, r_h}));
      }
      POCK_ASSIGN_OR_RETURN(TensorId h_pre, add(xg[2], h_rec));
      POCK_ASSIGN_OR_RETURN(TensorId candidate, activate(h_pre, act[1], true));
      POCK_ASSIGN_OR_RETURN(h_new, blend(candidate, h, z));  // (1 - z) candidate + z h
    } else {
      POCK_ASSIGN_OR_RETURN(TensorId hr, op("Linear", {h, r}));
      POCK_ASSIGN_OR_RETURN(TensorId pre, add(xt, hr));
      POCK_ASSIGN_OR_RETURN(auto g, split_last(pre, 4));  // i, o, f, c
      TensorId i_pre = g[0], o_pre = g[1], f_pre = g[2];
      if (!peep.empty()) {
        POCK_ASSIGN_OR_RETURN(TensorId pi, mul(peep[0], c));
        POCK_ASSIGN_OR_RETURN(i_pre, add(i_pre, pi));
        POCK_ASSIGN_OR_RETURN(TensorId pf, mul(peep[2], c));
        POCK_ASSIGN_OR_RETURN(f_pre, add(f_pre, pf));
      }
      POCK_ASSIGN_OR_RETURN(TensorId i, activate(i_pre, act[0], true));
      POCK_ASSIGN_OR_RETURN(TensorId cand, activate(g[3], act[1], true));
      if (s_.input_forget) {
        POCK_ASSIGN_OR_RETURN(c_new, blend(c, cand, i));  // (1 - i) c + i cand
      } else {
        POCK_ASSIGN_OR_RETURN(TensorId ic, mul(i, cand));
        POCK_ASSIGN_OR_RETURN(TensorId f, activate(f_pre, act[0], true));
        POCK_ASSIGN_OR_RETURN(TensorId fc, mul(f, c));
        POCK_ASSIGN_OR_RETURN(c_new, add(fc, ic));
      }
      if (!peep.empty()) {
        POCK_ASSIGN_OR_RETURN(TensorId po, mul(peep[1], c_new));
        POCK_ASSIGN_OR_RETURN(o_pre, add(o_pre, po));
      }
      POCK_ASSIGN_OR_RETURN(TensorId o, activate(o_pre, act[0], true));
      POCK_ASSIGN_OR_RETURN(TensorId hc, activate(c_new, act[2], false));
      POCK_ASSIGN_OR_RETURN(h_new, mul(o, hc));
    }
    if (lengths_ != kNoTensor) {
      POCK_ASSIGN_OR_RETURN(TensorId mask, step_mask(t));
      POCK_ASSIGN_OR_RETURN(out.y[static_cast<size_t>(t)], mul(mask, h_new));
      POCK_ASSIGN_OR_RETURN(h, blend(h, h_new, mask));
      if (c != kNoTensor) {
        POCK_ASSIGN_OR_RETURN(c, blend(c, c_new, mask));
      }
    } else {
      out.y[static_cast<size_t>(t)] = h_new;
      h = h_new;
      c = c_new;
    }
  }
  out.h = h;
  out.c = c;
  return out;
}

Status Unroller::bind_outputs(const std::vector<Direction>& dirs) {
  const bool bf = s_.g.batch_first;
  if (node_.output_used(0)) {
    std::vector<TensorId> per_direction;
    for (const Direction& d : dirs) {
      POCK_ASSIGN_OR_RETURN(TensorId seq, op("Concat", d.y, Attrs{{"axis", int64_t{0}}}));  // [S, B, H]
      POCK_ASSIGN_OR_RETURN(TensorId y, op("Unsqueeze", {seq}, Attrs{{"axes", Ints{1}}}));
      per_direction.push_back(y);
    }
    POCK_ASSIGN_OR_RETURN(TensorId y, op("Concat", per_direction, Attrs{{"axis", int64_t{1}}}));  // [S, D, B, H]
    if (bf) {
      POCK_ASSIGN_OR_RETURN(y, op("Transpose", {y}, Attrs{{"perm", Ints{2, 0, 1, 3}}}));
    }
    POCK_RETURN_IF_ERROR(node_.bind_output(0, y));
  }
  for (int k = 1; k <= (s_.cell == Cell::kLstm ? 2 : 1); ++k) {
    if (!node_.output_used(k)) continue;
    std::vector<TensorId> finals;
    for (const Direction& d : dirs) finals.push_back(k == 1 ? d.h : d.c);
    POCK_ASSIGN_OR_RETURN(TensorId state, op("Concat", finals, Attrs{{"axis", int64_t{0}}}));  // [D, B, H]
    if (bf) {
      POCK_ASSIGN_OR_RETURN(state, op("Transpose", {state}, Attrs{{"perm", Ints{1, 0, 2}}}));
    }
    POCK_RETURN_IF_ERROR(node_.bind_output(k, state));
  }
  return Status::ok();
}

Status Unroller::run() {
  // Lengths that are all the full sequence need no mask; anything else (or lengths known only at
  // run time) masks every step.
  if (node_.has_input(4)) {
    bool all_full = false;
    if (node_.input_is_constant(4)) {
      POCK_ASSIGN_OR_RETURN(Ints lens, node_.const_ints(4, "sequence_lens"));
      for (int64_t len : lens) {
        if (len < 0 || len > s_.g.seq) {
          return node_.input_error(4, "(sequence_lens) holds " + std::to_string(len) + ", outside 0.." +
                                          std::to_string(s_.g.seq));
        }
      }
      all_full = std::all_of(lens.begin(), lens.end(), [&](int64_t len) { return len == s_.g.seq; });
    }
    if (!all_full) {
      POCK_ASSIGN_OR_RETURN(TensorId lens, node_.input(4));
      POCK_ASSIGN_OR_RETURN(TensorId as_float, op("Cast", {lens}, Attrs{{"to", std::string("f32")}}));
      POCK_ASSIGN_OR_RETURN(lengths_, op("Reshape", {as_float}, Attrs{{"shape", Ints{1, s_.g.batch, 1}}}));
    }
  }
  std::vector<Direction> dirs;
  for (int d = 0; d < s_.g.directions; ++d) {
    const bool reverse = s_.direction == "reverse" || d == 1;
    POCK_ASSIGN_OR_RETURN(Direction dir, run_direction(d, reverse));
    dirs.push_back(std::move(dir));
  }
  return bind_outputs(dirs);
}

template <Cell kCell>
Status convert_recurrent(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(Settings s, read_settings(node, kCell));
  Unroller unroller(node, s);
  return unroller.run();
}

}  // namespace

void register_recurrent_converters(std::unordered_map<std::string, Converter>& t) {
  t["RNN"] = convert_recurrent<Cell::kRnn>;
  t["GRU"] = convert_recurrent<Cell::kGru>;
  t["LSTM"] = convert_recurrent<Cell::kLstm>;
}

}  // namespace pock::onnx_import
