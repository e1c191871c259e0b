// pockc train: run a blob's training step over batches of an .npz file.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "pock/engine.hpp"
#include "tools/batches.hpp"
#include "tools/blob_contents.hpp"
#include "tools/lora_weights.hpp"
#include "tools/commands.hpp"
#include "tools/open_engine.hpp"
#include "tools/progress.hpp"

namespace pock::tools {
namespace {

// `lora`: the blob's checked metadata when --merge-lora folds the adapters in; null otherwise.
Status save_weights(Engine& engine, const BlobSignature& sig, const std::string& path, const nlohmann::json& lora) {
  NpzFile arrays;
  for (const TensorSig& p : sig.parameters) {
    NpyArray a;
    a.descr = descr_of_dtype(p.dtype);
    a.shape = p.shape;
    a.data.resize(static_cast<size_t>(numel(p.shape)) * dtype_size(p.dtype));
    POCK_RETURN_IF_ERROR(engine.get_parameter(p.name, a.data.data(), a.data.size()));
    arrays[p.name] = std::move(a);
  }
  if (!lora.is_null()) POCK_RETURN_IF_ERROR(merge_lora_arrays(lora, &arrays));
  return write_npz(path, arrays);
}

Status run_train(const ParsedArgs& args) {
  const std::string& blob = args.positionals[0];
  POCK_ASSIGN_OR_RETURN(int64_t steps, args.get_int("--steps", 0));
  if (steps < 1) return Status(Code::kInvalidArgument, "--steps must be at least 1");
  POCK_ASSIGN_OR_RETURN(BlobSignature sig, read_blob_signature(blob));
  const FunctionSig* fn = sig.function("train");
  if (!fn) {
    return Status(Code::kNotFound, blob + " was compiled without a recipe, so it cannot train: recompile with "
                                          "'pockc compile MODEL --recipe RECIPE.json -o " + blob + "'");
  }
  nlohmann::json merge_metadata;  // checked before training, so that a blob without adapters fails first
  if (args.has("--merge-lora")) {
    if (!args.has("--save-weights")) return Status(Code::kInvalidArgument, "--merge-lora needs --save-weights W.npz");
    POCK_ASSIGN_OR_RETURN(const BlobContents contents, read_blob_contents(blob));
    if (!contents.metadata.contains("lora")) return Status(Code::kInvalidArgument, "--merge-lora: " + blob + " has no LoRA adapters");
    merge_metadata = contents.metadata;
  }
  POCK_ASSIGN_OR_RETURN(NpzFile data, read_npz(args.get("--data")));
  POCK_ASSIGN_OR_RETURN(BatchFeeder feeder, BatchFeeder::create(data, fn->inputs, "train"));
  if (args.has("--shuffle")) {
    POCK_ASSIGN_OR_RETURN(int64_t seed, args.get_int("--shuffle", 0));
    feeder.set_shuffle(static_cast<uint64_t>(seed));
  }
  POCK_ASSIGN_OR_RETURN(Engine engine, open_engine(blob, args));
  POCK_RETURN_IF_ERROR(resume_if_asked(engine, args));
  std::ofstream log;
  if (args.has("--log")) {
    log.open(args.get("--log"), std::ios::app);
    if (!log) return Status(Code::kIo, "cannot open the log '" + args.get("--log") + "' for writing");
  }
  const int64_t first = engine.step();  // continues the batch order after --resume
  Progress progress(first, steps);
  float loss = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t k = 0; k < steps; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    POCK_RETURN_IF_ERROR(feeder.feed(engine, first + k));
    auto r = engine.train_step();
    if (!r.is_ok()) {
      progress.finish();
      return Status(r.status().code(), "step " + std::to_string(first + k + 1) + ": " + r.status().message());
    }
    loss = r.value();
    progress.step(k + 1, loss);
    if (log.is_open()) {
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      log << nlohmann::json{{"step", engine.step()}, {"loss", loss}, {"ms", ms}}.dump() << "\n";
      log.flush();
    }
  }
  progress.finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (args.has("--checkpoint")) POCK_RETURN_IF_ERROR(engine.save_checkpoint(args.get("--checkpoint")));
  if (args.has("--save-weights")) POCK_RETURN_IF_ERROR(save_weights(engine, sig, args.get("--save-weights"), merge_metadata));
  std::printf("trained %lld step(s) in %.2f s (%.2f step/s), last loss %.6g, now at step %lld\n",
              static_cast<long long>(steps), seconds, static_cast<double>(steps) / std::max(seconds, 1e-9),
              static_cast<double>(loss), static_cast<long long>(engine.step()));
  return Status::ok();
}

}  // namespace

const CommandEntry& train_command() {
  static const CommandEntry entry = [] {
    CommandEntry e{
        Command{"train",
                "OUT.pock --data DATA.npz --steps N [--log LOG.jsonl] [--save-weights W.npz [--merge-lora]] [--checkpoint CKPT]",
                "Train a blob compiled with a recipe on the batches of an .npz file.",
                "DATA.npz holds one array per model input and per recipe label, named like them, with the\n"
                "samples along the leading axis. Step k (counting from 0, continuing after --resume) takes\n"
                "batch k mod (N / B): samples [k*B, (k+1)*B) in file order, or in a per-epoch shuffled\n"
                "order with --shuffle. B is the batch size compiled into the blob; a trailing partial\n"
                "batch is skipped. Each step's loss is printed (a progress bar on a terminal).",
                {"BLOB"},
                {{"--data", "DATA.npz", "inputs and labels by name", false, true},
                 {"--steps", "N", "training steps to run", false, true},
                 {"--log", "LOG.jsonl", "append {step, loss, ms} per step"},
                 {"--save-weights", "W.npz", "write every parameter after training"},
                 {"--merge-lora", "", "with --save-weights: LoRA adapters merged into their weights (W + scaling B A)"},
                 {"--checkpoint", "CKPT", "write a checkpoint (trainable weights, optimizer state, step) at the end"},
                 {"--resume", "CKPT", "load a checkpoint before training"},
                 {"--shuffle", "SEED", "visit the samples of each epoch in a seeded random order"}}},
        run_train};
    for (const OptionSpec& o : engine_option_specs()) e.spec.options.push_back(o);
    return e;
  }();
  return entry;
}

}  // namespace pock::tools
