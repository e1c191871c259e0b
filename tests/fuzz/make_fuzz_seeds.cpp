// Writes the seed corpora the fuzz targets start from into <out>/<target>/: blobs, checkpoints,
// .npz files and ONNX models made by the current compiler and writers (so that the seeds follow
// the formats as they change), beside the hand-written seeds committed in tests/fuzz/seeds.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "frontend/onnx_test_model.hpp"
#include "fuzz_support.hpp"
#include "pock/pock.h"
#include "tools/npz.hpp"

namespace fs = std::filesystem;

namespace {

bool write(const fs::path& path, const void* data, size_t size) {
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  return static_cast<bool>(f);
}

bool blob_and_checkpoint_seeds(const fs::path& out) {
  for (const auto& seed : pock::fuzz::seed_blobs()) {
    if (seed.bytes.empty()) return false;
    for (const char* target : {"blob_open", "blob_step"}) {
      if (!write(out / target / (seed.name + ".pock"), seed.bytes.data(), seed.bytes.size())) return false;
    }
  }
  const std::vector<uint8_t> blob = pock::fuzz::mlp_blob();
  pock_engine* engine = nullptr;
  if (pock_engine_open_buffer(blob.data(), blob.size(), nullptr, &engine) != POCK_OK) return false;
  bool ok = pock_engine_save_checkpoint(engine, (out / "checkpoint" / "step0.ckpt").c_str()) == POCK_OK;
  std::vector<uint8_t> tokens(2 * 3 * 8, 0), labels(2 * 8, 0);
  pock_engine_set_input(engine, "tokens", tokens.data(), tokens.size());
  pock_engine_set_input(engine, "label", labels.data(), labels.size());
  float loss = 0;
  ok = ok && pock_engine_train_step(engine, &loss) == POCK_OK &&
       pock_engine_save_checkpoint(engine, (out / "checkpoint" / "step1.ckpt").c_str()) == POCK_OK;
  pock_engine_close(engine);
  return ok;
}

bool npz_seeds(const fs::path& out) {
  pock::tools::NpzFile arrays;
  arrays["image"] = {"<f4", {2, 3}, std::vector<uint8_t>(24, 0x3f)};
  arrays["label"] = {"<i8", {2}, std::vector<uint8_t>(16, 0)};
  arrays["mask"] = {"|b1", {4}, std::vector<uint8_t>(4, 1)};
  return pock::tools::write_npz((out / "npz" / "stored.npz").string(), arrays, false).is_ok() &&
         pock::tools::write_npz((out / "npz" / "deflated.npz").string(), arrays, true).is_ok();
}

bool onnx_seeds(const fs::path& out) {
  pock::testing::OnnxModel mlp;
  mlp.input("x", {-1, 4}, onnx::TensorProto::FLOAT, {"batch"}).output("y");
  mlp.floats("w", {3, 4}, std::vector<float>(12, 0.1f)).floats("b", {3}, {0.0f, 0.5f, -0.5f});
  auto& gemm = mlp.node("Gemm", {"x", "w", "b"}, {"h"}, "fc");
  pock::testing::OnnxModel::attr(gemm, "transB", int64_t{1});
  mlp.node("Relu", {"h"}, {"r"});
  mlp.node("Softmax", {"r"}, {"y"});

  pock::testing::OnnxModel cnn;
  cnn.input("image", {1, 2, 5, 5}).output("y");
  cnn.floats("k", {3, 2, 3, 3}, std::vector<float>(54, 0.05f));
  auto& conv = cnn.node("Conv", {"image", "k"}, {"c"}, "conv");
  pock::testing::OnnxModel::attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  cnn.floats("scale", {3}, {1, 1, 1}).floats("shift", {3}, {0, 0, 0});
  cnn.floats("mean", {3}, {0, 0, 0}).floats("var", {3}, {1, 1, 1});
  cnn.node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"n"}, "bn");
  cnn.ints("shape", {2}, {1, -1});
  cnn.node("GlobalAveragePool", {"n"}, {"p"});
  cnn.node("Reshape", {"p", "shape"}, {"y"});

  const std::string a = mlp.bytes(), b = cnn.bytes();
  return write(out / "onnx" / "gemm_relu_softmax.onnx", a.data(), a.size()) &&
         write(out / "onnx" / "conv_bn_pool.onnx", b.data(), b.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const fs::path out = argv[1];
  for (const char* target : {"blob_open", "blob_step", "checkpoint", "npz", "onnx"}) fs::create_directories(out / target);
  if (!blob_and_checkpoint_seeds(out) || !npz_seeds(out) || !onnx_seeds(out)) {
    std::fprintf(stderr, "make_fuzz_seeds: could not write the seeds into %s\n", argv[1]);
    return 1;
  }
  return 0;
}
