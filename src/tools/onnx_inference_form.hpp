// A model exported for training (torch.onnx.export with TrainingMode.TRAINING, as pock asks for:
// docs/exporting.md) marks BatchNormalization with training_mode = 1 and passes Dropout a true
// training_mode. pock compiles its inference function from such a file in inference form (running
// statistics, no dropout), but ONNX Runtime follows the flags: it would normalize each batch by
// its own statistics and drop activations at random. The export therefore clears the flags, so
// that a runtime's inference of the file is the trained engine's.
#pragma once
#ifdef POCK_HAVE_ONNX
#include <onnx/onnx_pb.h>

#include "pock/status.hpp"

namespace pock::tools {

struct InferenceFormReport {
  int batchnorms = 0;  // BatchNormalization nodes set to training_mode = 0
  int dropouts = 0;    // Dropout nodes whose training_mode input was removed
};

// Refuses (naming the node) a BatchNormalization whose running-statistics outputs are read: the
// inference form has none.
Result<InferenceFormReport> set_inference_form(onnx::GraphProto* graph);

}  // namespace pock::tools
#endif
