// ConvTranspose2d on the cpu backend: the transposed convolution that Conv2dGradInput computes
// (x plays dy, y plays dx), so it runs through the same ways (conv_grad_kernel.hpp): direct loops
// when depthwise, an XNNPACK deconvolution for a frozen weight where faster, else col2im + sgemm.
#include "kernels/cpu/conv_grad_kernel.hpp"
#include "kernels/cpu/cpu_families.hpp"

namespace pock::cpu {

void register_conv_transpose(KernelTable& t) { t.add(conv_grad_input_def("ConvTranspose2d")); }

}  // namespace pock::cpu
