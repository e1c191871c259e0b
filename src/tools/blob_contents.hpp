// A blob read as plain data for the commands that look inside one (inspect, tune, bench): the
// program, its metadata JSON and the phase of every op.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "blob/program_spec.hpp"
#include "blob/reader.hpp"
#include "pock/compiler/ir.hpp"
#include "pock/status.hpp"

namespace pock::tools {

struct BlobContents {
  ProgramSpec spec;
  nlohmann::json metadata = nlohmann::json::object();  // the compiler's: memory report, phases, ...
  std::vector<std::string> metadata_problems;  // fields left out for a wrong type (tools/blob_metadata.hpp)
  std::vector<Phase> op_phases;                         // by op index
  std::vector<int> op_function;                         // by op index: index into spec.functions, -1 if none

  const FunctionSpec* function(const std::string& name) const;
  // The function a step means: "train" when the blob has one, else "infer".
  const FunctionSpec* main_function() const;
};

Result<BlobContents> read_blob_contents(const std::string& path);
// The same from a verified blob in memory (an open engine's: EngineCore::blob()).
Result<BlobContents> blob_contents_of(const BlobView& view);

// "forward", "loss", "backward", "optimizer" (Phase::kUpdate: the optimizer's updates).
const char* phase_name(Phase phase);
constexpr Phase kAllPhases[] = {Phase::kForward, Phase::kLoss, Phase::kBackward, Phase::kUpdate};

}  // namespace pock::tools
