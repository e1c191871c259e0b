#include "compiler/backend_choice.hpp"

#include <unordered_map>

#include "compiler/backend_profile.hpp"
#include "compiler/spec_op_desc.hpp"
#include "runtime/backend_list.hpp"

namespace pock {
namespace {

// The heuristic's pick: highest supports_op score, earlier in the list on ties (as the runtime
// binds); "" when no backend of this build claims the op.
Result<std::string> best_scoring_backend(const std::vector<BackendHandle>& backends, const ProgramSpec& spec,
                                         const OpSpec& op) {
  POCK_ASSIGN_OR_RETURN(SpecOpDesc d, SpecOpDesc::describe(spec, op, 0));
  std::string best_name;
  int32_t best = 0;
  for (const BackendHandle& b : backends) {
    const int32_t score = b->supports_op(b->context, &d.desc());
    if (score > best) {
      best = score;
      best_name = b->name;
    }
  }
  return best_name;
}

}  // namespace

Status choose_backends(const CompileOptions& options, ProgramSpec* spec, BackendChoiceSummary* summary) {
  BackendChoiceSummary sum;
  sum.profile = options.profile_path;
  std::unordered_map<std::string, std::string> measured;
  if (!options.profile_path.empty()) {
    POCK_ASSIGN_OR_RETURN(BackendProfile profile, load_backend_profile(options.profile_path));
    measured = fastest_backends(profile);
  }
  const std::vector<BackendHandle> backends = make_backends("");
  for (OpSpec& op : spec->ops) {
    if (!measured.empty()) {
      auto it = measured.find(op_signature(*spec, op));
      if (it != measured.end()) {
        op.backend = it->second;
        ++sum.profiled;
        continue;
      }
    }
    if (!options.backend.empty()) {
      op.backend = options.backend;
      ++sum.requested;
      continue;
    }
    POCK_ASSIGN_OR_RETURN(op.backend, best_scoring_backend(backends, *spec, op));
    ++(op.backend.empty() ? sum.undecided : sum.heuristic);
  }
  if (summary) *summary = sum;
  return Status::ok();
}

}  // namespace pock
