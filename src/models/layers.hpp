// PyTorch modules as ModelBuilder calls: each creates its parameters under the module's
// state_dict prefix ("features.1.conv.0.0" -> "features.1.conv.0.0.weight") and names its node
// after the module, so compile errors and reports point at the PyTorch layer.
#pragma once
#include <cstdint>
#include <string>

#include "models/params.hpp"

namespace pock::models {

struct ConvSpec {
  int64_t in = 0, out = 0, kernel = 1, stride = 1, groups = 1;
  int64_t padding = -1;  // symmetric; -1: (kernel - 1) / 2, torchvision's "same" for odd kernels
};

// nn.Conv2d(bias=False) with torchvision's kaiming_normal_(mode="fan_out") init.
TensorId conv2d(Params& p, TensorId x, const std::string& name, const ConvSpec& spec);
// nn.BatchNorm2d: weight 1, bias 0, running_mean 0, running_var 1; eps 1e-5.
TensorId batch_norm2d(Params& p, TensorId x, const std::string& name, int64_t channels);

// How a Linear's weight (and bias) start.
struct LinearInit {
  double normal_std = 0.0;  // > 0: weight ~ normal(0, std), bias 0 (HF, torchvision classifiers)
                            // 0: PyTorch's default, weight and bias ~ U(-1/sqrt(in), 1/sqrt(in))
};

// nn.Linear(in, out, bias).
TensorId linear(Params& p, TensorId x, const std::string& name, int64_t in, int64_t out, bool bias,
                const LinearInit& init);
// nn.LayerNorm(dim, eps): weight 1, bias 0.
TensorId layer_norm(Params& p, TensorId x, const std::string& name, int64_t dim, double eps);

// Attention head layout: [B, S, heads * head_dim] <-> [B, heads, S, head_dim]. Batch dims stay 0
// ("copy") in the reshapes, so a recipe's batch_size can still change them.
TensorId split_heads(ModelBuilder& b, TensorId x, int64_t heads, int64_t head_dim);
TensorId merge_heads(ModelBuilder& b, TensorId x);

}  // namespace pock::models
