// pockc export: trained weights (an .npz of `pockc train --save-weights`) back into the GGUF file
// the model came from, or a LoRA adapter beside it, for llama.cpp; without --gguf, into the ONNX
// model or as safetensors / .npz (export_weights.cpp).
#include <cstdio>
#include <cstring>

#include "pock/compiler/gguf.hpp"
#include "tools/commands.hpp"
#include "tools/export_weights.hpp"
#include "tools/npz.hpp"

namespace pock::tools {
namespace {

Result<models::WeightMap> f32_weights(const NpzFile& npz, const std::string& path) {
  models::WeightMap weights;
  for (const auto& [name, array] : npz) {
    if (array.descr != "<f4") continue;  // the step counter and integer state are not weights
    std::vector<float> values(static_cast<size_t>(array.count()));
    if (array.data.size() != values.size() * sizeof(float)) return Status(Code::kInvalidArgument, path + ": '" + name + "' is truncated");
    std::memcpy(values.data(), array.data.data(), array.data.size());
    weights[name] = std::move(values);
  }
  return weights;
}

Status run_export(const ParsedArgs& args) {
  if (!args.has("--gguf")) return run_weights_export(args);
  for (const char* other : {"--onnx", "--safetensors", "--npz", "--external-data", "--keep-training-form", "--verbose"}) {
    if (args.has(other)) return Status(Code::kInvalidArgument, std::string(other) + " does not apply to --gguf exports");
  }
  if (!args.has("--output")) return Status(Code::kInvalidArgument, "--gguf needs -o OUT.gguf");
  const std::string& weights_path = args.positionals[0];
  const std::string source = args.get("--gguf"), out = args.get("--output");
  POCK_ASSIGN_OR_RETURN(const NpzFile npz, read_npz(weights_path));
  POCK_ASSIGN_OR_RETURN(const models::WeightMap weights, f32_weights(npz, weights_path));
  double alpha = 0.0;
  if (args.has("--lora-alpha")) {
    try {
      alpha = std::stod(args.get("--lora-alpha"));
    } catch (const std::exception&) {
      alpha = -1.0;
    }
    if (!(alpha > 0.0)) return Status(Code::kInvalidArgument, "--lora-alpha must be a positive number");
  }
  GgufExportReport report;
  if (args.has("--lora-adapter")) {
    if (!(alpha > 0.0)) return Status(Code::kInvalidArgument, "--lora-adapter needs --lora-alpha (the recipe's lora.alpha)");
    models::WeightMap adapters;
    for (const auto& [name, values] : weights) {
      if (name.find(".lora_A.") != std::string::npos || name.find(".lora_B.") != std::string::npos) adapters[name] = values;
    }
    if (adapters.empty()) return Status(Code::kNotFound, weights_path + " holds no LoRA adapter weights (*.lora_A.weight, *.lora_B.weight)");
    POCK_RETURN_IF_ERROR(export_gguf_lora_adapter(source, adapters, alpha, out, &report));
    std::printf("wrote %s: LoRA adapter, %zu tensors, %.1f MB\n", out.c_str(), report.replaced.size(), double(report.file_bytes) / 1e6);
    return Status::ok();
  }
  GgufExportOptions options;
  options.changed_type = args.get("--type", "f32");
  options.lora_alpha = alpha;
  options.convert_all = args.has("--all");
  POCK_RETURN_IF_ERROR(export_gguf(source, weights, out, options, &report));
  std::printf("wrote %s: %zu tensors written as %s, %lld kept from %s, %.1f MB\n", out.c_str(), report.replaced.size(),
              options.changed_type.c_str(), static_cast<long long>(report.kept), source.c_str(), double(report.file_bytes) / 1e6);
  return Status::ok();
}

}  // namespace

const CommandEntry& export_command() {
  static const CommandEntry entry{
      Command{"export",
              "WEIGHTS --onnx SOURCE.onnx -o OUT.onnx | WEIGHTS --gguf SOURCE.gguf -o OUT.gguf | WEIGHTS --safetensors OUT",
              "Write trained weights back into the model they came from (ONNX, GGUF) or as safetensors / .npz.",
              "WEIGHTS is the .npz of `pockc train --save-weights` (every parameter by its source name) or\n"
              "the file of `pockc train --checkpoint` (the trainable parameters and the BatchNorm running\n"
              "statistics that training updated; the .npz holds no running statistics).\n"
              "--onnx: OUT.onnx is SOURCE.onnx with every initializer whose value training changed replaced,\n"
              "bit for bit in its own dtype and shape; everything else is copied. A dtype, shape or size that\n"
              "differs is refused. OUT.onnx is self-contained unless it would pass protobuf's 2 GiB limit\n"
              "(or --external-data): then initializers of 1 KiB or more go to OUT.onnx.data. BatchNormalization\n"
              "and Dropout are written in inference form (training_mode cleared), as pock's infer runs them.\n"
              "--safetensors / --npz: the parameters by their source names (from a checkpoint, those that\n"
              "--onnx names: the checkpoint carries no shapes).\n"
              "--gguf: OUT.gguf is SOURCE.gguf with every weight that training changed replaced\n"
              "(written as --type); unchanged tensors, the metadata and the tokenizer are copied byte for\n"
              "byte, so frozen quantized weights stay as they were. LoRA adapter weights\n"
              "(*.lora_A.weight, *.lora_B.weight) are merged into their modules (W + alpha/rank B A) with\n"
              "--lora-alpha, or written alone as a llama.cpp LoRA adapter with --lora-adapter.",
              {"WEIGHTS"},
              {{"--onnx", "SOURCE.onnx", "the ONNX model the blob was compiled from"},
               {"--gguf", "SOURCE.gguf", "the GGUF file the model was compiled from"},
               {"--output", "OUT", "where to write the model (.onnx with --onnx, .gguf with --gguf)", false, false, "-o"},
               {"--safetensors", "OUT.safetensors", "write the parameters as safetensors"},
               {"--npz", "OUT.npz", "write the parameters as an .npz"},
               {"--external-data", "", "with --onnx: initializers of 1 KiB or more in OUT.onnx.data"},
               {"--keep-training-form", "", "with --onnx: keep BatchNormalization/Dropout training flags (default: inference form)"},
               {"--verbose", "", "with --onnx: list each tensor replaced, unchanged or not in the model"},
               {"--type", "TYPE", "--gguf: type of the changed weights: f32 (default, exact), f16, bf16, q8_0, q4_0, q4_1"},
               {"--all", "", "--gguf: write every tensor as --type, changed or not"},
               {"--lora-alpha", "ALPHA", "--gguf: the recipe's lora.alpha: merge adapters (or scale the adapter file)"},
               {"--lora-adapter", "", "--gguf: write only the LoRA adapter, in llama.cpp's adapter format"}}},
      run_export};
  return entry;
}

}  // namespace pock::tools
