// Zero padding folded into the convolution that reads it, before autodiff. Exports of TensorFlow
// models, and PyTorch models that pad as TensorFlow does ("same" at stride 2: none on top and
// left, one on the bottom and right), write an explicit Pad before a Conv2d with no padding of its
// own. The Pad copies the whole activation forward, its gradient crops the whole input gradient
// backward, the padded copy stays alive for the weight gradient, and the convolution kernels see
// a window without padding on a grown plane, which is not the shape their fast paths take.
//   Pad(x, spatial pads p, constant 0) -> Conv2d(pads q)   becomes   Conv2d(x, pads p + q)
// for every Conv2d that reads the Pad's output as its image; the Pad goes (by dead-code
// elimination) when nothing else reads it. The arithmetic is the same: the window reads the same
// zeros.
#pragma once
#include "pock/compiler/graph.hpp"

namespace pock {

// Rewrites the model's own nodes and those of its functions (a decode step), before the infer,
// train and eval functions are built from them, so that all of those and their backward see the
// folded convolutions; returns how many convolutions took their input's padding.
int fold_pads_into_convs(Graph& g);

}  // namespace pock
