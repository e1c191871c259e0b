// Frozen weights kept block-quantized, before autodiff (recipe "frozen_weights": "source" or
// "q8_0"): a Linear whose weight is a frozen f32 parameter becomes
//   LinearQ(x, blocks, bias)            attributes format, in_features
// and a Gather (axis 0) from such a table (a frozen token embedding) becomes GatherQ(blocks, ids),
// `blocks` a u8 [N, row_bytes] constant of the weight's rows of blocks. "source" takes the blocks
// the importer kept (TensorDesc::source_blocks: GGUF Q8_0/Q4_0/Q4_1/Q4_K/Q6_K, rows already in
// the graph's order) and leaves weights without them alone; "q8_0" quantizes every such f32
// weight whose rows hold whole 32-value blocks to Q8_0 (any model), taking a weight's source
// blocks instead where they already are q8_0. One constant per weight, shared by every function
// and by every node that reads the weight (a tied embedding and LM head store it once), so the
// f32 original leaves the blob. The input gradient is LinearQInputGrad over the same rows
// (autodiff/rules/block_quant.cpp). Trainable weights stay f32. With int8_compute, a LinearQ whose
// blocks have an integer form (q8_0, q4_0, q4_1) gets attribute compute "int8", which its input
// gradient inherits where the weight's rows are a multiple of 32.
#pragma once
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/program.hpp"

namespace pock {

struct BlockWeights {
  struct Blocks {
    TensorId constant = kNoTensor;  // u8 [N, row_bytes]
    std::string format;             // ir/block_format.hpp's name
  };
  std::string mode;  // "source" or "q8_0"
  bool int8_compute = false;  // recipe frozen_matmul "int8": LinearQ over q8_0/q4_0/q4_1 gets compute "int8"
  std::unordered_map<TensorId, Blocks> by_weight;  // f32 weight -> its blocks (constant kNoTensor: stays f32)
};

// Rewrites the eligible Linear and Gather nodes of `nodes` (a function with no backward yet);
// returns how many. `mutated`: tensors some function writes, which are never replaced.
Result<int> quantize_frozen_to_blocks(Graph& g, std::vector<Node>& nodes, const std::unordered_set<TensorId>& mutated,
                                      BlockWeights& shared);

}  // namespace pock
