// Runs one ONNX backend node test case through pock and prints one line: PASS, or
// FAIL <category>: <message>, the category one of
//   import refused | compile refused | open refused | bad test data | run error |
//   wrong dtype | wrong shape | mismatch | exception.
// The model is imported with no recipe (inference only) and compiled for the host backends, as
// `pockc compile MODEL.onnx` does. Every failure is reported on that line with exit status 1; the
// conformance driver (run_conformance.py) treats anything else (a signal, a hang) as a crash.
#include <cstdio>
#include <exception>
#include <string>

#include "node_test_case.hpp"
#include "output_compare.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/compiler/onnx.hpp"
#include "pock/engine.hpp"

namespace pock::conformance {
namespace {

struct Verdict {
  std::string category;  // empty: pass
  std::string message;
};

Verdict fail(std::string category, const std::string& message) { return {std::move(category), message}; }

onnx_import::DecodedTensor decoded(const pock_tensor_info& info, std::vector<uint8_t> bytes) {
  onnx_import::DecodedTensor t;
  t.dtype = static_cast<DType>(info.dtype);
  t.shape.assign(info.dims, info.dims + info.rank);
  t.bytes = std::move(bytes);
  return t;
}

// Feeds one data set, runs inference and compares every output.
Verdict run_data_set(Engine& engine, const DataSet& d) {
  for (const NamedTensor& in : d.inputs) {
    auto info = engine.info(in.name);
    // A blob has no input that no output reads: `Shape(x)` of a static x folds to a constant
    // (docs/onnx.md, "Names and kinds"), so x is not fed. The outputs are still compared.
    if (!info.is_ok() && info.status().code() == Code::kNotFound) continue;
    if (!info.is_ok()) return fail("run error", "input '" + in.name + "': " + info.status().message());
    const onnx_import::DecodedTensor want_layout = decoded(*info, {});
    if (want_layout.dtype != in.value.dtype || want_layout.shape != in.value.shape) {
      return fail("run error", "input '" + in.name + "': pock compiled " + dtype_name(want_layout.dtype) +
                                   shape_str(want_layout.shape) + ", the data is " + dtype_name(in.value.dtype) +
                                   shape_str(in.value.shape));
    }
    const Status s = engine.set_input(in.name, in.value.bytes.data(), in.value.bytes.size());
    if (!s.is_ok()) return fail("run error", "input '" + in.name + "': " + s.message());
  }
  if (const Status s = engine.infer(); !s.is_ok()) return fail("run error", s.message());
  for (size_t k = 0; k < d.outputs.size(); ++k) {
    const NamedTensor& out = d.outputs[k];
    const std::string which = "output " + std::to_string(k) + " '" + out.name + "'";
    auto info = engine.info(out.name);
    if (!info.is_ok()) return fail("run error", which + ": " + info.status().message());
    std::vector<uint8_t> bytes(info->nbytes);
    if (const Status s = engine.get_output(out.name, bytes.data(), bytes.size()); !s.is_ok()) {
      return fail("run error", which + ": " + s.message());
    }
    if (auto m = compare_output(out.value, decoded(*info, std::move(bytes)))) {
      return fail(m->kind == "values" ? "mismatch" : m->kind, which + ": " + m->detail);
    }
  }
  return {};
}

Verdict run_case(const std::string& case_dir) {
  auto graph = import_onnx(case_dir + "/model.onnx");
  if (!graph.is_ok()) return fail("import refused", graph.status().message());
  auto blob = compile(*graph, nullptr);
  if (!blob.is_ok()) return fail("compile refused", blob.status().message());
  EngineConfig config;
  config.num_threads = 1;  // the driver runs one case per core
  auto engine = Engine::open_buffer(blob->data(), blob->size(), config);
  if (!engine.is_ok()) return fail("open refused", engine.status().message());
  auto data = read_node_test_case(case_dir);
  if (!data.is_ok()) return fail("bad test data", data.status().message());
  for (const DataSet& d : data->data_sets) {
    Verdict v = run_data_set(*engine, d);
    if (!v.category.empty()) return v;
  }
  return {};
}

// The driver reads one line per case.
std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return s;
}

}  // namespace
}  // namespace pock::conformance

int main(int argc, char** argv) {
  using pock::conformance::Verdict;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CASE_DIR  (a folder with model.onnx and test_data_set_N/)\n", argv[0]);
    return 2;
  }
  Verdict v;
  try {
    v = pock::conformance::run_case(argv[1]);
  } catch (const std::exception& e) {
    v = {"exception", e.what()};
  } catch (...) {
    v = {"exception", "a non-standard exception"};
  }
  if (v.category.empty()) {
    std::printf("PASS\n");
    return 0;
  }
  std::printf("FAIL %s: %s\n", v.category.c_str(), pock::conformance::one_line(v.message).c_str());
  return 1;
}
