// Every cuda kernel against the reference kernels on random inputs, through the backend ABI.
// Cases: written out for the ops whose inputs need a shape or meaning of their own (GEMMs,
// losses, optimizer updates); every other registered kernel gets generic cases — all inputs f32
// of one shape, arity 1 to 3, no attributes — wherever its schema accepts one. A kernel that no
// case reaches is listed (WARN), so a family added to cuda_families.def is covered or visibly not.
// Without a GPU every case says "skipped: no CUDA device".
// Tolerances: f32 kernels 1e-4 relative to |ref| + 1 — cuBLAS and the device reductions add in
// another order than ref's double sums (about 1e-6 on these sizes); an indexing or broadcasting
// mistake is O(0.1). f16/bf16 GEMMs: ref runs the widened inputs in f32, and the result is rounded
// to 11 (f16) or 8 (bf16) bits: 2e-3 and 1e-2.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <set>

#include "tests/cuda/device_op.hpp"

using namespace pock;
using namespace pock::test;

namespace {

HostOperand rnd(Shape shape, uint32_t seed, DType dtype = DType::kF32) { return random_operand(dtype, shape, seed); }
HostOperand i64s(Shape shape, std::vector<int64_t> v) { return operand_of(DType::kI64, shape, v); }
HostOperand scalar(float v) { return operand_of(DType::kF32, Shape{}, std::vector<float>{v}); }

std::vector<DeviceCase> written_cases() {
  std::vector<DeviceCase> cases;
  // linalg
  cases.push_back({"MatMul", {rnd({3, 5, 7}, 1), rnd({3, 7, 4}, 2)}, {}});
  cases.push_back({"MatMul", {rnd({2, 1, 5, 7}, 3), rnd({3, 7, 4}, 4)}, {}});  // crossed broadcast
  cases.push_back({"MatMul", {rnd({2, 3, 7, 5}, 5), rnd({4, 7}, 6)}, {{"transpose_a", int64_t{1}}, {"transpose_b", int64_t{1}}}});
  cases.push_back({"Linear", {rnd({4, 3, 17}, 9), rnd({11, 17}, 10), rnd({11}, 11)}, {}});
  cases.push_back({"Linear", {rnd({8, 17}, 12), rnd({11, 17}, 13)}, {{"activation", std::string("relu6")}}});
  cases.push_back({"Linear", {rnd({8, 17}, 14, DType::kF32), rnd({11, 17}, 15), rnd({11}, 16)}, {{"activation", std::string("relu")}}});
  cases.push_back({"LinearInputGrad", {rnd({2, 5, 11}, 17), rnd({11, 13}, 18)}, {}});
  cases.push_back({"LinearWeightGrad", {rnd({2, 5, 11}, 19), rnd({2, 5, 13}, 20)}, {}});
  for (DType half : {DType::kF16, DType::kBF16}) {
    const double tol = half == DType::kF16 ? 2e-3 : 1e-2;
    cases.push_back({"MatMul", {rnd({4, 8, 32}, 21, half), rnd({4, 32, 8}, 22, half)}, {}, tol});
    cases.push_back({"Linear", {rnd({8, 32}, 23, half), rnd({16, 32}, 24, half), rnd({16}, 25, half)}, {}, tol});
    cases.push_back({"LinearInputGrad", {rnd({8, 16}, 26, half), rnd({16, 32}, 27, half)}, {}, tol});
    cases.push_back({"LinearWeightGrad", {rnd({8, 16}, 28, half), rnd({8, 32}, 29, half)}, {}, tol});
  }
  // compute "bf16" (recipe precision bf16) on f32 tensors: cuBLAS rounds the operands to bf16 on
  // the tensor cores, ref with kernels/bf16_round.h. Random operands agree to bf16's rounding; the
  // fixed ones tell bf16 products from exact f32 ones: 1 + 2^-8 rounds to 1 in bf16 (to nearest
  // even, and by truncation alike), so each output is 16 there and 16.0625 in exact f32.
  const Attrs bf16{{"compute", std::string("bf16")}};
  cases.push_back({"MatMul", {rnd({3, 8, 32}, 51), rnd({3, 32, 8}, 52)}, bf16, 1e-2});
  cases.push_back({"Linear", {rnd({8, 32}, 53), rnd({16, 32}, 54), rnd({16}, 55)}, bf16, 1e-2});
  cases.push_back({"LinearInputGrad", {rnd({8, 16}, 56), rnd({16, 32}, 57)}, bf16, 1e-2});
  cases.push_back({"LinearWeightGrad", {rnd({8, 16}, 58), rnd({8, 32}, 59)}, bf16, 1e-2});
  const HostOperand just_over_one = operand_of(DType::kF32, {4, 16}, std::vector<float>(64, 1.00390625f));
  const HostOperand ones = operand_of(DType::kF32, {16, 16}, std::vector<float>(256, 1.0f));
  cases.push_back({"MatMul", {just_over_one, ones}, bf16, 1e-3});
  cases.push_back({"Linear", {just_over_one, ones}, bf16, 1e-3});
  // training: losses
  cases.push_back({"MseLoss", {rnd({7, 9}, 30), rnd({7, 9}, 31)}, {}});
  cases.push_back({"MseLossGrad", {scalar(0.7f), rnd({7, 9}, 32), rnd({7, 9}, 33)}, {}});
  const HostOperand logits = random_operand(DType::kF32, {6, 300}, 34, -5.0f, 5.0f);
  const HostOperand labels = i64s({6}, {3, -100, 0, 299, 17, -100});
  for (double smoothing : {0.0, 0.1}) {
    cases.push_back({"SoftmaxCrossEntropy", {logits, labels}, {{"label_smoothing", smoothing}}});
    cases.push_back({"SoftmaxCrossEntropyGrad", {scalar(1.3f), logits, labels}, {{"label_smoothing", smoothing}}});
  }
  cases.push_back({"SoftmaxCrossEntropy", {logits, i64s({6}, {-100, -100, -100, -100, -100, -100})}, {}});  // all ignored: 0
  // training: accumulation, clipping, updates (step 3 of a warm-up schedule; with a clip factor)
  cases.push_back({"AccumulateGrad", {rnd({5, 7}, 35), rnd({5, 7}, 36)}, {}});
  cases.push_back({"GlobalNormClipScale", {rnd({300, 7}, 37), rnd({5}, 38), rnd({2000}, 39)}, {{"max_norm", 1.0}, {"grad_scale", 0.5}}});
  cases.push_back({"GlobalNormClipScale", {rnd({3}, 40)}, {{"max_norm", 100.0}}});
  const Attrs schedule{{"lr", 0.05}, {"schedule", std::string("cosine")}, {"warmup_steps", int64_t{2}},
                       {"total_steps", int64_t{10}}, {"weight_decay", 0.01}};
  Attrs sgd = schedule;
  sgd.set("momentum", 0.9);
  sgd.set("nesterov", int64_t{1});
  // A partial-channel update: the gradient and the momentum cover the parameter's first 4 rows.
  cases.push_back({"SgdUpdate", {rnd({6, 5}, 41), rnd({4, 5}, 42), i64s({}, {3}), rnd({4, 5}, 43), scalar(0.6f)}, sgd});
  Attrs adam = schedule;
  adam.set("decoupled", int64_t{1});
  const HostOperand v = random_operand(DType::kF32, {6, 5}, 44, 0.0f, 0.01f);  // a second moment is >= 0
  cases.push_back({"AdamUpdate", {rnd({6, 5}, 45), rnd({6, 5}, 46), i64s({}, {3}), rnd({6, 5}, 47), v}, adam});
  Attrs accumulating = schedule;
  accumulating.set("accumulation", int64_t{2});  // step 3 of 2 micro-batches per update: nothing moves
  cases.push_back({"AdamUpdate", {rnd({6, 5}, 48), rnd({6, 5}, 49), i64s({}, {3}), rnd({6, 5}, 50), v, scalar(0.5f)}, accumulating});
  return cases;
}

// Generic cases for a kernel no written case names: f32 inputs of one shape, no attributes.
std::vector<DeviceCase> generic_cases(const std::string& op) {
  std::vector<DeviceCase> cases;
  for (int arity = 1; arity <= 3; ++arity) {
    DeviceCase c{op, {}, {}};
    for (int i = 0; i < arity; ++i) c.inputs.push_back(rnd({3, 5, 7}, 100 + static_cast<uint32_t>(i)));
    cases.push_back(c);
  }
  return cases;
}

// Runs one case on both backends; false when the case does not apply (schema or cuda declines).
bool check_case(CudaBackend& cuda, pock_backend_v1& ref, const DeviceCase& c, bool must_apply) {
  const int32_t score = cuda.score(c);
  if (score <= 0) {
    if (must_apply) FAIL("cuda does not claim " << c.op << " as the case describes it");
    return false;
  }
  const DType dtype = c.inputs.empty() ? DType::kF32 : c.inputs[0].dtype;
  const bool widen = dtype == DType::kF16 || dtype == DType::kBF16;
  const OpResults want = run_on_host(ref, c, widen);
  if (!want.status.is_ok()) {
    if (must_apply) FAIL("ref failed on the " << c.op << " case: " << want.status.message());
    return false;
  }
  const OpResults got = cuda.run(c);
  INFO(c.op << " on cuda: " << got.status.message());
  REQUIRE(got.status.is_ok());
  for (size_t i = 0; i < want.outputs.size(); ++i) {
    const std::string diff = compare_operand(got.outputs[i], want.outputs[i], c.tolerance);
    INFO(c.op << " output " << i << ": " << diff);
    CHECK(diff.empty());
  }
  for (size_t i = 0; i < want.inputs.size(); ++i) {
    const HostOperand& expected = want.inputs[i];
    const HostOperand actual = widen ? got.inputs[i].widened() : got.inputs[i];
    const std::string diff = compare_operand(actual, expected, c.tolerance);
    INFO(c.op << " input " << i << " after the run (in-place updates): " << diff);
    CHECK(diff.empty());
  }
  return true;
}

}  // namespace

TEST_CASE("every cuda kernel equals ref on random inputs", "[cuda]") {
  if (skip_without_gpu()) return;
  CudaBackend cuda;
  pock_backend_v1 ref{};
  ref.abi_version = POCK_BACKEND_ABI_VERSION;
  ref.struct_size = sizeof(pock_backend_v1);
  REQUIRE(fill_table_backend(&ref, "ref", &ref_kernels()) == POCK_OK);
  std::set<std::pair<std::string, int>> covered;  // (op, dtype)
  for (const DeviceCase& c : written_cases()) {
    check_case(cuda, ref, c, true);
    covered.insert({c.op, static_cast<int>(c.inputs[0].dtype)});
  }
  std::set<std::string> uncovered;
  for (const KernelDef* def : cuda_kernels().all()) {
    if (covered.count({def->op, static_cast<int>(def->dtype)})) continue;
    bool any = false;
    if (def->dtype == DType::kF32) {
      for (const DeviceCase& c : generic_cases(def->op)) any = check_case(cuda, ref, c, false) || any;
    }
    if (any) covered.insert({def->op, static_cast<int>(def->dtype)});
    else uncovered.insert(std::string(def->op) + " (" + dtype_name(def->dtype) + ")");
  }
  std::string list;
  for (const std::string& s : uncovered) list += " " + s;
  if (!uncovered.empty()) WARN("cuda kernels no case here reaches (test them in their family's tests):" << list);
  ref.destroy(ref.context);
}

TEST_CASE("a recorded run of ops is captured once and its replays compute each time", "[cuda]") {
  if (skip_without_gpu()) return;
  REQUIRE(setenv("POCK_CUDA_GRAPHS", "1", 1) == 0);
  CudaBackend cuda;  // reads the switch here
  unsetenv("POCK_CUDA_GRAPHS");
  pock_backend_v1& b = cuda.abi();
  auto graphs = reinterpret_cast<size_t (*)(void*)>(b.get_proc_address(b.context, kCudaGraphCountExtension));
  REQUIRE(graphs != nullptr);
  // acc += g, four times: op by op, then captured, then replayed twice.
  const DeviceCase c{"AccumulateGrad", {rnd({33, 7}, 70), rnd({33, 7}, 71)}, {}};
  auto described = describe_case(c, false);
  REQUIRE(described.is_ok());
  auto d = SpecOpDesc::describe(described->spec, described->spec.ops[0], 1);
  REQUIRE(d.is_ok());
  std::vector<void*> buffers;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    void* p = b.alloc(b.context, c.inputs[i].bytes.size(), 64);
    REQUIRE(p != nullptr);
    buffers.push_back(p);
    REQUIRE(b.copy(b.context, p, c.inputs[i].bytes.data(), c.inputs[i].bytes.size(), POCK_COPY_HOST_TO_DEVICE) == POCK_OK);
    d->input(i).data = p;
    d->input(i).memory_space = POCK_MEMORY_DEVICE;
  }
  void* handle = nullptr;
  REQUIRE(b.prepare_op(b.context, &d->desc(), &handle) == POCK_OK);
  auto sync = reinterpret_cast<pock_synchronize_fn>(b.get_proc_address(b.context, POCK_EXT_SYNCHRONIZE));
  for (int run = 0; run < 4; ++run) {
    REQUIRE(b.execute_op(b.context, handle, &d->desc()) == POCK_OK);
    INFO(b.last_error(b.context));
    REQUIRE(sync(b.context) == POCK_OK);
  }
  CHECK(graphs(b.context) == 1);
  HostOperand acc = c.inputs[0];
  REQUIRE(b.copy(b.context, acc.bytes.data(), buffers[0], acc.bytes.size(), POCK_COPY_DEVICE_TO_HOST) == POCK_OK);
  const std::vector<float> got = acc.floats(), a0 = c.inputs[0].floats(), g = c.inputs[1].floats();
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(a0[i] + 4.0f * g[i]).epsilon(1e-6).margin(1e-6));
  }
  b.release_op(b.context, handle);
  CHECK(graphs(b.context) == 0);  // releasing an op drops the graphs
  for (void* p : buffers) b.free(b.context, p);
}
