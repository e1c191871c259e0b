// The fine-tune API in C++ code: ModelBuilder writes a Graph with one typed method per op of
// docs/ops.md, so a model reads like its PyTorch forward():
//
//   pock::ModelBuilder b;
//   auto x = b.input("image", pock::DType::kF32, {8, 784});
//   auto w1 = b.parameter_kaiming_uniform("fc1.weight", {128, 784}, /*seed=*/1);
//   auto b1 = b.parameter_kaiming_uniform("fc1.bias", {128}, /*seed=*/2, /*fan_in=*/784);
//   auto h = b.relu(b.named("fc1").linear(x, w1, b1));
//   ...
//   b.output(logits, "logits");
//   POCK_ASSIGN_OR_RETURN(pock::Graph g, b.finish());
//
// Errors are sticky: the first failure (a shape mismatch, a bad attribute) is kept, every later
// call returns kNoTensor without touching the graph, and status() / finish() report it. Model code
// therefore needs no check after each line.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pock/compiler/graph.hpp"

namespace pock {

struct Conv2dOptions {
  std::vector<int64_t> strides = {1, 1};
  std::vector<int64_t> pads = {0, 0, 0, 0};  // top, left, bottom, right
  std::vector<int64_t> dilations = {1, 1};
  int64_t groups = 1;
};

struct Pool2dOptions {
  std::vector<int64_t> kernel;               // [kh, kw]
  std::vector<int64_t> strides;              // empty: the kernel
  std::vector<int64_t> pads = {0, 0, 0, 0};  // top, left, bottom, right
  bool ceil_mode = false;
  bool count_include_pad = false;            // AvgPool2d only
};

struct RopeOptions {
  double theta = 10000.0;
  bool interleaved = false;  // false: rotate-half (LLaMA / NeoX) form
  bool inverse = false;      // rotate by -angle
};

struct BatchNormTrainOutputs {
  TensorId y = kNoTensor, saved_mean = kNoTensor, saved_invstd = kNoTensor;
};
struct LayerNormOutputs {
  TensorId y = kNoTensor, mean = kNoTensor, invstd = kNoTensor;
};
struct RMSNormOutputs {
  TensorId y = kNoTensor, invrms = kNoTensor;
};
struct DropoutOutputs {
  TensorId y = kNoTensor, mask = kNoTensor;
};

class ModelBuilder {
 public:
  ModelBuilder() = default;
  explicit ModelBuilder(Graph graph) : graph_(std::move(graph)) {}

  // ---- state of the build ----
  const Status& status() const { return status_; }
  bool ok() const { return status_.is_ok(); }
  const Graph& graph() const { return graph_; }
  // The finished graph, or the first error. Leaves the builder empty.
  Result<Graph> finish();
  // Shape / dtype of a tensor; an empty shape and f32 for kNoTensor (after an error).
  const Shape& shape(TensorId id) const;
  DType dtype(TensorId id) const;
  // Names the next node (for messages, and "<name>:<i>" outputs). Returns *this to chain:
  // b.named("fc1").linear(x, w, bias).
  ModelBuilder& named(std::string node_name);

  // ---- tensors ----
  TensorId input(std::string name, DType dtype, Shape shape);
  // An f32 parameter; `values` must hold numel(shape) floats.
  TensorId parameter(std::string name, Shape shape, const std::vector<float>& values);
  TensorId parameter_fill(std::string name, Shape shape, float value);
  // Uniform in [-bound, bound), from a portable counter-based generator: the same seed gives the
  // same values on every platform and standard library.
  TensorId parameter_uniform(std::string name, Shape shape, double bound, uint64_t seed);
  // PyTorch's default for Linear and Conv2d weights and biases: uniform with bound 1/sqrt(fan_in).
  // fan_in <= 0: product of shape[1:] (the weight's own fan-in; pass it explicitly for a bias).
  TensorId parameter_kaiming_uniform(std::string name, Shape shape, uint64_t seed, int64_t fan_in = 0);
  // Mutable non-trainable state (BatchNorm running statistics), f32.
  TensorId state(std::string name, Shape shape, const std::vector<float>& values);
  // A cache a function keeps between runs (a KV cache), f32, zero when an engine opens, not part
  // of checkpoints (TensorDesc::cache).
  TensorId cache(std::string name, Shape shape);
  TensorId constant(std::string name, Shape shape, const std::vector<float>& values);
  TensorId constant_i64(std::string name, Shape shape, const std::vector<int64_t>& values);
  // Marks a model output (what infer() returns), renamed to `name` when given.
  void output(TensorId id, std::string name = {});

  // ---- any op by name: the escape hatch for ops without a method. kNoTensor marks an omitted
  // optional input. ----
  std::vector<TensorId> op(const std::string& op_name, std::vector<TensorId> inputs, Attrs attrs = {});
  TensorId op1(const std::string& op_name, std::vector<TensorId> inputs, Attrs attrs = {});

  // ---- elementwise ----
  TensorId add(TensorId a, TensorId b) { return op1("Add", {a, b}); }
  TensorId sub(TensorId a, TensorId b) { return op1("Sub", {a, b}); }
  TensorId mul(TensorId a, TensorId b) { return op1("Mul", {a, b}); }
  TensorId div(TensorId a, TensorId b) { return op1("Div", {a, b}); }
  TensorId pow(TensorId a, TensorId b) { return op1("Pow", {a, b}); }
  TensorId maximum(TensorId a, TensorId b) { return op1("Maximum", {a, b}); }
  TensorId minimum(TensorId a, TensorId b) { return op1("Minimum", {a, b}); }
  TensorId neg(TensorId x) { return op1("Neg", {x}); }
  TensorId exp(TensorId x) { return op1("Exp", {x}); }
  TensorId log(TensorId x) { return op1("Log", {x}); }
  TensorId sqrt(TensorId x) { return op1("Sqrt", {x}); }
  TensorId rsqrt(TensorId x) { return op1("Rsqrt", {x}); }
  TensorId abs(TensorId x) { return op1("Abs", {x}); }
  TensorId reciprocal(TensorId x) { return op1("Reciprocal", {x}); }
  TensorId square(TensorId x) { return op1("Square", {x}); }
  TensorId relu(TensorId x) { return op1("Relu", {x}); }
  TensorId relu6(TensorId x) { return op1("Relu6", {x}); }
  TensorId sigmoid(TensorId x) { return op1("Sigmoid", {x}); }
  TensorId tanh(TensorId x) { return op1("Tanh", {x}); }
  TensorId silu(TensorId x) { return op1("Silu", {x}); }
  TensorId hard_swish(TensorId x) { return op1("HardSwish", {x}); }
  TensorId hard_sigmoid(TensorId x) { return op1("HardSigmoid", {x}); }
  TensorId leaky_relu(TensorId x, double alpha = 0.01);
  TensorId clip(TensorId x, std::optional<double> min, std::optional<double> max);
  TensorId gelu(TensorId x, bool tanh_approximation = false);
  TensorId where(TensorId cond, TensorId a, TensorId b) { return op1("Where", {cond, a, b}); }
  TensorId cast(TensorId x, DType to);
  TensorId identity(TensorId x) { return op1("Identity", {x}); }
  TensorId scale_shift(TensorId x, double alpha, double beta = 0.0);

  // ---- linalg ----
  TensorId matmul(TensorId a, TensorId b, bool transpose_a = false, bool transpose_b = false);
  TensorId linear(TensorId x, TensorId w, TensorId b = kNoTensor);

  // ---- conv ----
  TensorId conv2d(TensorId x, TensorId w, TensorId b = kNoTensor, const Conv2dOptions& options = {});
  TensorId max_pool2d(TensorId x, const Pool2dOptions& options);
  TensorId avg_pool2d(TensorId x, const Pool2dOptions& options);
  TensorId global_avg_pool(TensorId x) { return op1("GlobalAvgPool", {x}); }

  // ---- norm ----
  TensorId batch_norm(TensorId x, TensorId gamma, TensorId beta, TensorId running_mean, TensorId running_var,
                      double eps = 1e-5);
  BatchNormTrainOutputs batch_norm_train(TensorId x, TensorId gamma, TensorId beta, TensorId running_mean,
                                         TensorId running_var, double eps = 1e-5, double momentum = 0.1);
  // gamma / beta may be kNoTensor. The *_with_stats forms also return the saved statistics.
  TensorId layer_norm(TensorId x, TensorId gamma, TensorId beta, int64_t axis = -1, double eps = 1e-5) {
    return layer_norm_with_stats(x, gamma, beta, axis, eps).y;
  }
  LayerNormOutputs layer_norm_with_stats(TensorId x, TensorId gamma, TensorId beta, int64_t axis = -1,
                                         double eps = 1e-5);
  TensorId rms_norm(TensorId x, TensorId gamma, int64_t axis = -1, double eps = 1e-6) {
    return rms_norm_with_stats(x, gamma, axis, eps).y;
  }
  RMSNormOutputs rms_norm_with_stats(TensorId x, TensorId gamma, int64_t axis = -1, double eps = 1e-6);
  TensorId softmax(TensorId x, int64_t axis = -1);
  TensorId log_softmax(TensorId x, int64_t axis = -1);

  // ---- reduce (empty axes: all) ----
  TensorId reduce_sum(TensorId x, std::vector<int64_t> axes = {}, bool keepdims = true);
  TensorId reduce_mean(TensorId x, std::vector<int64_t> axes = {}, bool keepdims = true);
  TensorId reduce_max(TensorId x, std::vector<int64_t> axes = {}, bool keepdims = true);

  // ---- shape ----
  TensorId reshape(TensorId x, std::vector<int64_t> shape);
  TensorId flatten(TensorId x, int64_t axis = 1);
  TensorId transpose(TensorId x, std::vector<int64_t> perm);
  TensorId concat(std::vector<TensorId> xs, int64_t axis);
  // Empty axes: 0..starts.size()-1; empty steps: all 1.
  TensorId slice(TensorId x, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes = {},
                 std::vector<int64_t> steps = {});
  std::vector<TensorId> split(TensorId x, int64_t axis, std::vector<int64_t> sizes);
  TensorId squeeze(TensorId x, std::vector<int64_t> axes);
  TensorId unsqueeze(TensorId x, std::vector<int64_t> axes);
  TensorId expand(TensorId x, std::vector<int64_t> shape);
  TensorId pad(TensorId x, std::vector<int64_t> pads, double value = 0.0);

  // ---- sequence ----
  TensorId gather(TensorId data, TensorId indices, int64_t axis = 0);
  TensorId embedding(TensorId table, TensorId ids) { return gather(table, ids, 0); }
  // `position` (optional i64 scalar): the position of x's first row (a decode step's offset).
  TensorId rope(TensorId x, const RopeOptions& options = {}, TensorId position = kNoTensor);
  // A decode step's attention over a KV cache (docs/ops.md CachedAttention); writes k and v into
  // the caches (state tensors) at `position` first.
  TensorId cached_attention(TensorId q, TensorId k, TensorId v, TensorId key_cache, TensorId value_cache,
                            TensorId position, double scale);
  // Absent value: -inf.
  TensorId causal_mask(TensorId scores, std::optional<double> value = std::nullopt);
  TensorId dropout(TensorId x, double ratio);
  DropoutOutputs dropout_train(TensorId x, TensorId step, double ratio, int64_t seed);

 private:
  bool check_name(const std::string& what, const std::string& name);
  TensorId reduce(const char* op_name, TensorId x, std::vector<int64_t> axes, bool keepdims);
  TensorId pool(const char* op_name, TensorId x, const Pool2dOptions& options);
  void fail(Status s);
  TensorId add_state(std::string name, Shape shape, std::shared_ptr<const std::vector<uint8_t>> values);

  Graph graph_;
  Status status_;
  std::string next_name_;
};

}  // namespace pock
