// pockengine.Engine's native half: an open blob (runtime/EngineCore, what pock_engine wraps),
// numpy arrays in and out without copies where the layout allows, checkpoints, and `pockc
// inspect`'s report of the open engine. One call at a time: a second thread gets
// POCK_ERR_BUSY, as through the C API. Steps run with the GIL released.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "blob/reader.hpp"
#include "runtime/engine_core.hpp"
#include "runtime/mapped_file.hpp"
#include "status_error.hpp"
#include "tools/blob_contents.hpp"
#include "tools/inspect_report.hpp"

namespace nb = nanobind;

namespace pock::python {
namespace {

using HostArray = nb::ndarray<nb::c_contig, nb::device::cpu>;
using ReadOnlyHostArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

class Engine {
 public:
  Engine(nb::object source, int threads, std::string backend, std::vector<std::string> plugins, uint64_t memory_budget,
         bool rollback) {
    EngineOptions options;
    options.num_threads = threads;
    options.backend = std::move(backend);
    options.backend_plugins = std::move(plugins);
    options.memory_budget_bytes = memory_budget;
    options.rollback_on_failure = rollback;
    Result<std::unique_ptr<EngineCore>> core = Status(Code::kInternal, "not opened");
    if (nb::isinstance<nb::bytes>(source)) {
      // The engine reads its weights in place for as long as it lives, and kernels want them
      // aligned as in a mapped file: one aligned copy, owned here, instead of the bytes object.
      nb::bytes bytes = nb::borrow<nb::bytes>(source);
      throw_if_error(blob_copy_.allocate(bytes.size(), "the blob"));
      std::memcpy(blob_copy_.data(), bytes.c_str(), bytes.size());
      nb::gil_scoped_release release;
      core = EngineCore::open_buffer(blob_copy_.data(), bytes.size(), options);
    } else {
      path_ = nb::cast<std::string>(nb::str(source));
      nb::gil_scoped_release release;
      core = EngineCore::open_file(path_, options);
      if (!core.is_ok()) core = Status(core.status().code(), path_ + ": " + core.status().message());
    }
    core_ = value_or_throw(std::move(core));
    spec_ = value_or_throw(read_program_spec(core_->blob(), /*with_weights=*/false));
  }

  // {"functions": {name: {"inputs": [...], "outputs": [...], "loss": name or None}},
  //  "tensors": {name: {"dtype", "shape", "kind", "trainable"}} for function inputs, outputs and parameters}
  nb::dict signature() const {
    nb::dict tensors, functions;
    auto describe = [&](const TensorSpec& t) {
      nb::dict d;
      d["dtype"] = dtype_name(t.dtype);
      nb::list shape;
      for (int64_t dim : t.shape) shape.append(dim);
      d["shape"] = nb::tuple(shape);
      d["kind"] = tensor_kind_name(t.kind);
      d["trainable"] = t.trainable;
      d["host"] = t.space == 0;
      tensors[t.name.c_str()] = d;
    };
    auto names = [&](const std::vector<int32_t>& ids) {
      nb::list out;
      for (int32_t id : ids) {
        const TensorSpec& t = spec_.tensors[static_cast<size_t>(id)];
        describe(t);
        out.append(t.name);
      }
      return out;
    };
    for (const FunctionSpec& f : spec_.functions) {
      nb::dict d;
      d["inputs"] = names(f.inputs);
      d["outputs"] = names(f.outputs);
      d["loss"] = f.loss >= 0 ? nb::object(nb::str(spec_.tensors[static_cast<size_t>(f.loss)].name.c_str())) : nb::none();
      functions[f.name.c_str()] = d;
    }
    nb::list parameters;
    for (const TensorSpec& t : spec_.tensors) {
      if (t.kind != TensorKind::kParameter) continue;
      describe(t);
      parameters.append(t.name);
    }
    nb::dict out;
    out["functions"] = functions;
    out["parameters"] = parameters;
    out["tensors"] = tensors;
    return out;
  }

  void set_input(const std::string& name, ReadOnlyHostArray array) {
    Guard guard(*this);
    check_itemsize(name, array.itemsize());
    throw_if_error(core_->set_input(name, array.data(), array.nbytes()));
  }
  void get_output(const std::string& name, HostArray out) {
    Guard guard(*this);
    check_itemsize(name, out.itemsize());
    throw_if_error(core_->get_output(name, out.data(), out.nbytes()));
  }
  void get_parameter(const std::string& name, HostArray out) {
    Guard guard(*this);
    check_itemsize(name, out.itemsize());
    throw_if_error(core_->get_parameter(name, out.data(), out.nbytes()));
  }
  void set_parameter(const std::string& name, ReadOnlyHostArray array) {
    Guard guard(*this);
    check_itemsize(name, array.itemsize());
    throw_if_error(core_->set_parameter(name, array.data(), array.nbytes()));
  }

  // A numpy array over the engine's own memory for an input (writable: fill it in place instead
  // of set_input) or an output (read-only: the next run overwrites it). Keeps the engine alive.
  nb::object view(const std::string& name, bool writable) {
    Guard guard(*this);
    const TensorSpec* t = find(name);
    if (!t) throw StatusError(Status(Code::kNotFound, "no tensor named '" + name + "'"));
    const bool input = t->kind == TensorKind::kInput;
    if (writable != input) {
      throw StatusError(Status(Code::kInvalidArgument, "'" + name + "' is a " + tensor_kind_name(t->kind) + ": " +
                                                           (writable ? "only inputs have writable views"
                                                                     : "read-only views are of outputs; inputs have writable ones")));
    }
    if (!input && t->storage == Storage::kArena) {
      throw StatusError(Status(Code::kInvalidArgument, "'" + name + "' is an intermediate whose memory is reused; "
                                                           "mark it as an output when compiling"));
    }
    void* data = core_->tensor_data(name);
    if (!data) {
      throw StatusError(Status(Code::kInvalidArgument, "'" + name + "' lives in a device's memory: no view of it; "
                                                           "copy it with output() / set it with set_input()"));
    }
    std::vector<size_t> shape(t->shape.begin(), t->shape.end());
    const nb::dlpack::dtype dtype = dlpack_dtype(t->dtype);
    nb::object owner = nb::find(this);
    if (writable) return nb::ndarray<nb::numpy>(data, shape.size(), shape.data(), owner, nullptr, dtype).cast();
    return nb::ndarray<nb::numpy, nb::ro>(data, shape.size(), shape.data(), owner, nullptr, dtype).cast();
  }

  void infer() { run_locked([&] { return core_->infer(); }); }
  void run(const std::string& function) { run_locked([&] { return core_->run_function(function); }); }
  float train_step() {
    float loss = 0;
    run_locked([&] { return core_->train_step(&loss); });
    return loss;
  }
  float eval_step() {
    float loss = 0;
    run_locked([&] { return core_->eval_step(&loss); });
    return loss;
  }
  void save_checkpoint(const std::string& path) { run_locked([&] { return core_->save_checkpoint(path); }); }
  void load_checkpoint(const std::string& path) { run_locked([&] { return core_->load_checkpoint(path); }); }

  int64_t step() const { return core_->step(); }
  bool can_train() const { return core_->can_train(); }
  bool has_function(const std::string& name) const { return core_->has_function(name); }
  const std::string& path() const { return path_; }

  nb::list backends() {
    Guard guard(*this);
    nb::list out;
    for (const BackendEntry& e : core_->backend_entries()) {
      nb::dict d;
      d["name"] = e.name;
      d["library"] = e.library;
      d["usable"] = e.status.is_ok();
      d["error"] = e.status.is_ok() ? std::string() : e.status.to_string();
      d["ops_bound"] = e.backend ? core_->ops_bound_to(e.backend.get()) : 0;
      out.append(d);
    }
    return out;
  }

  // `pockc inspect --json` of this blob, bound as this engine bound it.
  std::string inspect_json() {
    Guard guard(*this);
    tools::BlobContents contents = value_or_throw(tools::blob_contents_of(core_->blob()));
    return tools::inspect_report(path_.empty() ? "<memory>" : path_, contents, tools::binding_of(*core_)).dump();
  }

 private:
  // Serializes calls: a second thread inside a call gets POCK_ERR_BUSY, not a wait.
  class Guard {
   public:
    explicit Guard(Engine& e) : lock_(e.busy_, std::try_to_lock) {
      if (!lock_.owns_lock()) {
        throw StatusError(Status(Code::kBusy, "another thread is inside a call on this engine: nothing was done"));
      }
    }

   private:
    std::unique_lock<std::mutex> lock_;
  };

  template <typename Fn>
  void run_locked(Fn&& fn) {
    Guard guard(*this);
    Status s;
    {
      nb::gil_scoped_release release;
      s = fn();
    }
    throw_if_error(s);
  }

  const TensorSpec* find(const std::string& name) const {
    for (const TensorSpec& t : spec_.tensors) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }

  // The engine checks byte counts; an element size that differs (float64 for float32) would pass
  // that check with the wrong element count, so it is checked here.
  void check_itemsize(const std::string& name, size_t itemsize) const {
    const TensorSpec* t = find(name);
    if (t && itemsize != dtype_size(t->dtype)) {
      throw StatusError(Status(Code::kShapeMismatch, "'" + name + "' is " + dtype_name(t->dtype) + " (" +
                                                         std::to_string(dtype_size(t->dtype)) + " bytes an element), the array has " +
                                                         std::to_string(itemsize) + " bytes an element"));
    }
  }

  static nb::dlpack::dtype dlpack_dtype(DType dt) {
    using nb::dlpack::dtype_code;
    auto make = [](dtype_code code, int bits) {
      return nb::dlpack::dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
    };
    switch (dt) {
      case DType::kF32: return make(dtype_code::Float, 32);
      case DType::kF16: return make(dtype_code::Float, 16);
      case DType::kBF16: return make(dtype_code::UInt, 16);  // numpy has no bfloat16: the raw bits
      case DType::kI32: return make(dtype_code::Int, 32);
      case DType::kI64: return make(dtype_code::Int, 64);
      case DType::kI8: return make(dtype_code::Int, 8);
      case DType::kU8: return make(dtype_code::UInt, 8);
      case DType::kBool: return make(dtype_code::Bool, 8);
      case DType::kF64: return make(dtype_code::Float, 64);
      case DType::kI16: return make(dtype_code::Int, 16);
      case DType::kU16: return make(dtype_code::UInt, 16);
      case DType::kU32: return make(dtype_code::UInt, 32);
      case DType::kU64: return make(dtype_code::UInt, 64);
    }
    return make(dtype_code::UInt, 8);
  }

  AlignedBuffer blob_copy_;  // the blob, when opened from bytes (before core_: it outlives the engine)
  std::unique_ptr<EngineCore> core_;
  ProgramSpec spec_;  // program without weights: names, shapes, dtypes, functions
  std::string path_;  // "" when opened from bytes
  std::mutex busy_;
};

}  // namespace

void bind_engine(nb::module_& m) {
  nb::class_<Engine>(m, "Engine", "An open blob (pockengine.Engine is the friendly form).")
      .def(nb::init<nb::object, int, std::string, std::vector<std::string>, uint64_t, bool>(), nb::arg("source"),
           nb::arg("threads"), nb::arg("backend"), nb::arg("plugins"), nb::arg("memory_budget"), nb::arg("rollback"))
      .def("signature", &Engine::signature)
      .def("set_input", &Engine::set_input, nb::arg("name"), nb::arg("array"))
      .def("get_output", &Engine::get_output, nb::arg("name"), nb::arg("out").noconvert())
      .def("get_parameter", &Engine::get_parameter, nb::arg("name"), nb::arg("out").noconvert())
      .def("set_parameter", &Engine::set_parameter, nb::arg("name"), nb::arg("array"))
      .def("view", &Engine::view, nb::arg("name"), nb::arg("writable"))
      .def("infer", &Engine::infer)
      .def("run", &Engine::run, nb::arg("function"))
      .def("train_step", &Engine::train_step)
      .def("eval_step", &Engine::eval_step)
      .def("save_checkpoint", &Engine::save_checkpoint, nb::arg("path"))
      .def("load_checkpoint", &Engine::load_checkpoint, nb::arg("path"))
      .def("backends", &Engine::backends)
      .def("inspect_json", &Engine::inspect_json)
      .def("has_function", &Engine::has_function, nb::arg("name"))
      .def_prop_ro("step", &Engine::step)
      .def_prop_ro("can_train", &Engine::can_train)
      .def_prop_ro("path", &Engine::path);
}

}  // namespace pock::python
