// Backend switching (DESIGN.md §3): the compiler records a preferred backend per op in the blob
// (OpSpec::backend); the runtime binds it when that backend can run the op, else falls back.
#pragma once
#include <cstdint>
#include <string>

#include <vector>

#include "blob/program_spec.hpp"
#include "pock/backend.h"
#include "pock/compiler/compiler.hpp"

namespace pock {

// How the ops' backends were decided, for the blob's metadata and `pockc inspect`.
struct BackendChoiceSummary {
  std::string profile;      // CompileOptions::profile_path, "" without one
  int64_t profiled = 0;     // ops whose signature the profile measured: its fastest backend
  int64_t requested = 0;    // ops given CompileOptions::backend
  int64_t heuristic = 0;    // ops decided by the heuristic
  int64_t undecided = 0;    // ops left without a backend by the host-only fallback of rule 2
};

// Sets OpSpec::backend of every op of `spec`, first rule that applies:
//  1. the profile (CompileOptions::profile_path) measured the op's signature: its fastest backend;
//  2. CompileOptions::backend, when given — for a backend with memory of its own (cuda) only the
//     ops it claims there; the rest by the heuristic among host backends;
//  3. heuristic: of `backends` (built-ins and loaded plugins, as their capability description —
//     supports_op — tells), the one that claims the op with the highest score; earlier on ties.
//     A backend with memory of its own is asked about the op with its tensors in that memory.
// An op that no backend of `backends` claims is a kMissingKernel error naming the op, its node,
// its dtypes and the backends asked: it would otherwise fail only when the blob runs.
// A profile that cannot be read or parsed is an error naming the file.
Status choose_backends(const CompileOptions& options, const std::vector<pock_backend_v1*>& backends, ProgramSpec* spec,
                       BackendChoiceSummary* summary);

// The heuristic alone, for one op; with `host_only`, among the backends that work on host memory.
// "" when none claims it.
Result<std::string> best_scoring_backend(const std::vector<pock_backend_v1*>& backends, const ProgramSpec& spec,
                                         const OpSpec& op, bool host_only);

}  // namespace pock
