// Layout choice (issue #4): the cpu backend runs a Conv2d with a frozen weight through XNNPACK,
// which works channels-last; an NCHW op pays an NCHW -> NHWC copy of x and an NHWC -> NCHW copy of
// y on every run. In the forward-only parts of a program — the infer and eval functions, and the
// frozen layers below the earliest trainable one in a sparse train function — nothing needs the
// NCHW form between two such convolutions, so they stay NHWC:
//   1. members: Conv2d with a frozen weight whose output no backward node reads, unless a profile
//      of `pockc tune` (compile --profile) timed it in NCHW and another cpu algorithm beat
//      XNNPACK there (on an AVX2 CPU the Winograd way runs ResNet-18's 3x3 layers in a third of
//      XNNPACK's time, docs/pockc.md); Add of two
//      same-shaped tensors that members produce (a residual join) and Pad of one (TensorFlow
//      exports pad explicitly before strided convolutions), their pads permuted; all
//      forward-phase;
//   2. regions: connected components of members (producer -> reader edges), kept when they hold
//      at least two convolutions (one alone would trade its two staging copies for two
//      Transposes: nothing gained);
//   3. rewrite: members get NHWC tensors (Conv2d attribute layout="NHWC"), a Transpose
//      (perm 0,2,3,1) feeds each tensor a region reads from outside, and one (perm 0,3,1,2)
//      writes the original NCHW tensor back where a non-member or the caller reads it;
//   4. fold: a Transpose whose input is its inverse's output reads that one's input instead (a
//      model that already transposed NHWC -> NCHW before its first conv); dead code goes.
// Tensor ids of the NCHW tensors stay, so outputs and readers outside the regions are untouched.
#include "compiler/passes/layout_nhwc.hpp"

#include <numeric>
#include <unordered_map>

#include "compiler/cpu_conv_algorithms.hpp"
#include "compiler/passes/passes.hpp"
#include "compiler/passes/rewrite_util.hpp"
#include "compiler/placement/described_program.hpp"
#include "ir/conv_algorithm.hpp"
#include "runtime/backend_set.hpp"

namespace pock {
namespace {

const std::vector<int64_t> kToNhwc = {0, 2, 3, 1};
const std::vector<int64_t> kToNchw = {0, 3, 1, 2};
constexpr int kMinConvsPerRegion = 2;

bool is_4d_f32(const Graph& g, TensorId id) {
  return id != kNoTensor && g.tensor(id).dtype == DType::kF32 && g.tensor(id).shape.size() == 4;
}

// A weight the cpu backend sees as constant (blob weights): a folded constant or frozen parameter.
bool is_frozen_weight(const Graph& g, const std::unordered_set<TensorId>& mutated, TensorId id) {
  if (!is_fixed_f32(g, mutated, id)) return false;
  const TensorKind kind = g.tensor(id).kind;
  return kind == TensorKind::kConstant || kind == TensorKind::kParameter;
}

// A forward node that exists for the backward: what it writes only backward nodes read (a saved
// form, such as the ClipMask a Relu6 gradient keeps instead of the activation).
bool is_saved_form(const FunctionDef& fn, const FunctionUses& uses, const Node& n) {
  bool read = false;
  for (TensorId out : n.outputs) {
    for (const TensorUse& u : uses.readers(out)) {
      if (fn.nodes[u.node].phase == Phase::kForward) return false;
      read = true;
    }
  }
  return read;
}

// Every reader of the node's outputs runs in the forward phase, and none is a saved form: the
// backward reads nothing of it, directly or derived (its NCHW form would have to stay alive next
// to the NHWC one, a Transpose more and a larger arena).
bool read_in_forward_only(const FunctionDef& fn, const FunctionUses& uses, const Node& n) {
  for (TensorId out : n.outputs) {
    for (const TensorUse& u : uses.readers(out)) {
      const Node& reader = fn.nodes[u.node];
      if (reader.phase != Phase::kForward || is_saved_form(fn, uses, reader)) return false;
    }
  }
  return true;
}

bool is_member_conv(const Graph& g, const std::unordered_set<TensorId>& mutated, const Node& n) {
  if (n.op != "Conv2d" || n.outputs.size() != 1 || n.inputs.size() < 2) return false;
  if (n.attrs.get_string("layout", "NCHW") != "NCHW") return false;
  // compute "bf16" (recipe precision bf16): the cpu backend's bf16 convolutions read NCHW.
  if (n.attrs.get_string("compute", "f32") == "bf16") return false;
  return is_4d_f32(g, n.inputs[0]) && is_4d_f32(g, n.outputs[0]) && is_frozen_weight(g, mutated, n.inputs[1]);
}

bool is_4d_pad(const Graph& g, const Node& n) {
  if (n.op != "Pad" || n.inputs.size() != 1 || n.outputs.size() != 1 || !is_4d_f32(g, n.outputs[0])) return false;
  const AttrValue* v = n.attrs.find("pads");
  const auto* pads = v ? std::get_if<std::vector<int64_t>>(v) : nullptr;
  return pads && pads->size() == 8;
}

// Pad's pads (all begins, then all ends) for the NHWC view of the same tensor.
std::vector<int64_t> nhwc_pads(const std::vector<int64_t>& p) {
  return {p[0], p[2], p[3], p[1], p[4], p[6], p[7], p[5]};
}

bool is_plain_add(const Graph& g, const Node& n) {
  if (n.op != "Add" || n.inputs.size() != 2 || n.outputs.size() != 1) return false;
  if (!is_4d_f32(g, n.outputs[0])) return false;
  const Shape& y = g.tensor(n.outputs[0]).shape;
  return g.tensor(n.inputs[0]).shape == y && g.tensor(n.inputs[1]).shape == y;  // no broadcasting
}

// The inputs a member reads in its data layout: x of a Conv2d (the weight and bias are not
// images), both operands of an Add, the input of a Pad.
size_t image_inputs(const Node& n) { return n.op == "Conv2d" ? 1 : n.inputs.size(); }

int find_root(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

Node transpose_node(const std::string& name, TensorId in, TensorId out, const std::vector<int64_t>& perm, Phase phase) {
  Node t;
  t.op = "Transpose";
  t.name = name;
  t.inputs = {in};
  t.outputs = {out};
  t.attrs.set("perm", perm);
  t.phase = phase;
  return t;
}

bool is_transpose(const Node& n, const std::vector<int64_t>& perm) {
  if (n.op != "Transpose" || n.inputs.size() != 1 || n.outputs.size() != 1) return false;
  const AttrValue* v = n.attrs.find("perm");
  const auto* list = v ? std::get_if<std::vector<int64_t>>(v) : nullptr;
  return list && *list == perm;
}

// Step 4: a Transpose reading the output of its inverse reads the inverse's input instead, which
// removes the pair (or leaves the first for its other readers). Returns how many were removed.
int fold_inverse_transposes(const TrainingProgram& program, FunctionDef& fn) {
  const FunctionUses uses(fn);
  std::vector<bool> removed(fn.nodes.size(), false);
  std::unordered_map<TensorId, TensorId> replace;
  for (size_t k = 0; k < fn.nodes.size(); ++k) {
    const Node& second = fn.nodes[k];
    const bool to_nhwc = is_transpose(second, kToNhwc);
    if (!to_nhwc && !is_transpose(second, kToNchw)) continue;
    const int p = uses.producer(second.inputs[0]);
    if (p < 0 || !is_transpose(fn.nodes[static_cast<size_t>(p)], to_nhwc ? kToNchw : kToNhwc)) continue;
    if (uses.is_signature(second.outputs[0])) continue;  // the caller reads it by this id
    replace[second.outputs[0]] = fn.nodes[static_cast<size_t>(p)].inputs[0];
    removed[k] = true;
  }
  for (Node& n : fn.nodes) {
    for (TensorId& in : n.inputs) {
      auto it = replace.find(in);
      if (it != replace.end()) in = it->second;
    }
  }
  const int folded = remove_nodes(fn, removed);
  eliminate_dead_code(program, fn);  // the first of a pair when nothing else read it
  return folded;
}

struct Regions {
  std::vector<bool> converted;  // per node: a member of a region that becomes NHWC
};

// Steps 1 and 2.
Regions find_regions(const TrainingProgram& program, const FunctionDef& fn, const FunctionUses& uses,
                     const std::unordered_set<TensorId>& mutated, const std::vector<bool>& tuned_nchw) {
  const Graph& g = program.graph;
  const size_t count = fn.nodes.size();
  std::vector<bool> member(count, false);
  for (size_t k = 0; k < count; ++k) {
    const Node& n = fn.nodes[k];
    member[k] = n.phase == Phase::kForward && !tuned_nchw[k] && is_member_conv(g, mutated, n) &&
                read_in_forward_only(fn, uses, n);
  }
  // Adds and Pads join in node order: their operands' producers come first (topological order).
  for (size_t k = 0; k < count; ++k) {
    const Node& n = fn.nodes[k];
    if (n.phase != Phase::kForward || !(is_plain_add(g, n) || is_4d_pad(g, n)) || !read_in_forward_only(fn, uses, n)) {
      continue;
    }
    bool both = true;
    for (TensorId in : n.inputs) {
      const int p = uses.producer(in);
      both = both && p >= 0 && member[static_cast<size_t>(p)];
    }
    member[k] = both;
  }
  std::vector<int> parent(count);
  std::iota(parent.begin(), parent.end(), 0);
  for (size_t k = 0; k < count; ++k) {
    if (!member[k]) continue;
    const Node& n = fn.nodes[k];
    for (size_t s = 0; s < image_inputs(n); ++s) {
      const int p = uses.producer(n.inputs[s]);
      if (p >= 0 && member[static_cast<size_t>(p)]) {
        parent[find_root(parent, static_cast<int>(k))] = find_root(parent, p);
      }
    }
  }
  std::vector<int> convs(count, 0);
  for (size_t k = 0; k < count; ++k) {
    if (member[k] && fn.nodes[k].op == "Conv2d") ++convs[static_cast<size_t>(find_root(parent, static_cast<int>(k)))];
  }
  Regions r;
  r.converted.assign(count, false);
  for (size_t k = 0; k < count; ++k) {
    const size_t root = static_cast<size_t>(find_root(parent, static_cast<int>(k)));
    r.converted[k] = member[k] && convs[root] >= kMinConvsPerRegion;
  }
  return r;
}

// Step 3 over one function. Returns false (function unchanged) if a rewritten node fails its
// shape inference, which would be a bug in the member rules above.
bool rewrite_regions(TrainingProgram& program, FunctionDef& fn, const Regions& regions, LayoutStats* stats) {
  Graph& g = program.graph;
  const FunctionUses uses(fn);
  std::unordered_map<TensorId, TensorId> nhwc_of;  // NCHW tensor -> its NHWC twin
  std::vector<Node> out;
  out.reserve(fn.nodes.size());
  LayoutStats s;
  for (size_t k = 0; k < fn.nodes.size(); ++k) {
    if (!regions.converted[k]) {
      out.push_back(std::move(fn.nodes[k]));
      continue;
    }
    const Node& n = fn.nodes[k];
    std::vector<TensorId> inputs = n.inputs;
    for (size_t slot = 0; slot < image_inputs(n); ++slot) {
      const TensorId x = n.inputs[slot];
      auto it = nhwc_of.find(x);
      if (it == nhwc_of.end()) {  // a region entry: transposed once, however many members read it
        Attrs perm;
        perm.set("perm", kToNhwc);
        auto entry = g.create_node("Transpose", {x}, perm, n.name + "/to_nhwc");
        if (!entry.is_ok()) return false;
        entry->phase = n.phase;
        it = nhwc_of.emplace(x, entry->outputs[0]).first;
        out.push_back(std::move(entry.value()));
        ++s.transposes;
      }
      inputs[slot] = it->second;
    }
    Attrs attrs = n.attrs;
    if (n.op == "Conv2d") attrs.set("layout", std::string("NHWC"));
    if (n.op == "Pad") attrs.set("pads", nhwc_pads(std::get<std::vector<int64_t>>(*n.attrs.find("pads"))));
    auto rewritten = g.create_node(n.op, inputs, attrs, n.name);
    if (!rewritten.is_ok()) return false;
    rewritten->phase = n.phase;
    const TensorId y = n.outputs[0], y_nhwc = rewritten->outputs[0];
    nhwc_of[y] = y_nhwc;
    out.push_back(std::move(rewritten.value()));
    if (n.op == "Conv2d") ++s.nhwc_convs;
    if (n.op == "Add") ++s.nhwc_adds;
    bool read_outside = uses.is_signature(y);
    for (const TensorUse& u : uses.readers(y)) read_outside = read_outside || !regions.converted[u.node];
    if (read_outside) {  // a region exit: the NCHW tensor, under its own id, for its other readers
      out.push_back(transpose_node(n.name + "/to_nchw", y_nhwc, y, kToNchw, n.phase));
      ++s.transposes;
    }
  }
  fn.nodes = std::move(out);
  stats->nhwc_convs += s.nhwc_convs;
  stats->nhwc_adds += s.nhwc_adds;
  stats->transposes += s.transposes;
  return true;
}

}  // namespace

namespace {

// Whether some host backend (the requested one, when one is) claims a channels-last Conv2d over
// a frozen weight with a higher score than the reference loops: asked through supports_op, as the
// runtime will ask, on a small representative op (ref reads both layouts at score 1).
bool some_backend_runs_nhwc_conv(const CompileOptions& options) {
  const BackendSet set = BackendSet::open(options.backend_plugins);
  pock_tensor_desc x{}, w{}, b{}, y{};
  auto fill = [](pock_tensor_desc& t, std::initializer_list<int64_t> dims, uint32_t flags) {
    t.dtype = POCK_F32;
    t.rank = static_cast<int32_t>(dims.size());
    t.nbytes = sizeof(float);
    int r = 0;
    for (int64_t d : dims) {
      t.dims[r++] = d;
      t.nbytes *= static_cast<size_t>(d);
    }
    t.flags = flags;
  };
  fill(x, {1, 8, 8, 16}, 0);
  fill(w, {16, 16, 3, 3}, POCK_TENSOR_CONSTANT);
  fill(b, {16}, POCK_TENSOR_CONSTANT);
  fill(y, {1, 8, 8, 16}, 0);
  const pock_tensor_desc inputs[] = {x, w, b};
  const int64_t ones[] = {1, 1}, pads[] = {1, 1, 1, 1};
  pock_attr attrs[4] = {};
  attrs[0] = {"dilations", POCK_ATTR_INTS, 0, 0, "", ones, nullptr, 2};
  attrs[1] = {"layout", POCK_ATTR_STRING, 0, 0, "NHWC", nullptr, nullptr, 0};
  attrs[2] = {"pads", POCK_ATTR_INTS, 0, 0, "", pads, nullptr, 4};
  attrs[3] = {"strides", POCK_ATTR_INTS, 0, 0, "", ones, nullptr, 2};
  pock_op_desc op{};
  op.op = "Conv2d";
  op.name = "layout probe";
  op.num_inputs = 3;
  op.inputs = inputs;
  op.num_outputs = 1;
  op.outputs = &y;
  op.num_attrs = 4;
  op.attrs = attrs;
  for (pock_backend_v1* backend : set.usable()) {
    if (owns_memory(*backend)) continue;
    if (!options.backend.empty() && options.backend != backend->name) continue;
    if (backend->supports_op(backend->context, &op) > 1) return true;
  }
  return false;
}

// By function and node: the convolutions whose fastest cpu algorithm in the profile is not
// XNNPACK's. Only NCHW signatures can say so (XNNPACK alone reads NHWC images), so a profile of a
// blob compiled with --no-layout is the one that steers this pass; one without NCHW convolutions
// changes nothing.
Result<std::vector<std::vector<bool>>> tuned_for_nchw(TrainingProgram& program, const std::string& profile_path) {
  std::vector<std::vector<bool>> tuned(program.functions.size());
  for (size_t f = 0; f < program.functions.size(); ++f) tuned[f].assign(program.functions[f].nodes.size(), false);
  if (profile_path.empty()) return tuned;
  const DescribedProgram described = describe_program(program);
  POCK_ASSIGN_OR_RETURN(const std::vector<std::string> fastest, profiled_cpu_algorithms(profile_path, described.spec));
  const std::string xnnpack = conv_algorithm_name(ConvAlgorithm::kXnnpack);
  size_t i = 0;
  for (size_t f = 0; f < program.functions.size(); ++f) {
    for (size_t k = 0; k < program.functions[f].nodes.size(); ++k, ++i) {
      tuned[f][k] = !fastest[i].empty() && fastest[i] != xnnpack;
    }
  }
  return tuned;
}

}  // namespace

bool layout_pass_applies(const CompileOptions& options) {
  // With a profile (pockc tune) too: one of a blob compiled with this pass names NHWC signatures,
  // and an op it sends to another backend runs there in NHWC (ref reads both layouts); one of a
  // blob compiled without it keeps NCHW the convolutions XNNPACK lost (tuned_for_nchw).
  if (!options.layout) return false;
  return some_backend_runs_nhwc_conv(options);
}

Result<LayoutStats> choose_layouts(TrainingProgram& program, const std::string& profile_path) {
  LayoutStats stats;
  const std::unordered_set<TensorId> mutated = mutated_tensors(program);
  POCK_ASSIGN_OR_RETURN(const std::vector<std::vector<bool>> tuned_nchw, tuned_for_nchw(program, profile_path));
  for (size_t f = 0; f < program.functions.size(); ++f) {
    FunctionDef& fn = program.functions[f];
    const FunctionUses uses(fn);
    const Regions regions = find_regions(program, fn, uses, mutated, tuned_nchw[f]);
    bool any = false;
    for (bool c : regions.converted) any = any || c;
    if (!any) continue;
    std::vector<Node> before = fn.nodes;
    if (!rewrite_regions(program, fn, regions, &stats)) {
      fn.nodes = std::move(before);
      continue;
    }
    const int folded = fold_inverse_transposes(program, fn);
    stats.folded_transposes += folded;
    stats.transposes -= folded;
  }
  return stats;
}

}  // namespace pock
