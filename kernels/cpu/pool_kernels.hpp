// The cpu backend's pooling kernels (pool_kernels.cpp), with the window from the conv family's
// shared parameters. Registered where their ops' families say: MaxPool2d by conv/max_pool.cpp,
// the gradients by layer_grad_conv/pool_grad.cpp.
#pragma once
#include "kernels/params/conv.hpp"
#include "runtime/kernel.hpp"

namespace pock::cpu {

bool max_pool_accepts(const pock_op_desc& op);
bool max_pool_grad_accepts(const pock_op_desc& op);
bool avg_pool_grad_accepts(const pock_op_desc& op);

Status max_pool(const KernelCall& c, const params::WindowParams& p);
Status max_pool_grad(const KernelCall& c, const params::WindowParams& p);
Status avg_pool_grad(const KernelCall& c, const params::WindowParams& p);

}  // namespace pock::cpu
