// pockc compile: model (+ recipe) -> .pock blob.
#include <cstdio>
#include <map>

#include "pock/compiler/compiler.hpp"
#include "tools/open_engine.hpp"
#include "tools/commands.hpp"
#include "tools/model_loader.hpp"

namespace pock::tools {
namespace {

std::string megabytes(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

// What the frontend made of the model, before the compiler's passes: one line per op type.
void print_op_counts(const Graph& graph) {
  std::map<std::string, int> counts;
  for (const Node& n : graph.nodes()) ++counts[n.op];
  std::printf("imported %zu nodes:", graph.nodes().size());
  for (const auto& [op, n] : counts) std::printf(" %s x%d", op.c_str(), n);
  std::printf("\n");
}

Status run_compile(const ParsedArgs& args) {
  const std::string& model_path = args.positionals[0];
  const std::string out = args.get("--output");
  Recipe recipe;
  const bool train = args.has("--recipe");
  if (train) {
    auto r = load_recipe(args.get("--recipe"));
    if (!r.is_ok()) return Status(r.status().code(), args.get("--recipe") + ": " + r.status().message());
    recipe = std::move(r.value());
  }
  ModelLoadOptions load;
  load.input_shapes = args.all("--input-shape");
  load.binds = args.all("--bind");
  load.batch_size = train ? recipe.batch_size : 0;
  POCK_ASSIGN_OR_RETURN(load.kv_cache, args.get_int("--kv-cache", 0));
  POCK_ASSIGN_OR_RETURN(load.num_labels, args.get_int("--num-labels", -1));
  POCK_ASSIGN_OR_RETURN(Graph graph, load_model(model_path, load));
  if (args.has("--print-ops")) print_op_counts(graph);

  CompileOptions options;
  options.backend = args.get("--backend");
  options.optimize = !args.has("--no-optimize");
  if (args.has("--reorder") && args.has("--no-reorder")) {
    return Status(Code::kInvalidArgument, "--reorder and --no-reorder contradict each other: give one");
  }
  if (args.has("--reorder") || args.has("--no-reorder")) options.reorder_updates = args.has("--reorder");
  options.layout = !args.has("--no-layout");
  options.profile_path = args.get("--profile");
  options.backend_plugins = args.all("--backend-plugin");
  POCK_ASSIGN_OR_RETURN(options.memory_budget_bytes, memory_budget(args));
  CompileReport report;
  POCK_RETURN_IF_ERROR(compile_to_file(graph, train ? &recipe : nullptr, out, options, &report));
  if (args.has("--report")) {
    FILE* f = std::fopen(args.get("--report").c_str(), "w");
    if (!f) return Status(Code::kIo, "cannot write the report to '" + args.get("--report") + "'");
    std::fputs(report.json.c_str(), f);
    std::fclose(f);
  }
  int64_t params = 0;
  for (const TensorDesc& t : graph.tensors()) params += t.kind == TensorKind::kParameter ? numel(t.shape) : 0;
  std::printf("wrote %s (%s): %lld parameters, weights %s, trainable %s, optimizer state %s, arena %s\n", out.c_str(),
              train ? "train + infer" : "infer only", static_cast<long long>(params), megabytes(report.weights_bytes).c_str(),
              megabytes(report.trainable_bytes).c_str(), megabytes(report.optimizer_state_bytes).c_str(),
              megabytes(report.arena_peak_bytes).c_str());
  // A plan this large is most often a batch size typed with a zero too many: say so, since
  // without --memory-budget nothing else will until a device fails to open the blob.
  constexpr uint64_t kLargePlanBytes = uint64_t{2} << 30;
  const uint64_t planned = report.arena_peak_bytes + report.persistent_bytes;
  if (options.memory_budget_bytes == 0 && planned > kLargePlanBytes) {
    std::fprintf(stderr, "warning: the blob plans %s of arena and persistent memory (batch size %lld); "
                 "--memory-budget makes compile refuse such plans\n", megabytes(planned).c_str(),
                 static_cast<long long>(recipe.batch_size));
  }
  return Status::ok();
}

}  // namespace

const CommandEntry& compile_command() {
  static const CommandEntry entry{
      Command{"compile",
              "MODEL.onnx [--recipe RECIPE.json] -o OUT.pock [--input-shape NAME=d0,d1,...] [--bind NAME=v0,v1,...]",
              "Compile a model, and with a recipe its training step, into a .pock blob.",
              "Without --recipe the blob only runs inference. Shapes are static: every symbolic input\n"
              "dimension needs a size, from --input-shape; with a recipe, the leading dimension of every\n"
              "input is the recipe's batch_size.\n"
              "Operands pock needs at compile time (a Reshape's shape, Slice's starts, Resize's scales, ...)\n"
              "may be graph inputs in an ONNX file: --bind gives such an input the value it always takes; it\n"
              "becomes a constant and leaves the blob's inputs. Text values take the input's declared dtype\n"
              "(int64 if none) as a 1-D tensor, or a scalar for a rank-0 input; NAME= binds an empty one;\n"
              "any other shape or dtype comes from a .npy file (NAME=@values.npy).\n"
              "The recipe format is documented in docs/recipe.md; the ONNX import in docs/onnx.md.",
              {"MODEL"},
              {{"--recipe", "RECIPE.json", "what trains, the loss, the optimizer, the batch size"},
               {"--output", "OUT.pock", "where to write the blob", false, true, "-o"},
               {"--input-shape", "NAME=d0,d1,...", "static shape of an input, or @DIM=N for a named dimension", true},
               {"--bind", "NAME=v0,v1,...", "ONNX: bind a graph input to a value at compile time (NAME=@values.npy: from a .npy file)", true},
               {"--backend", "NAME", "preferred kernel backend recorded in the blob (cpu, ref, or a plugin's name); cuda (CUDA builds) puts the ops it runs in GPU memory"},
               backend_plugin_option(),
               memory_budget_option(),
               {"--profile", "PROFILE.json", "kernel timings from 'pockc tune': each measured op prefers its fastest backend, each convolution runs its fastest cpu algorithm"},
               {"--no-optimize", "", "skip fusion, folding and dead-code passes"},
               {"--reorder", "", "apply each optimizer update as soon as its gradient is ready: a smaller arena, but a rollback snapshot of all trained weights and state (for apps that open with rollback off; the default where updates run on cuda or a plugin)"},
               {"--no-reorder", "", "apply optimizer updates after the whole backward pass (the default on host backends)"},
               {"--no-layout", "", "keep every convolution NCHW (no NHWC chains for the cpu backend)"},
               {"--report", "REPORT.json", "write the compiler's memory report"},
               {"--print-ops", "", "print the op types the frontend imported"},
               {"--kv-cache", "N", "a .gguf or Hugging Face llama model: add a decode function with an N-position KV cache (pockc generate)"},
               {"--num-labels", "N", "a Hugging Face BERT folder: N-label classifier (the checkpoint's, else fresh); 0 the encoder alone"}}},
      run_compile};
  return entry;
}

}  // namespace pock::tools
