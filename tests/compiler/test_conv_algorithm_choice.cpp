// Per-layer cpu convolution algorithms: `pockc tune` writes each convolution's time per algorithm
// into the profile, `pockc compile --profile` records the fastest in the blob (attribute
// "cpu_algorithm"), and the cpu backend runs it. A blob compiled with a profile that forces each
// algorithm trains like the reference backend; the profile round-trips; a hostile value is
// refused when the blob opens; other backends ignore the attribute.
#include <catch2/catch.hpp>

#include "compiler/backend_profile.hpp"
#include "ir/conv_algorithm.hpp"
#include "kernels/cpu/conv_algorithm_choice.hpp"
#include "small_cnn.hpp"
#include "support/edited_blob.hpp"
#include "support/temp_profile.hpp"

using namespace pock;
using namespace pock::test;
using pock::cpu::conv_algorithm_testing::kernels_made;

namespace {

CompileOptions nchw_options() {
  CompileOptions o;
  o.layout = false;  // NHWC convolutions run on XNNPACK alone: keep every algorithm possible
  return o;
}

// Which algorithm the test asks for, by the kind of layer.
struct Wanted {
  ConvAlgorithm dense, depthwise, pointwise;
  ConvAlgorithm for_op(const ProgramSpec& spec, const OpSpec& op) const {
    if (op.attrs.get_int("groups", 1) > 1) return depthwise;
    const Shape& w = spec.tensors[static_cast<size_t>(op.inputs[1])].shape;
    return w[2] == 1 && w[3] == 1 ? pointwise : dense;
  }
};

// A profile of every convolution of `spec` that times the wanted algorithm at 1 us and every
// other at 1000 us (listed first: the lower median wins, not the order).
BackendProfile forcing(const ProgramSpec& spec, const Wanted& wanted) {
  BackendProfile p;
  p.backends = {"cpu"};
  for (const OpSpec& op : spec.ops) {
    if (!has_conv_algorithms(op.op)) continue;
    ProfiledOp entry;
    entry.signature = op_signature(spec, op);
    entry.op = op.op;
    entry.count = 1;
    for (ConvAlgorithm a : kConvAlgorithms) entry.cpu_algorithms.push_back({conv_algorithm_name(a), 1000.0});
    entry.cpu_algorithms.push_back({conv_algorithm_name(wanted.for_op(spec, op)), 1.0});
    p.ops.push_back(std::move(entry));
  }
  return p;
}

// Every convolution of the compiled blob names the wanted algorithm; returns how many there are.
int check_recorded(const ProgramSpec& spec, const Wanted& wanted) {
  int n = 0;
  for (const OpSpec& op : spec.ops) {
    if (!has_conv_algorithms(op.op)) continue;
    INFO(op.op << " '" << op.name << "'");
    CHECK(op.attrs.get_string(kConvAlgorithmAttr, "") == conv_algorithm_name(wanted.for_op(spec, op)));
    ++n;
  }
  return n;
}

std::vector<uint8_t> compile_with(const Graph& model, const Recipe& recipe, const BackendProfile& p) {
  TempProfile profile(p);
  CompileOptions options = nchw_options();
  options.profile_path = profile.path;
  return compile_or_fail(model, &recipe, options);
}

// Three training steps and an inference on cpu and on ref from the same blob: losses, the trained
// `parameters` and the logits agree within `tolerance` (relative to max(1, |ref|)).
void check_trains_like_ref(const std::vector<uint8_t>& blob, double tolerance, const std::vector<std::string>& parameters) {
  Engine cpu = open_engine(blob, "cpu");
  Engine ref = open_engine(blob, "ref");
  for (uint32_t step = 0; step < 3; ++step) {
    const float want = train_once(ref, cnn_batch(step));
    CHECK(train_once(cpu, cnn_batch(step)) == Approx(want).epsilon(tolerance).margin(tolerance));
  }
  for (const std::string& name : parameters) {
    INFO(name);
    CHECK(max_relative_difference(parameter(cpu, name), parameter(ref, name)) < tolerance);
  }
  CHECK(max_relative_difference(infer_logits(cpu, cnn_batch(9)), infer_logits(ref, cnn_batch(9))) < tolerance);
}

}  // namespace

TEST_CASE("a profile's cpu algorithms reach the blob and the cpu backend runs them like ref", "[conv_algorithm]") {
  const Recipe recipe = full_bp_recipe();
  const Graph model = build_small_cnn();
  const ProgramSpec plain = spec_of(compile_or_fail(model, &recipe, nchw_options()));
  for (const Wanted& wanted : {Wanted{ConvAlgorithm::kIm2col, ConvAlgorithm::kDepthwise, ConvAlgorithm::kIm2col},
                               Wanted{ConvAlgorithm::kWinograd, ConvAlgorithm::kIm2col, ConvAlgorithm::kIm2col}}) {
    INFO("dense " << conv_algorithm_name(wanted.dense) << ", depthwise " << conv_algorithm_name(wanted.depthwise));
    const std::vector<uint8_t> blob = compile_with(model, recipe, forcing(plain, wanted));
    // c1, c2 and c3 in infer, train and eval, and the input gradients of c2 and c3.
    CHECK(check_recorded(spec_of(blob), wanted) >= 5);
    const int dense = kernels_made(wanted.dense), depthwise = kernels_made(wanted.depthwise);
    check_trains_like_ref(blob, wanted.dense == ConvAlgorithm::kWinograd ? 3e-4 : 1e-4, {"c1.weight", "c2.weight", "c3.weight"});
    CHECK(kernels_made(wanted.dense) > dense);
    CHECK(kernels_made(wanted.depthwise) > depthwise);
  }
}

TEST_CASE("a frozen backbone's convolutions run through XNNPACK when the profile says so", "[conv_algorithm]") {
  const Recipe recipe = frozen_backbone_recipe();
  const Graph model = build_small_cnn();
  const ProgramSpec plain = spec_of(compile_or_fail(model, &recipe, nchw_options()));
  const Wanted xnnpack{ConvAlgorithm::kXnnpack, ConvAlgorithm::kXnnpack, ConvAlgorithm::kXnnpack};
  const std::vector<uint8_t> blob = compile_with(model, recipe, forcing(plain, xnnpack));
  CHECK(check_recorded(spec_of(blob), xnnpack) >= 3);
  const int before = kernels_made(ConvAlgorithm::kXnnpack);
  check_trains_like_ref(blob, 1e-4, {"fc1.weight", "fc2.weight"});
  CHECK(kernels_made(ConvAlgorithm::kXnnpack) > before);
}

TEST_CASE("a blob naming a cpu algorithm opens on other backends, which ignore it", "[conv_algorithm]") {
  const Recipe recipe = full_bp_recipe();
  const Graph model = build_small_cnn();
  const std::vector<uint8_t> plain = compile_or_fail(model, &recipe, nchw_options());
  const Wanted wanted{ConvAlgorithm::kWinograd, ConvAlgorithm::kDepthwise, ConvAlgorithm::kIm2col};
  const std::vector<uint8_t> blob = compile_with(model, recipe, forcing(spec_of(plain), wanted));
  Engine tuned_ref = open_engine(blob, "ref");
  Engine plain_ref = open_engine(plain, "ref");
  CHECK(train_once(tuned_ref, cnn_batch(0)) == train_once(plain_ref, cnn_batch(0)));  // same kernels, same bits
}

TEST_CASE("a hostile cpu algorithm is refused when the blob opens, naming the attribute", "[conv_algorithm]") {
  const Recipe recipe = full_bp_recipe();
  const ProgramSpec spec = program_of(compile_or_fail(build_small_cnn(), &recipe, nchw_options()));
  for (const char* op : {"Conv2d", "Conv2dGradInput"}) {
    for (const AttrValue& value : {AttrValue(std::string("onednn")), AttrValue(std::string()), AttrValue(int64_t{2})}) {
      const auto [status, message] =
          open_edited(spec, [&](ProgramSpec& s) { find_op(s, op).attrs.set(kConvAlgorithmAttr, value); });
      INFO(op << ": " << message);
      CHECK(status != POCK_OK);
      CHECK(message.find(op) != std::string::npos);
      CHECK(message.find("attribute 'cpu_algorithm' must be im2col, winograd, xnnpack, depthwise or pointwise") != std::string::npos);
    }
  }
}

TEST_CASE("a profile's cpu algorithms round-trip and the lowest median wins", "[conv_algorithm]") {
  BackendProfile p;
  p.backends = {"cpu", "ref"};
  ProfiledOp conv{"Conv2d(f32[1,8,8,8], const f32[8,8,3,3], -) -> (f32[1,8,8,8]) {}", "Conv2d", 2, {{"cpu", 5.0}}, {}, {}};
  conv.cpu_algorithms = {{"im2col", 9.0}, {"winograd", 4.5}, {"xnnpack", 6.0}};
  p.ops.push_back(conv);
  p.ops.push_back({"Neg(f32[2]) -> (f32[2]) {}", "Neg", 1, {{"ref", 4.0}}, {}, {}});
  const std::string text = backend_profile_json(p);
  auto back = parse_backend_profile(text, "p.json");
  REQUIRE(back.is_ok());
  REQUIRE(back->ops.size() == 2);
  CHECK(back->ops[0].cpu_algorithms.size() == 3);
  CHECK(back->ops[1].cpu_algorithms.empty());
  CHECK(backend_profile_json(back.value()) == text);
  const auto fastest = fastest_cpu_algorithms(back.value());
  CHECK(fastest.size() == 1);
  CHECK(fastest.at(conv.signature) == "winograd");

  auto unknown = parse_backend_profile(
      R"({"format": "pock-backend-profile", "version": 1, "ops": [{"signature": "s", "median_us": {},
          "cpu_algorithm_us": {"onednn": 1}}]})", "p.json");
  REQUIRE_FALSE(unknown.is_ok());
  CHECK(unknown.status().message().find("ops[0].cpu_algorithm_us names 'onednn'") != std::string::npos);
  auto negative = parse_backend_profile(
      R"({"format": "pock-backend-profile", "version": 1, "ops": [{"signature": "s", "median_us": {},
          "cpu_algorithm_us": {"im2col": -1}}]})", "p.json");
  REQUIRE_FALSE(negative.is_ok());
  CHECK(negative.status().message().find("ops[0].cpu_algorithm_us.im2col must be a number >= 0") != std::string::npos);
}

TEST_CASE("a tuned blob's signatures are the untuned blob's: the algorithm is no part of them", "[conv_algorithm]") {
  const ProgramSpec spec = spec_of(compile_or_fail(build_small_cnn(), nullptr, nchw_options()));
  ProgramSpec tuned = spec;
  OpSpec& conv = find_op(tuned, "Conv2d");
  const std::string before = op_signature(tuned, conv);
  conv.attrs.set(kConvAlgorithmAttr, std::string("winograd"));
  CHECK(op_signature(tuned, conv) == before);
}
