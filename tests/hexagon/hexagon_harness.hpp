// Test support for the Hexagon plugin: whether its DSP program was built (tests skip with a
// message when not), the plugin loaded as the runtime loads it, and one op run directly through a
// pock_backend_v1 — on the plugin with buffers from its alloc, or on kernels/ref with host
// buffers — so that every DSP kernel is checked against the reference without an engine.
#pragma once
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstring>
#include <string>
#include <vector>

#include "compiler/spec_op_desc.hpp"
#include "ir/op_schema.hpp"
#include "kernels/hexagon/pock_hexagon.h"
#include "runtime/plugin_loader.hpp"
#include "runtime/table_backend.hpp"
#include "support/backend_compare.hpp"

namespace pock::test {

inline const std::string kHexagonPlugin = POCK_HEXAGON_PLUGIN;

// False (with a printed reason, once per test program) when the DSP program could not be built
// here: no clang-14, ld.lld or qemu-hexagon.
inline bool hexagon_available() {
  static const bool available = [] {
    if (!POCK_HAVE_HEXAGON_DSP) {
      WARN("SKIPPED: the Hexagon DSP program was not built (clang-14, ld.lld and qemu-hexagon are needed)");
      return false;
    }
    return true;
  }();
  return available;
}

// The plugin, loaded through the runtime's loader.
inline BackendEntry load_hexagon() {
  BackendEntry e = load_backend_plugin(kHexagonPlugin);
  INFO(e.status.to_string());
  REQUIRE(e.status.is_ok());
  return e;
}

// The reference backend as a pock_backend_v1.
inline pock_backend_v1& ref_backend() {
  static pock_backend_v1 ref = [] {
    pock_backend_v1 b{};
    b.abi_version = POCK_BACKEND_ABI_VERSION;
    b.struct_size = sizeof(pock_backend_v1);
    REQUIRE(fill_table_backend(&b, "ref", &ref_kernels()) == POCK_OK);
    return b;
  }();
  return ref;
}

template <typename Fn>
Fn extension(pock_backend_v1& b, const char* name) {
  return reinterpret_cast<Fn>(b.get_proc_address ? b.get_proc_address(b.context, name) : nullptr);
}

inline pock_hexagon_counters counters_of(pock_backend_v1& b) {
  pock_hexagon_counters c{};
  auto fn = extension<pock_hexagon_counters_fn>(b, POCK_HEXAGON_EXT_COUNTERS);
  REQUIRE(fn != nullptr);
  fn(b.context, &c);
  return c;
}

// The plugin's process-wide hooks, from the copy of the library an engine loaded.
struct HexagonHooks {
  pock_hexagon_process_counters_fn counters = nullptr;
  pock_hexagon_process_inject_fault_fn inject_fault = nullptr;
  pock_hexagon_counters read() const {
    pock_hexagon_counters c{};
    counters(&c);
    return c;
  }
};

inline HexagonHooks hexagon_hooks() {
  void* library = dlopen(kHexagonPlugin.c_str(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(library != nullptr);
  HexagonHooks h;
  h.counters = reinterpret_cast<pock_hexagon_process_counters_fn>(dlsym(library, POCK_HEXAGON_PROCESS_COUNTERS));
  h.inject_fault = reinterpret_cast<pock_hexagon_process_inject_fault_fn>(dlsym(library, POCK_HEXAGON_PROCESS_INJECT_FAULT));
  dlclose(library);  // whoever loaded it keeps it loaded
  REQUIRE(h.counters != nullptr);
  REQUIRE(h.inject_fault != nullptr);
  return h;
}

// One op of `c` bound on `backend` with buffers in its memory (device) or the host's.
class DirectOp {
 public:
  DirectOp(pock_backend_v1& backend, const OpCase& c, bool device) : b_(backend), c_(c), device_(device) {
    std::vector<TensorType> in_types;
    for (const Operand& o : c.inputs) in_types.push_back(TensorType{o.dtype, o.omitted ? Shape{} : o.shape});
    std::vector<const TensorType*> ptrs;
    for (size_t i = 0; i < in_types.size(); ++i) ptrs.push_back(c.inputs[i].omitted ? nullptr : &in_types[i]);
    std::vector<TensorType> out_types;
    const Status inferred = infer_types(c.op, "node", ptrs, c.attrs, &out_types);
    INFO(inferred.to_string());
    REQUIRE(inferred.is_ok());
    OpSpec op{c.op, "node", {}, {}, c.attrs, ""};
    auto add = [&](const TensorType& t) {
      TensorSpec s;
      s.name = "t" + std::to_string(spec_.tensors.size());
      s.dtype = t.dtype;
      s.shape = t.shape;
      s.nbytes = static_cast<uint64_t>(numel(t.shape)) * dtype_size(t.dtype);
      spec_.tensors.push_back(s);
      return static_cast<int32_t>(spec_.tensors.size() - 1);
    };
    for (size_t i = 0; i < c.inputs.size(); ++i) op.inputs.push_back(c.inputs[i].omitted ? -1 : add(in_types[i]));
    for (const TensorType& t : out_types) op.outputs.push_back(add(t));
    spec_.ops.push_back(op);
    auto desc = SpecOpDesc::describe(spec_, spec_.ops[0], 1);
    REQUIRE(desc.is_ok());
    desc_ = std::make_unique<SpecOpDesc>(std::move(desc.value()));
    for (size_t i = 0; i < desc_->num_inputs(); ++i) place(desc_->input(i), &c.inputs[i]);
    for (size_t i = 0; i < desc_->num_outputs(); ++i) place(desc_->output(i), nullptr);
  }

  ~DirectOp() {
    if (handle_ && b_.release_op) b_.release_op(b_.context, handle_);
    for (void* p : device_buffers_) b_.free(b_.context, p);
  }

  int32_t score() const { return b_.supports_op(b_.context, &desc_->desc()); }

  // Prepares, runs, synchronizes; then every output and every updated input as floats (masks as 0/1).
  std::vector<std::vector<float>> run() {
    REQUIRE(score() > 0);
    REQUIRE(b_.prepare_op(b_.context, &desc_->desc(), &handle_) == POCK_OK);
    const pock_status s = b_.execute_op(b_.context, handle_, &desc_->desc());
    INFO(b_.last_error(b_.context));
    REQUIRE(s == POCK_OK);
    if (auto sync = extension<pock_synchronize_fn>(b_, POCK_EXT_SYNCHRONIZE)) {
      const pock_status synced = sync(b_.context);
      INFO(b_.last_error(b_.context));
      REQUIRE(synced == POCK_OK);
    }
    std::vector<std::vector<float>> out;
    for (size_t i = 0; i < desc_->num_outputs(); ++i) out.push_back(read(desc_->output(i)));
    for (int i : c_.updated_inputs) out.push_back(read(desc_->input(static_cast<size_t>(i))));
    return out;
  }

 private:
  void place(pock_tensor_desc& t, const Operand* value) {
    if (t.rank < 0) return;
    const size_t n = std::max<size_t>(t.nbytes, 1);
    if (device_) {
      t.data = b_.alloc(b_.context, n, 64);
      INFO(b_.last_error(b_.context));
      REQUIRE(t.data != nullptr);
      device_buffers_.push_back(t.data);
      t.memory_space = POCK_MEMORY_DEVICE;
    } else {
      host_buffers_.emplace_back(n);
      t.data = host_buffers_.back().data();
    }
    // Outputs start as garbage, so a kernel that skips an element is caught.
    std::vector<uint8_t> bytes(n, 0xA5);
    if (value) std::memcpy(bytes.data(), value->data(), value->nbytes());
    if (device_) {
      REQUIRE(b_.copy(b_.context, t.data, bytes.data(), t.nbytes, POCK_COPY_HOST_TO_DEVICE) == POCK_OK);
    } else {
      std::memcpy(t.data, bytes.data(), t.nbytes);
    }
  }

  std::vector<float> read(const pock_tensor_desc& t) {
    std::vector<uint8_t> bytes(t.nbytes);
    if (device_) {
      REQUIRE(b_.copy(b_.context, bytes.data(), t.data, t.nbytes, POCK_COPY_DEVICE_TO_HOST) == POCK_OK);
    } else {
      std::memcpy(bytes.data(), t.data, t.nbytes);
    }
    std::vector<float> v;
    if (t.dtype == POCK_F32) {
      v.resize(t.nbytes / sizeof(float));
      std::memcpy(v.data(), bytes.data(), t.nbytes);
    } else {
      for (uint8_t byte : bytes) v.push_back(byte);
    }
    return v;
  }

  pock_backend_v1& b_;
  const OpCase& c_;
  bool device_;
  ProgramSpec spec_;
  std::unique_ptr<SpecOpDesc> desc_;
  void* handle_ = nullptr;
  std::vector<void*> device_buffers_;
  std::vector<std::vector<uint8_t>> host_buffers_;  // a vector of vectors: data() stays put
};

// `c` on the DSP and on kernels/ref, every result within c.tolerance.
inline void check_dsp_against_ref(pock_backend_v1& hexagon, const OpCase& c) {
  INFO(describe(c));
  DirectOp dsp(hexagon, c, true);
  DirectOp ref(ref_backend(), c, false);
  compare_results(dsp.run(), ref.run(), c.tolerance);
}

}  // namespace pock::test
