// Bad input that only the device sees (indices, labels, positions that live in device memory and
// that run() does not wait for) fails the op at synchronize with ref's message, through the error
// site its kernel registered at prepare (kernels/cuda/device_error.hpp); the next good run
// succeeds. Without a GPU every case says "skipped: no CUDA device".
#include <catch2/catch.hpp>

#include "tests/cuda/device_op.hpp"

using namespace pock;
using namespace pock::test;

namespace {

HostOperand rnd(Shape shape, uint32_t seed) { return random_operand(DType::kF32, std::move(shape), seed); }
HostOperand i64s(Shape shape, std::vector<int64_t> v) { return operand_of(DType::kI64, std::move(shape), v); }
// q8_0 rows of 32 values (34 bytes: a zero half scale, then the values): every value decodes to 0.
HostOperand q8_rows(int64_t rows) { return operand_of(DType::kU8, {rows, 34}, std::vector<uint8_t>(rows * 34, 0)); }

struct BadInput {
  DeviceCase bad, good;       // the same op, one input out of its range and then within it
  const char* message;        // what ref says of it
};

std::vector<BadInput> bad_inputs() {
  const Attrs q8{{"format", std::string("q8_0")}, {"in_features", int64_t{32}}};
  const Attrs grad{{"axis", int64_t{0}}, {"shape", std::vector<int64_t>{4, 3}}};
  auto attention = [](int64_t position) {
    return DeviceCase{"CachedAttention",
                      {rnd({1, 2, 2, 8}, 1), rnd({1, 1, 2, 8}, 2), rnd({1, 1, 2, 8}, 3), rnd({1, 1, 4, 8}, 4),
                       rnd({1, 1, 4, 8}, 5), i64s({1}, {position})},
                      {}};
  };
  return {
      {{"SoftmaxCrossEntropy", {rnd({3, 4}, 10), i64s({3}, {1, 4, 0})}, {}},
       {"SoftmaxCrossEntropy", {rnd({3, 4}, 11), i64s({3}, {1, 3, 0})}, {}},
       "outside [0, 4) and is not ignore_index"},
      {{"Gather", {rnd({5, 3}, 20), i64s({2}, {1, 5})}, {}},
       {"Gather", {rnd({5, 3}, 20), i64s({2}, {1, -5})}, {}},
       "out of range [-5, 5) for axis 0"},
      {{"GatherQ", {q8_rows(4), i64s({2}, {0, -5})}, q8}, {"GatherQ", {q8_rows(4), i64s({2}, {0, -4})}, q8},
       "out of range [-4, 4)"},
      {{"GatherGrad", {rnd({2, 3}, 30), i64s({2}, {0, 7})}, grad},
       {"GatherGrad", {rnd({2, 3}, 30), i64s({2}, {0, 3})}, grad},
       "out of range for axis extent 4"},
      {attention(3), attention(2), "new rows do not fit the KV cache of 4"},
      {{"LinearQCrossEntropy", {rnd({3, 32}, 40), q8_rows(4), i64s({3}, {1, 4, 0})}, q8},
       {"LinearQCrossEntropy", {rnd({3, 32}, 40), q8_rows(4), i64s({3}, {1, -100, 0})}, q8},
       "outside [0, 4) and is not ignore_index"},
  };
}

}  // namespace

TEST_CASE("device-side bad input fails the op at synchronize with ref's message, naming it", "[cuda]") {
  if (skip_without_gpu()) return;
  CudaBackend cuda;
  for (const BadInput& c : bad_inputs()) {
    const OpResults r = cuda.run(c.bad);
    INFO(c.bad.op << ": " << r.status.message());
    CHECK(r.status.code() == Code::kInvalidArgument);
    CHECK(r.status.message().find(c.message) != std::string::npos);
    CHECK(r.status.message().find(c.bad.op) != std::string::npos);
    // The error does not stick: the next run of a good case succeeds.
    const OpResults fine = cuda.run(c.good);
    INFO(fine.status.message());
    CHECK(fine.status.is_ok());
  }
}
