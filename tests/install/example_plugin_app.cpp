// Run by plugin_check.cmake with the path of examples/plugin's library, built out of tree against
// the installed headers: a small transformer-style MLP (GELU and SiLU) compiled and trained with
// the plugin runs its activations on the plugin, and trains exactly as with the reference backend
// (to float rounding: the plugin computes in float, ref in double). Prints what it checked.
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"

using namespace pock;

namespace {

constexpr int64_t kBatch = 8, kIn = 16, kHidden = 32, kClasses = 4;

std::vector<float> uniform(int64_t n, float scale, std::mt19937& gen) {
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(gen);
  return v;
}

Graph build_model() {
  Graph g;
  std::mt19937 gen(7);
  const TensorId x = g.add_input("x", DType::kF32, {kBatch, kIn});
  const TensorId w1 = g.add_parameter_f32("up.weight", {kHidden, kIn}, uniform(kHidden * kIn, 0.25f, gen));
  const TensorId w2 = g.add_parameter_f32("gate.weight", {kHidden, kIn}, uniform(kHidden * kIn, 0.25f, gen));
  const TensorId w3 = g.add_parameter_f32("down.weight", {kClasses, kHidden}, uniform(kClasses * kHidden, 0.18f, gen));
  const TensorId up = g.add_node("Linear", {x, w1}, {}, "up").value()[0];
  const TensorId gate = g.add_node("Linear", {x, w2}, {}, "gate").value()[0];
  const TensorId gelu = g.add_node("Gelu", {up}, Attrs{{"approximate", std::string("tanh")}}, "gelu").value()[0];
  const TensorId silu = g.add_node("Silu", {gate}, {}, "silu").value()[0];
  const TensorId h = g.add_node("Mul", {gelu, silu}, {}, "mix").value()[0];
  const TensorId logits = g.add_node("Linear", {h, w3}, {}, "down", {"logits"}).value()[0];
  (void)g.mark_output(logits);
  return g;
}

struct Run {
  std::vector<float> losses;
  std::vector<float> weights;
  int ops_on_plugin = 0;
  uint64_t ran_on_plugin = 0;  // the plugin's own count of the ops it ran
};

// While the engine that loaded it is open, the plugin library can be found again by path.
uint64_t plugin_ops_executed(const std::string& plugin) {
  void* library = dlopen(plugin.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!library) return 0;
  auto executed = reinterpret_cast<uint64_t (*)()>(dlsym(library, "pock_smooth_activations_executed"));
  const uint64_t ran = executed ? executed() : 0;
  dlclose(library);
  return ran;
}

Result<Run> train(const std::string& plugin, int steps) {
  Recipe recipe;
  recipe.loss.logits = "logits";
  recipe.optimizer.type = "adam";
  recipe.optimizer.lr = 0.01;
  CompileOptions options;
  EngineConfig config;
  if (plugin.empty()) {
    options.backend = config.backend = "ref";
  } else {
    options.backend_plugins = config.backend_plugins = {plugin};
  }
  POCK_ASSIGN_OR_RETURN(std::vector<uint8_t> blob, compile(build_model(), &recipe, options));
  POCK_ASSIGN_OR_RETURN(Engine engine, Engine::open_buffer(blob.data(), blob.size(), config));
  Run run;
  for (const BackendInfo& b : engine.backends()) {
    if (b.name == "smooth_activations") run.ops_on_plugin = b.ops_bound;
  }
  std::mt19937 gen(11);
  for (int s = 0; s < steps; ++s) {
    const std::vector<float> x = uniform(kBatch * kIn, 1.0f, gen);
    std::vector<int64_t> label(kBatch);
    for (int64_t i = 0; i < kBatch; ++i) label[static_cast<size_t>(i)] = (i + s) % kClasses;
    POCK_RETURN_IF_ERROR(engine.set_input("x", x));
    POCK_RETURN_IF_ERROR(engine.set_input("label", label));
    POCK_ASSIGN_OR_RETURN(float loss, engine.train_step());
    run.losses.push_back(loss);
  }
  if (!plugin.empty()) run.ran_on_plugin = plugin_ops_executed(plugin);
  for (const char* name : {"up.weight", "gate.weight", "down.weight"}) {
    pock_tensor_info info{};
    POCK_ASSIGN_OR_RETURN(info, engine.info(name));
    std::vector<float> w(info.nbytes / sizeof(float));
    POCK_RETURN_IF_ERROR(engine.get_parameter(name, w.data(), info.nbytes));
    run.weights.insert(run.weights.end(), w.begin(), w.end());
  }
  return run;
}

bool close(const std::vector<float>& a, const std::vector<float>& b, float tolerance, const char* what) {
  if (a.size() != b.size()) {
    std::printf("%s: %zu values against %zu\n", what, a.size(), b.size());
    return false;
  }
  float worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]) / std::max(1.0f, std::fabs(b[i])));
  std::printf("%s: largest relative difference %.3g (tolerance %.1g)\n", what, worst, tolerance);
  return worst <= tolerance;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: example_plugin_app PLUGIN.so\n");
    return 2;
  }
  const int steps = 10;
  auto with_plugin = train(argv[1], steps);
  auto reference = train("", steps);
  if (!with_plugin.is_ok() || !reference.is_ok()) {
    std::printf("failed: %s%s\n", with_plugin.status().to_string().c_str(), reference.status().to_string().c_str());
    return 1;
  }
  const uint64_t ran = with_plugin->ran_on_plugin;
  std::printf("ops bound to the plugin: %d; ops it ran: %llu\n", with_plugin->ops_on_plugin,
              static_cast<unsigned long long>(ran));
  // Per step: Gelu, Silu, GeluGrad, SiluGrad, and the Silu the backward recomputes instead of
  // keeping its output (compiler/passes/recompute_activations.cpp).
  bool ok = with_plugin->ops_on_plugin >= 5 && ran == static_cast<uint64_t>(5 * steps);
  ok = close(with_plugin->losses, reference->losses, 1e-5f, "losses") && ok;
  ok = close(with_plugin->weights, reference->weights, 1e-5f, "weights") && ok;
  std::printf("%s\n", ok ? "example plugin: ok" : "example plugin: FAILED");
  return ok ? 0 : 1;
}
