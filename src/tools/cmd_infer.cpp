// pockc infer: run a blob's inference function over the samples of an .npz file.
#include <cstdio>
#include <cstring>

#include "pock/engine.hpp"
#include "tools/batches.hpp"
#include "tools/commands.hpp"
#include "tools/open_engine.hpp"

namespace pock::tools {
namespace {

Status run_infer(const ParsedArgs& args) {
  const std::string& blob = args.positionals[0];
  POCK_ASSIGN_OR_RETURN(BlobSignature sig, read_blob_signature(blob));
  const FunctionSig* fn = sig.function("infer");
  if (!fn) return Status(Code::kNotFound, blob + " has no inference function");
  POCK_ASSIGN_OR_RETURN(NpzFile data, read_npz(args.get("--data")));
  POCK_ASSIGN_OR_RETURN(BatchFeeder feeder, BatchFeeder::create(data, fn->inputs, "infer"));
  const int64_t batches = feeder.batches_per_epoch();
  if (feeder.num_samples() % feeder.batch_size() != 0) {
    return Status(Code::kShapeMismatch, "the data holds " + std::to_string(feeder.num_samples()) +
                                            " samples, not a multiple of the compiled batch " +
                                            std::to_string(feeder.batch_size()) +
                                            ": pad the data, or recompile with --input-shape for another batch");
  }
  POCK_ASSIGN_OR_RETURN(Engine engine, open_engine(blob, args));
  POCK_RETURN_IF_ERROR(resume_if_asked(engine, args));
  NpzFile results;
  for (const TensorSig& o : fn->outputs) {
    NpyArray a;
    a.descr = descr_of_dtype(o.dtype);
    a.shape = o.shape;
    // Outputs with the batch as leading dim are concatenated; others gain a leading batch index.
    const bool batched = !o.shape.empty() && o.shape[0] == feeder.batch_size();
    if (batches > 1) {
      if (batched) a.shape[0] *= batches;
      else a.shape.insert(a.shape.begin(), batches);
    }
    a.data.reserve(static_cast<size_t>(numel(o.shape) * batches) * dtype_size(o.dtype));
    results[o.name] = std::move(a);
  }
  for (int64_t b = 0; b < batches; ++b) {
    POCK_RETURN_IF_ERROR(feeder.feed(engine, b));
    POCK_RETURN_IF_ERROR(engine.infer());
    for (const TensorSig& o : fn->outputs) {
      const size_t n = static_cast<size_t>(numel(o.shape)) * dtype_size(o.dtype);
      NpyArray& a = results[o.name];
      const size_t at = a.data.size();
      a.data.resize(at + n);
      POCK_RETURN_IF_ERROR(engine.get_output(o.name, a.data.data() + at, n));
    }
  }
  POCK_RETURN_IF_ERROR(write_npz(args.get("--out"), results, args.has("--compress")));
  std::printf("wrote %s: %zu output(s) for %lld sample(s)\n", args.get("--out").c_str(), results.size(),
              static_cast<long long>(feeder.num_samples()));
  return Status::ok();
}

}  // namespace

const CommandEntry& infer_command() {
  static const CommandEntry entry = [] {
    CommandEntry e{
      Command{"infer",
              "OUT.pock --data DATA.npz --out RESULT.npz",
              "Run inference on every sample of an .npz file and save the outputs.",
              "DATA.npz holds one array per model input, named like the input, with the samples along\n"
              "the leading axis (np.savez or np.savez_compressed). The sample count must be a multiple of\n"
              "the compiled batch size. RESULT.npz holds one array per model output.",
              {"BLOB"},
              {{"--data", "DATA.npz", "input arrays by input name", false, true},
               {"--out", "RESULT.npz", "where to write the outputs", false, true},
               {"--compress", "", "write RESULT.npz compressed (np.savez_compressed)"},
               {"--resume", "CKPT", "load a checkpoint of `pockc train` first: infer with the trained weights"}}},
      run_infer};
    for (const OptionSpec& o : engine_option_specs()) e.spec.options.push_back(o);
    return e;
  }();
  return entry;
}

}  // namespace pock::tools
