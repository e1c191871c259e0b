// pockc export's pieces that the end-to-end checks (tests/parity/test_pockc_export.py) reach only
// at sizes a test cannot afford: the external-data layout chosen above the inline limit, read back
// with the importer's own decoder; the inference form and its refusal; the safetensors writer read
// back by the safetensors reader of src/frontend.
#ifdef POCK_HAVE_ONNX
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "frontend/onnx/proto_reading.hpp"
#include "frontend/onnx_test_model.hpp"
#include "frontend/safetensors/safetensors_file.hpp"
#include "tools/onnx_export.hpp"
#include "tools/onnx_inference_form.hpp"
#include "tools/safetensors_writer.hpp"

namespace fs = std::filesystem;
using pock::testing::OnnxModel;
using namespace pock;
using namespace pock::tools;

namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("pock_onnx_export_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

std::vector<uint8_t> as_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(float));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A model with a 300-float weight (1200 bytes: above the 1 KiB external threshold) and a 4-float bias.
fs::path write_source(const fs::path& dir) {
  OnnxModel m;
  m.input("x", {1, 300}).output("y");
  m.floats("w", {300}, std::vector<float>(300, 0.5f)).floats("b", {4}, {1, 2, 3, 4});
  m.node("Mul", {"x", "w"}, {"y"});
  const fs::path p = dir / "source.onnx";
  std::ofstream(p, std::ios::binary) << m.bytes();
  return p;
}

TrainedWeights trained_w() {
  std::vector<float> w(300);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.25f + static_cast<float>(i) * 1e-3f;
  TrainedWeights weights{"trained", false, {}};
  weights.tensors.push_back(TrainedTensor{"w", DType::kF32, {300}, true, as_bytes(w)});
  weights.tensors.push_back(TrainedTensor{"b", DType::kF32, {4}, true, as_bytes({1, 2, 3, 4})});
  return weights;
}

onnx::ModelProto parse(const fs::path& p) {
  onnx::ModelProto m;
  REQUIRE(m.ParseFromString(read_file(p)));
  return m;
}

// trained_w() exported from write_source()'s model to dir/out.onnx.
OnnxExportReport export_trained_w(const fs::path& dir, const OnnxExportOptions& options) {
  TrainedWeights weights = trained_w();
  auto source = OnnxSource::open(write_source(dir).string());
  REQUIRE(source.is_ok());
  OnnxExportReport report;
  REQUIRE(source->match(&weights, &report).is_ok());
  REQUIRE(source->write((dir / "out.onnx").string(), options, &report).is_ok());
  return report;
}

}  // namespace

TEST_CASE("onnx export: above the inline limit, large initializers go to OUT.data", "[tools][export]") {
  TempDir dir;
  const TrainedWeights weights = trained_w();
  OnnxExportOptions options;
  options.inline_limit = 100;  // the model is ~1.3 kB: as a 3 GB one would be against 2 GiB
  const OnnxExportReport report = export_trained_w(dir.path, options);
  CHECK(report.replaced == std::vector<std::string>{"w"});
  CHECK(report.unchanged == std::vector<std::string>{"b"});
  const fs::path out = dir.path / "out.onnx";
  REQUIRE(report.external_data == out.string() + ".data");
  CHECK(fs::file_size(report.external_data) == 1200);

  const onnx::ModelProto m = parse(out);
  const onnx::TensorProto& w = m.graph().initializer(0);
  REQUIRE(w.data_location() == onnx::TensorProto::EXTERNAL);
  CHECK(w.external_data(0).value() == "out.onnx.data");  // relative to the model, as the spec asks
  auto decoded = onnx_import::decode_tensor(w, dir.path.string());
  REQUIRE(decoded.is_ok());
  CHECK(decoded->bytes == weights.tensors[0].bytes);
  const onnx::TensorProto& b = m.graph().initializer(1);
  CHECK(b.data_location() != onnx::TensorProto::EXTERNAL);  // 16 bytes stay in the model
  CHECK(onnx_import::decode_tensor(b, dir.path.string())->bytes == weights.tensors[1].bytes);
}

TEST_CASE("onnx export: below the limit the output is self-contained", "[tools][export]") {
  TempDir dir;
  const TrainedWeights weights = trained_w();
  const OnnxExportReport report = export_trained_w(dir.path, OnnxExportOptions{});
  const fs::path out = dir.path / "out.onnx";
  CHECK(report.external_data.empty());
  CHECK_FALSE(fs::exists(out.string() + ".data"));
  const onnx::ModelProto m = parse(out);
  const onnx::TensorProto& w = m.graph().initializer(0);
  CHECK(std::vector<uint8_t>(w.raw_data().begin(), w.raw_data().end()) == weights.tensors[0].bytes);
}

TEST_CASE("onnx export: a checkpoint's size mismatch names the tensor and both sides", "[tools][export]") {
  TempDir dir;
  TrainedWeights weights{"ckpt", true, {}};
  weights.tensors.push_back(TrainedTensor{"w", DType::kF32, {}, false, std::vector<uint8_t>(1196)});
  auto source = OnnxSource::open(write_source(dir.path).string());
  REQUIRE(source.is_ok());
  OnnxExportReport report;
  const Status s = source->match(&weights, &report);
  CHECK(s.code() == Code::kShapeMismatch);
  CHECK_THAT(s.message(), Catch::Contains("'w'") && Catch::Contains("[300]") && Catch::Contains("1200 bytes") &&
                              Catch::Contains("1196 bytes"));
}

TEST_CASE("inference form: training flags cleared; read statistics outputs refused", "[tools][export]") {
  OnnxModel m;
  onnx::NodeProto& bn = m.node("BatchNormalization", {"x", "g", "b", "mean", "var"}, {"y", "m_out", "v_out"}, "bn");
  OnnxModel::attr(bn, "training_mode", int64_t{1});
  m.node("Dropout", {"y", "ratio", "train"}, {"z"}, "drop");
  auto report = set_inference_form(&m.graph());
  REQUIRE(report.is_ok());
  CHECK(report->batchnorms == 1);
  CHECK(report->dropouts == 1);
  CHECK(m.graph().node(0).output_size() == 1);
  CHECK(m.graph().node(0).attribute(0).i() == 0);
  CHECK(m.graph().node(1).input_size() == 2);

  OnnxModel read;
  onnx::NodeProto& bn2 = read.node("BatchNormalization", {"x", "g", "b", "mean", "var"}, {"y", "m_out", "v_out"}, "bn2");
  OnnxModel::attr(bn2, "training_mode", int64_t{1});
  read.node("Identity", {"m_out"}, {"m_copy"});
  auto refused = set_inference_form(&read.graph());
  REQUIRE_FALSE(refused.is_ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("'bn2'") && Catch::Contains("'m_out'"));
}

TEST_CASE("safetensors writer: the repo's reader gets the tensors back", "[tools][export]") {
  TempDir dir;
  const fs::path out = dir.path / "p.safetensors";
  std::vector<TrainedTensor> tensors{{"fc.weight", DType::kF32, {2, 3}, true, as_bytes({1, 2, 3, 4, 5, 6})},
                                     {"a.bias", DType::kF16, {1}, true, {0x00, 0x3c}}};
  REQUIRE(write_safetensors(out.string(), tensors).is_ok());
  const std::string bytes = read_file(out);
  uint64_t header = 0;
  std::memcpy(&header, bytes.data(), 8);
  CHECK(header % 8 == 0);  // data stays 8-byte aligned
  auto file = safetensors::File::parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  REQUIRE(file.is_ok());
  const safetensors::TensorInfo* w = file->find("fc.weight");
  REQUIRE(w != nullptr);
  CHECK(w->dtype == "F32");
  CHECK(w->shape == std::vector<uint64_t>{2, 3});
  CHECK(std::memcmp(file->tensor_data(*w), tensors[0].bytes.data(), 24) == 0);
  const safetensors::TensorInfo* b = file->find("a.bias");
  REQUIRE(b != nullptr);
  CHECK(b->dtype == "F16");
  CHECK(file->metadata().at("format") == "pt");

  tensors[0].shape = {4, 3};  // 24 bytes cannot be [4, 3]: refused, and the old file stays
  CHECK_FALSE(write_safetensors(out.string(), tensors).is_ok());
  CHECK(read_file(out) == bytes);
}
#endif  // POCK_HAVE_ONNX
