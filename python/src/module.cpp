// pockengine._pockengine: the native module under python/pockengine (the Python layer users
// import). Errors cross as pockengine.Error subclasses, one per pock_status code, built by
// pockengine/_errors.py from the code and the runtime's message.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "bindings.hpp"
#include "pock/pock.h"
#include "status_error.hpp"
#include "tools/blob_contents.hpp"
#include "tools/inspect_report.hpp"
#include "tools/onnx_export.hpp"

namespace nb = nanobind;

namespace pock::python {
namespace {

void raise_status(const Status& status) {
  nb::object error = nb::module_::import_("pockengine._errors")
                         .attr("error_from_status")(static_cast<int>(status.code()), status.message());
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
}

// `pockc inspect --json PATH`: the blob read from its file, bound as an engine opened with
// `backend` (and `plugins`) would bind it here; a blob that cannot open here is still inspected.
std::string inspect_file(const std::string& path, const std::string& backend, const std::vector<std::string>& plugins) {
  nb::gil_scoped_release release;
  tools::BlobContents contents = value_or_throw(tools::read_blob_contents(path));
  return tools::inspect_report(path, contents, tools::bind_blob(path, backend, plugins)).dump();
}

#ifdef POCK_HAVE_ONNX
// Engine.export_onnx: what `pockc export CKPT --onnx SOURCE -o OUT` writes, from the engine's
// checkpoint (the trainable parameters and the BatchNorm statistics that training moved).
nb::dict export_onnx(const std::string& checkpoint, const std::string& source, const std::string& out,
                     bool external_data, bool keep_training_form) {
  tools::OnnxExportReport report;
  {
    nb::gil_scoped_release release;
    tools::TrainedWeights weights = value_or_throw(tools::read_checkpoint_weights(checkpoint));
    tools::OnnxSource model = value_or_throw(tools::OnnxSource::open(source));
    throw_if_error(model.match(&weights, &report));
    throw_if_error(model.write(out, tools::OnnxExportOptions{external_data, keep_training_form}, &report));
  }
  nb::dict d;
  d["replaced"] = nb::cast(report.replaced);
  d["unchanged"] = nb::cast(report.unchanged);
  d["kept"] = report.kept;
  d["external_data"] = report.external_data;
  d["inference_form_nodes"] = report.inference_form_nodes;
  return d;
}
#endif

}  // namespace
}  // namespace pock::python

NB_MODULE(_pockengine, m) {
  using namespace pock::python;
  m.doc() = "PockEngine's native module; import pockengine instead.";
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const StatusError& e) {
      raise_status(e.status());
    }
  });
  m.def("status_string", [](int code) { return std::string(pock_status_string(static_cast<pock_status>(code))); },
        nb::arg("code"), "pock_status_string(code): the runtime's short name of a status code.");
  m.def("inspect_file", &inspect_file, nb::arg("path"), nb::arg("backend"), nb::arg("plugins"),
        "`pockc inspect --json PATH` as JSON text.");
#ifdef POCK_HAVE_ONNX
  m.def("export_onnx", &export_onnx, nb::arg("checkpoint"), nb::arg("source"), nb::arg("out"), nb::arg("external_data"),
        nb::arg("keep_training_form"), "`pockc export CHECKPOINT --onnx SOURCE -o OUT`; returns what was replaced.");
#endif
  m.attr("api_version") = POCK_API_VERSION;
  bind_compile(m);
  bind_engine(m);
}
