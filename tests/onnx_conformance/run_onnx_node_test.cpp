// Runs one ONNX backend node test case through pock and prints one line: PASS, or
// FAIL <category>: <message>, either followed by " (bound: NAME, ...)" when the import needed
// graph inputs bound to the test's values (operands pock needs at compile time), the category one of
//   import refused | compile refused | open refused | bad test data | run error |
//   wrong dtype | wrong shape | mismatch | exception.
// The model is imported with no recipe (inference only) and compiled for the host backends, as
// `pockc compile MODEL.onnx` does. Every failure is reported on that line with exit status 1; the
// conformance driver (run_conformance.py) treats anything else (a signal, a hang) as a crash.
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

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

// The value every data set feeds to input `name`, for a binding: a blob is compiled once, so the
// data sets must agree on it.
Result<OnnxBoundValue> bound_value(const NodeTestCase& data, const std::string& name) {
  const onnx_import::DecodedTensor* first = nullptr;
  for (size_t k = 0; k < data.data_sets.size(); ++k) {
    for (const NamedTensor& in : data.data_sets[k].inputs) {
      if (in.name != name) continue;
      if (!first) first = &in.value;
      if (in.value.dtype != first->dtype || in.value.shape != first->shape || in.value.bytes != first->bytes) {
        return Status(Code::kInvalidArgument, "input '" + name + "' needs a binding, but data set " + std::to_string(k) +
                                                  " feeds it another value than data set 0 (a blob is compiled once)");
      }
    }
  }
  if (!first) return Status(Code::kNotFound, "input '" + name + "' needs a binding, but no data set feeds it");
  OnnxBoundValue value;
  value.dtype = first->dtype;
  value.shape = first->shape;
  value.bytes = first->bytes;
  return value;
}

Verdict run_case(const std::string& case_dir, std::vector<std::string>* bound) {
  // As a user following the importer's advice: bind the one input it names to the value the
  // test feeds, and import again, until it imports or refuses for another reason.
  OnnxImportOptions options;
  std::optional<NodeTestCase> data;
  Result<Graph> graph = Status(Code::kInternal, "not imported");
  for (;;) {
    OnnxImportRefusal refusal;
    graph = import_onnx(case_dir + "/model.onnx", options, &refusal);
    if (graph.is_ok() || refusal.input_to_bind.empty() || options.bound_inputs.count(refusal.input_to_bind)) break;
    if (!data) {
      auto read = read_node_test_case(case_dir);
      if (!read.is_ok()) return fail("bad test data", read.status().message());
      data = std::move(read).value();
    }
    auto value = bound_value(*data, refusal.input_to_bind);
    if (!value.is_ok()) return fail("import refused", graph.status().message() + " [" + value.status().message() + "]");
    options.bound_inputs[refusal.input_to_bind] = std::move(value).value();
    bound->push_back(refusal.input_to_bind);
  }
  if (!graph.is_ok()) return fail("import refused", graph.status().message());
  auto blob = compile(*graph, nullptr);
  if (!blob.is_ok()) return fail("compile refused", blob.status().message());
  EngineConfig config;
  config.num_threads = 1;  // the driver runs one case per core
  auto engine = Engine::open_buffer(blob->data(), blob->size(), config);
  if (!engine.is_ok()) return fail("open refused", engine.status().message());
  if (!data) {
    auto read = read_node_test_case(case_dir);
    if (!read.is_ok()) return fail("bad test data", read.status().message());
    data = std::move(read).value();
  }
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
  std::vector<std::string> bound;  // inputs bound to the test's values (reported, so it stays visible)
  try {
    v = pock::conformance::run_case(argv[1], &bound);
  } catch (const std::exception& e) {
    v = {"exception", e.what()};
  } catch (...) {
    v = {"exception", "a non-standard exception"};
  }
  std::string with;
  for (const std::string& name : bound) with += (with.empty() ? " (bound: " : ", ") + name;
  if (!with.empty()) with += ")";
  if (v.category.empty()) {
    std::printf("PASS%s\n", with.c_str());
    return 0;
  }
  std::printf("FAIL %s: %s%s\n", v.category.c_str(), pock::conformance::one_line(v.message).c_str(), with.c_str());
  return 1;
}
