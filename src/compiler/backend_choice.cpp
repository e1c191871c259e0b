#include "compiler/backend_choice.hpp"

#include <unordered_map>

#include "compiler/backend_profile.hpp"
#include "compiler/spec_op_desc.hpp"
#include "runtime/backend_set.hpp"

namespace pock {

Result<std::string> best_scoring_backend(const std::vector<pock_backend_v1*>& backends, const ProgramSpec& spec,
                                         const OpSpec& op, bool host_only) {
  POCK_ASSIGN_OR_RETURN(SpecOpDesc d, SpecOpDesc::describe(spec, op, 0));
  std::string best_name;
  int32_t best = 0;
  for (pock_backend_v1* b : backends) {
    const bool device = owns_memory(*b);
    if (device && host_only) continue;
    const uint32_t space = device ? POCK_MEMORY_DEVICE : POCK_MEMORY_HOST;
    for (size_t i = 0; i < d.num_inputs(); ++i) d.input(i).memory_space = space;
    for (size_t i = 0; i < d.num_outputs(); ++i) d.output(i).memory_space = space;
    const int32_t score = b->supports_op(b->context, &d.desc());
    if (score > best) {
      best = score;
      best_name = b->name;
    }
  }
  return best_name;
}

namespace {

// Whether the op goes to the requested backend: always for a host backend (the runtime falls back
// from it per op), and for one with memory of its own only when it claims the op there.
Result<bool> requested_device_takes(const std::vector<pock_backend_v1*>& backends, const std::string& requested,
                                    const ProgramSpec& spec, const OpSpec& op) {
  for (pock_backend_v1* b : backends) {
    if (requested != b->name || !owns_memory(*b)) continue;
    POCK_ASSIGN_OR_RETURN(SpecOpDesc d, SpecOpDesc::describe(spec, op, 0));
    for (size_t i = 0; i < d.num_inputs(); ++i) d.input(i).memory_space = POCK_MEMORY_DEVICE;
    for (size_t i = 0; i < d.num_outputs(); ++i) d.output(i).memory_space = POCK_MEMORY_DEVICE;
    return b->supports_op(b->context, &d.desc()) > 0;
  }
  return true;
}

// The blob would open and then fail at the first run of this op: refuse it here, by name. The
// signature gives the dtypes (and shapes) that the backends were asked about.
Status no_kernel_error(const std::vector<pock_backend_v1*>& backends, const ProgramSpec& spec, const OpSpec& op) {
  std::string asked;
  for (pock_backend_v1* b : backends) asked += (asked.empty() ? "" : ", ") + std::string(b->name);
  return Status(Code::kMissingKernel, "no backend of this blob has a kernel for op " + op.op + " (node '" + op.name +
                                          "'): " + op_signature(spec, op) + "; backends asked: " +
                                          (asked.empty() ? "none" : asked) +
                                          ". Change the model or its dtypes, or load a backend that runs it "
                                          "(--backend-plugin)");
}

}  // namespace

Status choose_backends(const CompileOptions& options, const std::vector<pock_backend_v1*>& backends, ProgramSpec* spec,
                       BackendChoiceSummary* summary) {
  BackendChoiceSummary sum;
  sum.profile = options.profile_path;
  std::unordered_map<std::string, std::string> measured;
  if (!options.profile_path.empty()) {
    POCK_ASSIGN_OR_RETURN(BackendProfile profile, load_backend_profile(options.profile_path));
    measured = fastest_backends(profile);
  }
  for (OpSpec& op : spec->ops) {
    // Every op needs a kernel on some backend of the blob, whatever rule then picks one.
    POCK_ASSIGN_OR_RETURN(const std::string best, best_scoring_backend(backends, *spec, op, false));
    if (best.empty()) return no_kernel_error(backends, *spec, op);
    if (!measured.empty()) {
      auto it = measured.find(op_signature(*spec, op));
      if (it != measured.end()) {
        op.backend = it->second;
        ++sum.profiled;
        continue;
      }
    }
    if (!options.backend.empty()) {
      // A requested backend with memory of its own takes only what it runs: anything else it
      // was given would strand tensors in memory that no other backend can read.
      POCK_ASSIGN_OR_RETURN(const bool takes, requested_device_takes(backends, options.backend, *spec, op));
      if (takes) {
        op.backend = options.backend;
        ++sum.requested;
        continue;
      }
      POCK_ASSIGN_OR_RETURN(op.backend, best_scoring_backend(backends, *spec, op, true));
      ++(op.backend.empty() ? sum.undecided : sum.heuristic);
      continue;
    }
    op.backend = best;
    ++sum.heuristic;
  }
  if (summary) *summary = sum;
  return Status::ok();
}

}  // namespace pock
