#include "kernels/params/training.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {
namespace {

void read_update(AttrReader& r, UpdateParams* out) {
  out->schedule.lr = r.real("lr", 0.01);
  const std::string_view kind = r.text("schedule", "constant");
  if (kind == "constant") {
    out->schedule.kind = LrSchedule::Kind::kConstant;
  } else if (kind == "linear_warmup") {
    out->schedule.kind = LrSchedule::Kind::kLinearWarmup;
  } else if (kind == "cosine") {
    out->schedule.kind = LrSchedule::Kind::kCosine;
  } else {
    r.invalid("schedule", "is '" + std::string(kind) + "', not constant, linear_warmup or cosine");
  }
  out->schedule.warmup_steps = r.integer("warmup_steps", 0);
  out->schedule.total_steps = r.integer("total_steps", 0);
  out->schedule.min_lr = r.real("min_lr", 0.0);
  if (out->schedule.warmup_steps < 0) r.invalid("warmup_steps", "is negative");
  out->weight_decay = r.real("weight_decay", 0.0);
  out->accumulation = r.integer("accumulation", 1);
  if (out->accumulation < 1) r.invalid("accumulation", "must be at least 1");
}

}  // namespace

double LrSchedule::at(int64_t u) const {
  if (kind == Kind::kConstant) return lr;
  if (u <= warmup_steps) return lr * static_cast<double>(u) / static_cast<double>(warmup_steps);
  if (kind == Kind::kLinearWarmup) return lr;
  const double span = static_cast<double>(std::max<int64_t>(1, total_steps - warmup_steps - 1));
  const double progress = std::fmin(1.0, static_cast<double>(u - warmup_steps - 1) / span);
  return min_lr + (lr - min_lr) * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
}

Status parse(const pock_op_desc& op, SgdUpdateParams* out) {
  AttrReader r(op);
  read_update(r, out);
  out->momentum = r.real("momentum", 0.0);
  out->nesterov = r.integer("nesterov", 0) != 0;
  return r.status();
}

Status parse(const pock_op_desc& op, AdamUpdateParams* out) {
  AttrReader r(op);
  read_update(r, out);
  out->beta1 = r.real("beta1", 0.9);
  out->beta2 = r.real("beta2", 0.999);
  out->eps = r.real("eps", 1e-8);
  out->decoupled = r.integer("decoupled", 0) != 0;
  if (!(out->beta1 >= 0.0 && out->beta1 < 1.0)) r.invalid("beta1", "must be in [0, 1)");
  if (!(out->beta2 >= 0.0 && out->beta2 < 1.0)) r.invalid("beta2", "must be in [0, 1)");
  return r.status();
}

Status parse(const pock_op_desc& op, CrossEntropyParams* out) {
  AttrReader r(op);
  out->ignore_index = r.integer("ignore_index", -100);
  out->label_smoothing = r.real("label_smoothing", 0.0);
  if (!(out->label_smoothing >= 0.0 && out->label_smoothing <= 1.0)) r.invalid("label_smoothing", "must be in [0, 1]");
  return r.status();
}

Status parse(const pock_op_desc& op, ClipScaleParams* out) {
  AttrReader r(op);
  out->grad_scale = r.real("grad_scale", 1.0);
  out->max_norm = r.real("max_norm", 1.0);
  return r.status();
}

Status parse(const pock_op_desc& op, NllLossParams* out) {
  AttrReader r(op);
  const std::string_view reduction = r.text("reduction", "mean");
  if (reduction == "none") out->reduction = NllLossParams::Reduction::kNone;
  else if (reduction == "sum") out->reduction = NllLossParams::Reduction::kSum;
  else if (reduction == "mean") out->reduction = NllLossParams::Reduction::kMean;
  else r.invalid("reduction", "is '" + std::string(reduction) + "', not none, sum or mean");
  out->ignore_index = r.integer("ignore_index", INT64_MIN);
  return r.status();
}

Status count_labels(const pock_op_desc& op, const int64_t* labels, int64_t rows, int64_t classes, int64_t ignore,
                    int64_t* counted) {
  *counted = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (labels[r] == ignore) continue;
    if (labels[r] < 0 || labels[r] >= classes) {
      return Status(Code::kInvalidArgument, std::string(op.op) + " '" + op.name + "': label " + std::to_string(labels[r]) +
                                                " at position " + std::to_string(r) + " is outside [0, " +
                                                std::to_string(classes) + ") and is not ignore_index");
    }
    ++*counted;
  }
  return Status::ok();
}

}  // namespace pock::params
