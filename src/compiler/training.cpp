// Placeholder until the autodiff lowering lands (issue 3): a recipe is refused with a clear error.
#include "compiler/training.hpp"

namespace pock {

Status build_training_functions(TrainingProgram& program, const Recipe& recipe, const CompileOptions& options) {
  (void)program;
  (void)recipe;
  (void)options;
  return Status(Code::kUnsupportedOp, "training lowering is not built yet: compile without a recipe");
}

Result<Recipe> parse_recipe(std::string_view json) {
  (void)json;
  return Status(Code::kInvalidArgument, "recipe parsing is not built yet");
}

Result<Recipe> load_recipe(const std::string& path) {
  (void)path;
  return Status(Code::kInvalidArgument, "recipe parsing is not built yet");
}

}  // namespace pock
