// Test support for tests/cuda_logic: runs one reference kernel (kernels/ref) on host buffers
// through its KernelDef — parse at prepare, run, release — so that the cuda logic headers can be
// compared with the oracle without an engine or a GPU.
#pragma once
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "runtime/table_backend.hpp"

namespace pock::test {

class RefOp {
 public:
  explicit RefOp(std::string op) : op_(std::move(op)) {}

  // Tensors are the caller's buffers (updated in place where the op does).
  RefOp& input(pock_dtype dtype, std::vector<int64_t> dims, void* data) { return add(inputs_, dtype, dims, data); }
  RefOp& output(pock_dtype dtype, std::vector<int64_t> dims, void* data) { return add(outputs_, dtype, dims, data); }
  RefOp& real(const char* name, double v) { return attr(name, POCK_ATTR_FLOAT).f = v, *this; }
  RefOp& integer(const char* name, int64_t v) { return attr(name, POCK_ATTR_INT).i = v, *this; }
  RefOp& text(const char* name, const char* v) { return attr(name, POCK_ATTR_STRING).s = v, *this; }

  const pock_op_desc& desc() {
    desc_ = pock_op_desc{};
    desc_.op = op_.c_str();
    desc_.name = "test";
    desc_.num_inputs = static_cast<int32_t>(inputs_.size());
    desc_.inputs = inputs_.data();
    desc_.num_outputs = static_cast<int32_t>(outputs_.size());
    desc_.outputs = outputs_.data();
    desc_.num_attrs = static_cast<int32_t>(attrs_.size());
    desc_.attrs = attrs_.data();
    desc_.num_threads = 1;
    return desc_;
  }

  // Runs ref's kernel once; REQUIREs success.
  void run() {
    const pock_op_desc& d = desc();
    const KernelDef* def = ref_kernels().find(op_, kernel_key_dtype(d));
    REQUIRE(def != nullptr);
    void* state = nullptr;
    if (def->prepare) REQUIRE(def->prepare(d, &state).is_ok());
    const Status s = def->run(KernelCall{&d, state});
    if (def->release) def->release(state);
    INFO(s.message());
    REQUIRE(s.is_ok());
  }

 private:
  pock_attr& attr(const char* name, pock_attr_kind kind) {
    pock_attr a{};
    a.name = name;
    a.kind = kind;
    attrs_.push_back(a);
    return attrs_.back();
  }
  RefOp& add(std::vector<pock_tensor_desc>& list, pock_dtype dtype, const std::vector<int64_t>& dims, void* data) {
    pock_tensor_desc t{};
    t.dtype = dtype;
    t.rank = static_cast<int32_t>(dims.size());
    size_t n = 1;
    for (size_t i = 0; i < dims.size(); ++i) {
      t.dims[i] = dims[i];
      n *= static_cast<size_t>(dims[i]);
    }
    t.data = data;
    t.nbytes = n * (dtype == POCK_I64 ? 8 : 4);
    list.push_back(t);
    return *this;
  }

  std::string op_;
  std::vector<pock_tensor_desc> inputs_, outputs_;
  std::vector<pock_attr> attrs_;
  pock_op_desc desc_{};
};

}  // namespace pock::test
