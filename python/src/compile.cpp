// pockengine.compile's native half: a model (a file pockc reads, or ONNX bytes from
// torch.onnx.export) plus a recipe become a blob in memory, through the same entry points as
// `pockc compile` (tools/model_loader, pock::compile).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "pock/compiler/compiler.hpp"
#include "status_error.hpp"
#include "tools/model_loader.hpp"

#ifdef POCK_HAVE_ONNX
#include "pock/compiler/onnx.hpp"
#include "tools/bind_arg.hpp"
#endif

namespace nb = nanobind;

namespace pock::python {
namespace {

// ONNX bytes in memory: what torch.onnx.export writes into a BytesIO.
Result<Graph> import_onnx_in_memory(const void* data, size_t size, const std::vector<std::string>& input_shapes,
                                    const std::vector<std::string>& binds, int64_t batch_size) {
#ifdef POCK_HAVE_ONNX
  OnnxImportOptions onnx;
  onnx.batch_size = batch_size;
  for (const std::string& arg : input_shapes) POCK_RETURN_IF_ERROR(parse_input_shape_arg(arg, &onnx));
  for (const std::string& arg : binds) POCK_RETURN_IF_ERROR(tools::add_bind_arg(arg, &onnx));
  return import_onnx_bytes(data, size, onnx);
#else
  (void)data, (void)size, (void)input_shapes, (void)binds, (void)batch_size;
  return Status(Code::kUnsupportedOp, "this pockengine was built without the ONNX frontend (POCK_WITH_ONNX=OFF)");
#endif
}

// Returns (blob bytes, the compiler's report as JSON text).
nb::tuple compile_model(nb::object model, std::optional<std::string> recipe_json, std::vector<std::string> input_shapes,
                        int64_t kv_cache, int64_t num_labels, std::string backend, std::vector<std::string> backend_plugins,
                        bool optimize, std::optional<bool> reorder_updates, bool memory_schedule, bool layout, bool fold_frozen_scales,
                        std::string profile, uint64_t memory_budget, bool expose_gradients, std::vector<std::string> binds) {
  Recipe recipe;
  if (recipe_json) {
    auto parsed = parse_recipe(*recipe_json);
    if (!parsed.is_ok()) throw StatusError(Status(parsed.status().code(), "recipe: " + parsed.status().message()));
    recipe = std::move(parsed.value());
  }
  CompileOptions options;
  options.backend = std::move(backend);
  options.backend_plugins = std::move(backend_plugins);
  options.optimize = optimize;
  options.reorder_updates = reorder_updates;
  options.memory_schedule = memory_schedule;
  options.layout = layout;
  options.fold_frozen_scales = fold_frozen_scales;
  options.profile_path = std::move(profile);
  options.memory_budget_bytes = memory_budget;
  options.expose_gradients = expose_gradients;
  const int64_t batch_size = recipe_json ? recipe.batch_size : 0;

  Result<std::vector<uint8_t>> blob = std::vector<uint8_t>{};
  CompileReport report;
  auto build = [&](Result<Graph> graph) {
    if (!graph.is_ok()) return Result<std::vector<uint8_t>>(graph.status());
    return compile(graph.value(), recipe_json ? &recipe : nullptr, options, &report);
  };
  if (nb::isinstance<nb::bytes>(model)) {
    nb::bytes bytes = nb::borrow<nb::bytes>(model);
    const void* data = bytes.c_str();
    const size_t size = bytes.size();
    nb::gil_scoped_release release;
    blob = build(import_onnx_in_memory(data, size, input_shapes, binds, batch_size));
  } else {
    tools::ModelLoadOptions load;
    load.input_shapes = std::move(input_shapes);
    load.binds = std::move(binds);
    load.batch_size = batch_size;
    load.kv_cache = kv_cache;
    load.num_labels = num_labels;
    const std::string path = nb::cast<std::string>(nb::str(model));
    nb::gil_scoped_release release;
    blob = build(tools::load_model(path, load));
  }
  std::vector<uint8_t> bytes = value_or_throw(std::move(blob));
  return nb::make_tuple(nb::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size()), report.json);
}

}  // namespace

void bind_compile(nb::module_& m) {
  m.def("compile_model", &compile_model, nb::arg("model"), nb::arg("recipe_json").none(), nb::arg("input_shapes"),
        nb::arg("kv_cache"), nb::arg("num_labels"), nb::arg("backend"), nb::arg("backend_plugins"), nb::arg("optimize"),
        nb::arg("reorder_updates"), nb::arg("memory_schedule"), nb::arg("layout"), nb::arg("fold_frozen_scales"),
        nb::arg("profile"), nb::arg("memory_budget"), nb::arg("expose_gradients"), nb::arg("binds"),
        "Compiles a model file (str) or ONNX bytes, with a recipe's JSON text or None (inference only).\n"
        "Returns (blob bytes, the compiler's report as JSON text). pockengine.compile is the friendly form.");
}

}  // namespace pock::python
