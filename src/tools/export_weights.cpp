#include "tools/export_weights.hpp"

#include <cstdio>

#include "tools/npz.hpp"
#include "tools/onnx_export.hpp"
#include "tools/safetensors_writer.hpp"
#include "tools/units.hpp"

namespace pock::tools {
namespace {

void print_names(const char* what, const std::vector<std::string>& names) {
  for (const std::string& n : names) std::printf("  %-10s %s\n", what, n.c_str());
}

Status export_onnx(const ParsedArgs& args, TrainedWeights* weights) {
#ifdef POCK_HAVE_ONNX
  const std::string source = args.get("--onnx");
  POCK_ASSIGN_OR_RETURN(OnnxSource model, OnnxSource::open(source));
  OnnxExportReport report;
  POCK_RETURN_IF_ERROR(model.match(weights, &report));
  if (!args.has("--output")) return Status::ok();  // only the shapes were wanted (a checkpoint to --safetensors)
  const std::string out = args.get("--output");
  OnnxExportOptions options;
  options.external_data = args.has("--external-data");
  options.keep_training_form = args.has("--keep-training-form");
  POCK_RETURN_IF_ERROR(model.write(out, options, &report));
  if (args.has("--verbose")) {
    print_names("replaced", report.replaced);
    print_names("unchanged", report.unchanged);
    print_names("skipped", report.not_in_source);
  }
  std::printf("wrote %s: %zu initializer(s) replaced, %zu equal to the source, %lld kept from %s, %zu tensor(s) of %s "
              "not in the model; %s, %s\n",
              out.c_str(), report.replaced.size(), report.unchanged.size(), static_cast<long long>(report.kept), source.c_str(),
              report.not_in_source.size(), weights->path.c_str(),
              report.external_data.empty() ? "self-contained" : ("weights in " + report.external_data).c_str(),
              format_bytes(report.file_bytes).c_str());
  if (report.inference_form_nodes > 0) {
    std::printf("%d BatchNormalization/Dropout node(s) written in inference form, as pock infers "
                "(--keep-training-form keeps the training flags)\n", report.inference_form_nodes);
  }
  // A checkpoint holds every running statistic the train step updates; an .npz holds none.
  if (!weights->from_checkpoint && !report.missing_statistics.empty()) {
    std::printf("note: %s holds no value for %zu BatchNorm running statistic(s) (%s, ...); the source's are kept. "
                "`pockc train --save-weights` writes parameters only: if training updated these statistics, export "
                "from the file of `pockc train --checkpoint` instead\n",
                weights->path.c_str(), report.missing_statistics.size(), report.missing_statistics[0].c_str());
  }
  return Status::ok();
#else
  (void)args;
  (void)weights;
  return Status(Code::kUnsupportedOp, "this pockc was built without the ONNX frontend (POCK_WITH_ONNX=OFF): --onnx is unavailable");
#endif
}

// The parameters under their source names: every array of an .npz, the tensors of a checkpoint
// that --onnx gave a dtype and shape (the others are optimizer state and the step counter).
std::vector<TrainedTensor> parameters(const TrainedWeights& weights) {
  std::vector<TrainedTensor> out;
  for (const TrainedTensor& t : weights.tensors) {
    if (t.typed) out.push_back(t);
  }
  return out;
}

Status write_npz_copy(const std::string& path, const std::vector<TrainedTensor>& tensors) {
  NpzFile arrays;
  for (const TrainedTensor& t : tensors) arrays[t.name] = NpyArray{descr_of_dtype(t.dtype), t.shape, t.bytes};
  return write_npz(path, arrays);
}

}  // namespace

Status run_weights_export(const ParsedArgs& args) {
  const bool to_onnx = args.has("--output"), to_safetensors = args.has("--safetensors"), to_npz = args.has("--npz");
  if (!to_onnx && !to_safetensors && !to_npz && args.has("--onnx")) {
    return Status(Code::kInvalidArgument, "--onnx SOURCE.onnx needs -o OUT.onnx (or --safetensors / --npz)");
  }
  if (!to_onnx && !to_safetensors && !to_npz) {
    return Status(Code::kInvalidArgument, "say what to write: --onnx SOURCE.onnx -o OUT.onnx, --safetensors OUT.safetensors, "
                                          "--npz OUT.npz, or --gguf SOURCE.gguf -o OUT.gguf");
  }
  for (const char* gguf_only : {"--type", "--all", "--lora-alpha", "--lora-adapter"}) {
    if (args.has(gguf_only)) return Status(Code::kInvalidArgument, std::string(gguf_only) + " applies to --gguf exports");
  }
  if (to_onnx && !args.has("--onnx")) return Status(Code::kInvalidArgument, "-o needs the source model: --onnx SOURCE.onnx (or --gguf SOURCE.gguf)");
  for (const char* onnx_only : {"--external-data", "--keep-training-form", "--verbose"}) {
    if (args.has(onnx_only) && !to_onnx) return Status(Code::kInvalidArgument, std::string(onnx_only) + " applies to --onnx SOURCE.onnx -o OUT.onnx");
  }
  POCK_ASSIGN_OR_RETURN(TrainedWeights weights, read_trained_weights(args.positionals[0]));
  if (weights.from_checkpoint && !args.has("--onnx")) {
    return Status(Code::kInvalidArgument, weights.path + " is a checkpoint, whose tensors carry no dtype or shape: give the "
                                          "model it was trained from with --onnx SOURCE.onnx");
  }
  if (args.has("--onnx")) POCK_RETURN_IF_ERROR(export_onnx(args, &weights));
  const std::vector<TrainedTensor> params = parameters(weights);
  if (to_safetensors) {
    POCK_RETURN_IF_ERROR(write_safetensors(args.get("--safetensors"), params));
    std::printf("wrote %s: %zu tensor(s)\n", args.get("--safetensors").c_str(), params.size());
  }
  if (to_npz) {
    // libzip writes the archive to a temporary file and renames it at close: atomic as well.
    POCK_RETURN_IF_ERROR(write_npz_copy(args.get("--npz"), params));
    std::printf("wrote %s: %zu tensor(s)\n", args.get("--npz").c_str(), params.size());
  }
  return Status::ok();
}

}  // namespace pock::tools
