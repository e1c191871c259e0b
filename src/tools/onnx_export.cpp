#include "tools/onnx_export.hpp"

#ifdef POCK_HAVE_ONNX  // pockc without the ONNX frontend refuses --onnx (export_weights.cpp)

#include <climits>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include <google/protobuf/io/coded_stream.h>

#include "blob/atomic_file.hpp"
#include "frontend/onnx/proto_reading.hpp"
#include "tools/onnx_inference_form.hpp"

namespace pock::tools {

using onnx::TensorProto;
namespace {

// As onnx.save_model(save_as_external_data=True): smaller initializers stay in the model.
constexpr uint64_t kExternalThreshold = 1024;
constexpr uint64_t kExternalAlignment = 64;

std::string describe(DType dtype, const Shape& shape) { return std::string(dtype_name(dtype)) + " " + shape_str(shape); }

void clear_data(TensorProto* t) {
  t->clear_raw_data();
  t->clear_float_data();
  t->clear_int32_data();
  t->clear_int64_data();
  t->clear_double_data();
  t->clear_uint64_data();
  t->clear_string_data();
  t->clear_external_data();
  t->clear_data_location();
}

void set_inline(TensorProto* t, const std::vector<uint8_t>& bytes) {
  clear_data(t);
  t->set_raw_data(bytes.data(), bytes.size());
}

// An initializer's values as stored (raw_data, typed fields or the source's external file).
Result<std::vector<uint8_t>> stored_bytes(const TensorProto& t, const std::string& base_dir) {
  if (t.data_location() != TensorProto::EXTERNAL && t.has_raw_data()) {
    return std::vector<uint8_t>(t.raw_data().begin(), t.raw_data().end());
  }
  auto d = onnx_import::decode_tensor(t, base_dir);
  if (!d.is_ok()) return d.status();
  return std::move(d->bytes);
}

// The bytes the source keeps in external files (what a self-contained output would add).
Result<uint64_t> bytes_in_external_data(const onnx::GraphProto& g) {
  uint64_t total = 0;
  for (const TensorProto& t : g.initializer()) {
    if (t.data_location() != TensorProto::EXTERNAL) continue;
    auto dtype = onnx_import::dtype_from_onnx(t.data_type());
    if (!dtype.is_ok()) return Status(dtype.status().code(), "initializer '" + t.name() + "': " + dtype.status().message());
    total += static_cast<uint64_t>(numel(Shape(t.dims().begin(), t.dims().end()))) * dtype_size(dtype.value());
  }
  return total;
}

// Initializers the source keeps in external files, into the model (a self-contained output).
Status inline_external_data(onnx::GraphProto* g, const std::string& base_dir) {
  for (TensorProto& t : *g->mutable_initializer()) {
    if (t.data_location() != TensorProto::EXTERNAL) continue;
    POCK_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, stored_bytes(t, base_dir));
    set_inline(&t, bytes);
  }
  return Status::ok();
}

// Initializers of kExternalThreshold bytes or more into one data file at `data_path`, written
// atomically, each at an aligned offset; the rest into the model. Returns the file's size.
Result<uint64_t> move_to_external_data(onnx::GraphProto* g, const std::string& base_dir, const std::string& data_path) {
  static const uint8_t zeros[kExternalAlignment] = {};
  const std::string location = std::filesystem::path(data_path).filename().string();  // relative to the model
  AtomicFileWriter data(data_path);
  uint64_t offset = 0;
  for (TensorProto& t : *g->mutable_initializer()) {
    POCK_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, stored_bytes(t, base_dir));
    if (bytes.size() < kExternalThreshold) {
      if (t.data_location() == TensorProto::EXTERNAL) set_inline(&t, bytes);
      continue;
    }
    const uint64_t pad = (kExternalAlignment - offset % kExternalAlignment) % kExternalAlignment;
    data.write(zeros, pad);
    offset += pad;
    data.write(bytes.data(), bytes.size());
    clear_data(&t);
    t.set_data_location(TensorProto::EXTERNAL);
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"location", location},
                                     {"offset", std::to_string(offset)},
                                     {"length", std::to_string(bytes.size())}}) {
      onnx::StringStringEntryProto* e = t.add_external_data();
      e->set_key(key);
      e->set_value(value);
    }
    offset += bytes.size();
  }
  POCK_RETURN_IF_ERROR(data.commit());
  return offset;
}

// The initializers of BatchNormalization nodes' running mean and variance (inputs 3 and 4).
std::set<std::string> batchnorm_statistics(const onnx::GraphProto& g) {
  std::set<std::string> out;
  for (const onnx::NodeProto& n : g.node()) {
    if (n.op_type() != "BatchNormalization") continue;
    for (int i : {3, 4}) {
      if (i < n.input_size() && !n.input(i).empty()) out.insert(n.input(i));
    }
  }
  return out;
}

}  // namespace

struct OnnxSource::Impl {
  std::string path, base_dir;
  onnx::ModelProto model;
  std::map<std::string, int> initializer;                 // name -> index in graph.initializer
  std::vector<std::pair<int, const TrainedTensor*>> changes;  // set by match()
};

OnnxSource::OnnxSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OnnxSource::OnnxSource(OnnxSource&&) noexcept = default;
OnnxSource::~OnnxSource() = default;

Result<OnnxSource> OnnxSource::open(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::kIo, "cannot open ONNX file '" + path + "'");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Status(Code::kIo, "cannot read ONNX file '" + path + "'");
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return Status(Code::kInvalidArgument, path + " is larger than 2 GiB: not a valid ONNX file");
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  const std::string dir = std::filesystem::path(path).parent_path().string();
  impl->base_dir = dir.empty() ? "." : dir;
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  stream.SetTotalBytesLimit(INT_MAX);
  if (!impl->model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage()) {
    return Status(Code::kInvalidArgument, path + ": not a valid ONNX model: the protobuf does not parse (truncated or not .onnx)");
  }
  const onnx::GraphProto& g = impl->model.graph();
  for (int i = 0; i < g.initializer_size(); ++i) {
    if (!impl->initializer.emplace(g.initializer(i).name(), i).second) {
      return Status(Code::kInvalidArgument, path + ": initializer '" + g.initializer(i).name() + "' appears twice");
    }
  }
  return OnnxSource(std::move(impl));
}

Status OnnxSource::match(TrainedWeights* weights, OnnxExportReport* report) {
  const onnx::GraphProto& g = impl_->model.graph();
  impl_->changes.clear();
  std::set<std::string> held;
  for (TrainedTensor& t : weights->tensors) {
    const auto it = impl_->initializer.find(t.name);
    if (it == impl_->initializer.end()) {
      if (is_lora_adapter_name(t.name)) {
        return Status(Code::kInvalidArgument, weights->path + " holds the LoRA adapter '" + t.name +
                                                  "', which no initializer of " + impl_->path +
                                                  " names: merge the adapters first (pockc train --save-weights W.npz --merge-lora)");
      }
      report->not_in_source.push_back(t.name);
      continue;
    }
    held.insert(t.name);
    auto source = onnx_import::decode_tensor(g.initializer(it->second), impl_->base_dir);
    if (!source.is_ok()) return Status(source.status().code(), impl_->path + ": " + source.status().message());
    const onnx_import::DecodedTensor& s = source.value();
    if (!t.typed) {
      if (t.bytes.size() != s.bytes.size()) {
        return Status(Code::kShapeMismatch, "'" + t.name + "': " + impl_->path + " stores " + describe(s.dtype, s.shape) + " (" +
                                                std::to_string(s.bytes.size()) + " bytes), " + weights->path + " holds " +
                                                std::to_string(t.bytes.size()) + " bytes");
      }
      t.dtype = s.dtype;
      t.shape = s.shape;
      t.typed = true;
    } else if (t.dtype != s.dtype || t.shape != s.shape) {
      return Status(t.dtype != s.dtype ? Code::kInvalidArgument : Code::kShapeMismatch,
                    "'" + t.name + "': " + impl_->path + " stores " + describe(s.dtype, s.shape) + ", " +
                                              weights->path + " holds " + describe(t.dtype, t.shape));
    }
    if (t.bytes == s.bytes) {
      report->unchanged.push_back(t.name);
    } else {
      report->replaced.push_back(t.name);
      impl_->changes.emplace_back(it->second, &t);
    }
  }
  if (held.empty()) {
    return Status(Code::kNotFound, "none of the " + std::to_string(weights->tensors.size()) + " tensors of " + weights->path +
                                       " names an initializer of " + impl_->path + ": is it the model the blob was compiled from?");
  }
  report->kept = static_cast<int64_t>(impl_->initializer.size() - held.size());
  for (const std::string& name : batchnorm_statistics(g)) {
    if (impl_->initializer.count(name) && !held.count(name)) report->missing_statistics.push_back(name);
  }
  return Status::ok();
}

Status OnnxSource::write(const std::string& out, const OnnxExportOptions& options, OnnxExportReport* report) {
  onnx::GraphProto& g = *impl_->model.mutable_graph();
  if (!options.keep_training_form) {
    POCK_ASSIGN_OR_RETURN(const InferenceFormReport form, set_inference_form(&g));
    report->inference_form_nodes = form.batchnorms + form.dropouts;
  }
  for (const auto& [index, trained] : impl_->changes) set_inline(g.mutable_initializer(index), trained->bytes);
  POCK_ASSIGN_OR_RETURN(const uint64_t external_bytes, bytes_in_external_data(g));
  const bool external = options.external_data || impl_->model.ByteSizeLong() + external_bytes > options.inline_limit;
  report->external_data = external ? out + ".data" : "";
  report->file_bytes = 0;
  Status moved = Status::ok();
  if (external) {
    auto size = move_to_external_data(&g, impl_->base_dir, report->external_data);
    if (size.is_ok()) report->file_bytes = size.value();
    moved = size.status();
  } else {
    moved = inline_external_data(&g, impl_->base_dir);
  }
  if (!moved.is_ok()) return Status(moved.code(), impl_->path + ": " + moved.message());
  if (impl_->model.ByteSizeLong() > static_cast<size_t>(INT_MAX)) {
    return Status(Code::kInvalidArgument, out + ": the model would take " + std::to_string(impl_->model.ByteSizeLong()) +
                                              " bytes, above protobuf's 2 GiB limit for one message");
  }
  const std::string bytes = impl_->model.SerializeAsString();
  report->file_bytes += bytes.size();
  return write_file_atomic(out, bytes.data(), bytes.size());
}

}  // namespace pock::tools

#endif  // POCK_HAVE_ONNX
