// Layout choice: chains of frozen convolutions that the cpu backend runs through XNNPACK (which
// works channels-last) stay NHWC between them instead of being copied NCHW -> NHWC -> NCHW around
// every op. See layout_nhwc.cpp.
#pragma once
#include <string>

#include "compiler/program.hpp"
#include "pock/compiler/compiler.hpp"

namespace pock {

struct LayoutStats {
  int nhwc_convs = 0;        // Conv2d ops rewritten to layout "NHWC"
  int nhwc_adds = 0;         // Adds inside those regions, now over NHWC tensors
  int transposes = 0;        // Transposes inserted at region entries and exits (after folding)
  int folded_transposes = 0; // inverse Transpose pairs removed
};

// Whether the pass applies to a compile with these options: CompileOptions::layout, no backend
// other than cpu requested, and XNNPACK in this build.
bool layout_pass_applies(const CompileOptions& options);

// Rewrites every function of the program (run after the fusions, before the memory schedule). A
// convolution that the profile at `profile_path` (pockc tune; "" for none) timed in NCHW and found
// faster on another cpu algorithm than on XNNPACK stays NCHW. An unreadable profile is an error.
Result<LayoutStats> choose_layouts(TrainingProgram& program, const std::string& profile_path);

}  // namespace pock
