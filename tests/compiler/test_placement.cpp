// Placement and memory spaces in the compiler (src/compiler/placement): with a backend that keeps
// tensors in memory of its own, every node works on one space, Copy nodes are the only crossings,
// what the caller touches stays host memory, and the blob records the device's regions.
#include <catch2/catch.hpp>

#include <cstring>
#include <set>
#include <string>

#include "compiler/emit.hpp"
#include "compiler/passes/passes.hpp"
#include "compiler/placement/place_ops.hpp"
#include "compiler/training.hpp"
#include "runtime/backend_set.hpp"
#include "train/mlp_model.hpp"

using namespace pock;

namespace {

// A device that claims a fixed set of ops, and only with its tensors in its own memory: what the
// compiler must ask it. Its memory functions are never called by the compiler.
struct FakeDevice {
  std::set<std::string> ops;
  int asked_on_host = 0;
  pock_backend_v1 api{};

  explicit FakeDevice(std::set<std::string> claimed) : ops(std::move(claimed)) {
    api.abi_version = POCK_BACKEND_ABI_VERSION;
    api.struct_size = sizeof(pock_backend_v1);
    api.name = "fakedev";
    api.context = this;
    api.supports_op = [](void* c, const pock_op_desc* op) -> int32_t {
      auto* self = static_cast<FakeDevice*>(c);
      for (int i = 0; i < op->num_inputs; ++i) {
        if (op->inputs[i].rank >= 0 && op->inputs[i].memory_space != POCK_MEMORY_DEVICE) ++self->asked_on_host;
      }
      return self->ops.count(op->op) ? 1000 : 0;
    };
    api.alloc = [](void*, size_t, size_t) -> void* { return nullptr; };
    api.free = [](void*, void*) {};
    api.copy = [](void*, void*, const void*, size_t, int32_t) { return POCK_ERR_INTERNAL; };
  }
};

struct Placed {
  TrainingProgram program;
  PlacementSummary summary;
  ProgramSpec spec;
};

Placed place(FakeDevice* device) {
  Placed out;
  out.program.graph = test::build_mlp();
  FunctionDef infer;
  infer.name = "infer";
  infer.nodes = out.program.graph.nodes();
  infer.inputs = {out.program.graph.find("x")};
  infer.outputs = out.program.graph.outputs();
  out.program.functions.push_back(infer);
  const Recipe recipe = test::classifier_recipe();
  const CompileOptions options;
  REQUIRE(build_training_functions(out.program, recipe, options).is_ok());
  REQUIRE(run_passes(out.program, options).is_ok());
  const BackendSet builtins = BackendSet::open({});
  std::vector<pock_backend_v1*> backends = {&device->api};
  for (pock_backend_v1* b : builtins.placeable(options.backend)) backends.push_back(b);  // as compile() does
  REQUIRE(place_ops(out.program, options, backends, &out.summary).is_ok());
  REQUIRE(emit_program(out.program, options, &out.summary, &out.spec, nullptr).is_ok());
  return out;
}

}  // namespace

TEST_CASE("every node works on one memory space and only Copy nodes cross", "[compiler][placement]") {
  const std::set<std::string> claimed = {"Linear", "LinearGradInput", "LinearGradWeight", "Relu", "AdamUpdate", "SumToShape"};
  FakeDevice device(claimed);
  const Placed p = place(&device);
  CHECK(device.asked_on_host == 0);  // the device is asked about its ops with its own memory
  REQUIRE(p.program.memory_spaces == std::vector<std::string>{"fakedev"});

  int on_device = 0, copies = 0;
  for (const FunctionDef& fn : p.program.functions) {
    std::set<TensorId> signature(fn.inputs.begin(), fn.inputs.end());
    signature.insert(fn.outputs.begin(), fn.outputs.end());
    if (fn.loss != kNoTensor) signature.insert(fn.loss);
    for (TensorId t : signature) CHECK(p.program.space_of(t) == 0);  // what the caller touches is host memory
    for (const Node& n : fn.nodes) {
      INFO(fn.name << ": " << n.op << " '" << n.name << "' on " << n.backend);
      if (n.op == "Copy") {
        ++copies;
        const uint8_t from = p.program.space_of(n.inputs[0]), to = p.program.space_of(n.outputs[0]);
        CHECK(from != to);
        CHECK((from == 0 || to == 0));
        continue;
      }
      const uint8_t space = n.backend == "fakedev" ? 1 : 0;
      on_device += space;
      if (claimed.count(n.op)) CHECK(space == 1);
      for (TensorId t : n.inputs) {
        if (t != kNoTensor) CHECK(p.program.space_of(t) == space);
      }
      for (TensorId t : n.outputs) CHECK(p.program.space_of(t) == space);
    }
  }
  CHECK(on_device > 0);
  CHECK(copies == p.summary.copies);
  CHECK(p.summary.moved_to_host == 0);

  // The blob side: the device's regions, its parameters (updated on it) in its persistent region.
  REQUIRE(p.spec.spaces.size() == 1);
  CHECK(p.spec.spaces[0].backend == "fakedev");
  CHECK(p.spec.spaces[0].persistent_bytes > 0);
  CHECK(p.spec.spaces[0].arena_bytes > 0);
  for (const TensorSpec& t : p.spec.tensors) {
    INFO(t.name);
    if (t.trainable) CHECK(t.space == 1);  // AdamUpdate runs on the device, so its parameter lives there
    if (t.storage == Storage::kWeights) CHECK(t.space == 0);
  }
}

TEST_CASE("frozen weights read on a device get a replica there, not a copy per step", "[compiler][placement]") {
  const std::set<std::string> claimed = {"Linear"};
  FakeDevice device(claimed);
  Placed p;
  p.program.graph = test::build_mlp();
  FunctionDef infer;
  infer.name = "infer";
  infer.nodes = p.program.graph.nodes();
  infer.inputs = {p.program.graph.find("x")};
  infer.outputs = p.program.graph.outputs();
  p.program.functions.push_back(infer);
  const BackendSet builtins = BackendSet::open({});
  std::vector<pock_backend_v1*> backends = {&device.api};
  for (pock_backend_v1* b : builtins.placeable("")) backends.push_back(b);  // as compile() does
  REQUIRE(place_ops(p.program, CompileOptions{}, backends, &p.summary).is_ok());
  REQUIRE(emit_program(p.program, CompileOptions{}, &p.summary, &p.spec, nullptr).is_ok());
  int replicas = 0;
  for (const TensorSpec& t : p.spec.tensors) {
    if (t.space == 1 && t.constant) {
      ++replicas;
      CHECK(t.storage == Storage::kPersistent);
      CHECK(t.has_init);
    }
  }
  CHECK(replicas == 4);  // both layers' weights and biases
  for (const OpSpec& op : p.spec.ops) {
    if (op.op != "Copy") continue;
    for (int32_t id : op.inputs) CHECK(p.spec.tensors[static_cast<size_t>(id)].kind != TensorKind::kParameter);
  }
}
