// Written cuda kernel cases of the GEMM and training families: linalg, linear_grad, training.
// f16/bf16 GEMMs: ref runs the widened inputs in f32 and the result is rounded to 11 (f16) or 8
// (bf16) bits, hence 2e-3 and 1e-2.
#pragma once
#include <vector>

#include "tests/cuda/case_operands.hpp"

namespace pock::test {

inline std::vector<DeviceCase> linalg_cases() {
  std::vector<DeviceCase> cases;
  cases.push_back({"MatMul", {rnd({3, 5, 7}, 1), rnd({3, 7, 4}, 2)}, {}});
  cases.push_back({"MatMul", {rnd({2, 1, 5, 7}, 3), rnd({3, 7, 4}, 4)}, {}});  // crossed broadcast
  cases.push_back({"MatMul", {rnd({2, 3, 7, 5}, 5), rnd({4, 7}, 6)}, {{"transpose_a", int64_t{1}}, {"transpose_b", int64_t{1}}}});
  cases.push_back({"Linear", {rnd({4, 3, 17}, 9), rnd({11, 17}, 10), rnd({11}, 11)}, {}});
  cases.push_back({"Linear", {rnd({8, 17}, 12), rnd({11, 17}, 13)}, {{"activation", std::string("relu6")}}});
  cases.push_back({"Linear", {rnd({8, 17}, 14), rnd({11, 17}, 15), rnd({11}, 16)}, {{"activation", std::string("relu")}}});
  for (DType half : {DType::kF16, DType::kBF16}) {
    const double tol = half == DType::kF16 ? 2e-3 : 1e-2;
    cases.push_back({"MatMul", {rnd({4, 8, 32}, 21, half), rnd({4, 32, 8}, 22, half)}, {}, tol});
    cases.push_back({"Linear", {rnd({8, 32}, 23, half), rnd({16, 32}, 24, half), rnd({16}, 25, half)}, {}, tol});
  }
  // compute "bf16" (recipe precision bf16) on f32 tensors: cuBLAS rounds the operands to bf16 on
  // the tensor cores, ref with kernels/bf16_round.h. Random operands agree to bf16's rounding; the
  // fixed ones tell bf16 products from exact f32 ones: 1 + 2^-8 rounds to 1 in bf16 (to nearest
  // even, and by truncation alike), so each output is 16 there and 16.0625 in exact f32.
  const Attrs bf16{{"compute", std::string("bf16")}};
  cases.push_back({"MatMul", {rnd({3, 8, 32}, 51), rnd({3, 32, 8}, 52)}, bf16, 1e-2});
  cases.push_back({"Linear", {rnd({8, 32}, 53), rnd({16, 32}, 54), rnd({16}, 55)}, bf16, 1e-2});
  const HostOperand just_over_one = operand_of(DType::kF32, {4, 16}, std::vector<float>(64, 1.00390625f));
  const HostOperand ones = operand_of(DType::kF32, {16, 16}, std::vector<float>(256, 1.0f));
  cases.push_back({"MatMul", {just_over_one, ones}, bf16, 1e-3});
  cases.push_back({"Linear", {just_over_one, ones}, bf16, 1e-3});
  return cases;
}

inline std::vector<DeviceCase> linear_grad_cases() {
  std::vector<DeviceCase> cases;
  cases.push_back({"LinearInputGrad", {rnd({2, 5, 11}, 17), rnd({11, 13}, 18)}, {}});
  cases.push_back({"LinearWeightGrad", {rnd({2, 5, 11}, 19), rnd({2, 5, 13}, 20)}, {}});
  for (DType half : {DType::kF16, DType::kBF16}) {
    const double tol = half == DType::kF16 ? 2e-3 : 1e-2;
    cases.push_back({"LinearInputGrad", {rnd({8, 16}, 26, half), rnd({16, 32}, 27, half)}, {}, tol});
    cases.push_back({"LinearWeightGrad", {rnd({8, 16}, 28, half), rnd({8, 32}, 29, half)}, {}, tol});
  }
  const Attrs bf16{{"compute", std::string("bf16")}};  // as in linalg_cases
  cases.push_back({"LinearInputGrad", {rnd({8, 16}, 56), rnd({16, 32}, 57)}, bf16, 1e-2});
  cases.push_back({"LinearWeightGrad", {rnd({8, 16}, 58), rnd({8, 32}, 59)}, bf16, 1e-2});
  return cases;
}

// Losses, accumulation, clipping and the optimizer updates (step 3 of a warm-up schedule; with a
// clip factor).
inline std::vector<DeviceCase> training_cases() {
  std::vector<DeviceCase> cases;
  cases.push_back({"MseLoss", {rnd({7, 9}, 30), rnd({7, 9}, 31)}, {}});
  cases.push_back({"MseLossGrad", {scalar(0.7f), rnd({7, 9}, 32), rnd({7, 9}, 33)}, {}});
  const HostOperand logits = rnd_in({6, 300}, 34, -5.0f, 5.0f);
  const HostOperand labels = i64s({6}, {3, -100, 0, 299, 17, -100});
  for (double smoothing : {0.0, 0.1}) {
    cases.push_back({"SoftmaxCrossEntropy", {logits, labels}, {{"label_smoothing", smoothing}}});
    cases.push_back({"SoftmaxCrossEntropyGrad", {scalar(1.3f), logits, labels}, {{"label_smoothing", smoothing}}});
  }
  cases.push_back({"SoftmaxCrossEntropy", {logits, i64s({6}, {-100, -100, -100, -100, -100, -100})}, {}});  // all ignored: 0
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
  const HostOperand v = rnd_in({6, 5}, 44, 0.0f, 0.01f);  // a second moment is >= 0
  cases.push_back({"AdamUpdate", {rnd({6, 5}, 45), rnd({6, 5}, 46), i64s({}, {3}), rnd({6, 5}, 47), v}, adam});
  Attrs accumulating = schedule;
  accumulating.set("accumulation", int64_t{2});  // step 3 of 2 micro-batches per update: nothing moves
  cases.push_back({"AdamUpdate", {rnd({6, 5}, 48), rnd({6, 5}, 49), i64s({}, {3}), rnd({6, 5}, 50), v, scalar(0.5f)}, accumulating});
  return cases;
}

}  // namespace pock::test
