// What makes a Conv2d pointwise for the DSP, shared by the forward encoder (conv.cpp) and the
// gradient encoders (layer_grad_conv.cpp), which must agree on it.
#pragma once
#include "encoding.hpp"
#include "kernels/params/conv.hpp"

namespace pock::hexagon {

// The op's window (parsed into `p`) is stride 1, unpadded, one group, NCHW.
bool pointwise_window(const pock_op_desc& op, params::WindowParams* p);
// A weight [O, C, 1, 1].
bool is_pointwise_weight(const pock_tensor_desc& w);

}  // namespace pock::hexagon
