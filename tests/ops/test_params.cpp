// The shared parameter parsers (kernels/params): what every backend's kernels get at prepare,
// checked against hand-computed values, and bad attributes refused with the op and attribute named.
#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>
#include <vector>

#include "kernels/params/conv.hpp"
#include "kernels/params/training.hpp"

using namespace pock;

namespace {

struct Op {
  std::vector<pock_attr> attrs;
  pock_op_desc desc{};
  explicit Op(std::vector<pock_attr> a) : attrs(std::move(a)) {
    desc.op = "SgdUpdate";
    desc.name = "update fc.weight";
    desc.num_attrs = static_cast<int32_t>(attrs.size());
    desc.attrs = attrs.data();
  }
};

pock_attr real(const char* name, double v) { return {name, POCK_ATTR_FLOAT, 0, v, "", nullptr, nullptr, 0}; }
pock_attr integer(const char* name, int64_t v) { return {name, POCK_ATTR_INT, v, 0, "", nullptr, nullptr, 0}; }
pock_attr text(const char* name, const char* v) { return {name, POCK_ATTR_STRING, 0, 0, v, nullptr, nullptr, 0}; }

}  // namespace

TEST_CASE("the learning-rate schedule: constant, linear warm-up, cosine", "[params]") {
  params::SgdUpdateParams p;
  Op constant({real("lr", 0.1)});
  REQUIRE(params::parse(constant.desc, &p).is_ok());
  CHECK(p.schedule.at(1) == 0.1);
  CHECK(p.schedule.at(1000) == 0.1);

  Op warmup({real("lr", 0.1), text("schedule", "linear_warmup"), integer("warmup_steps", 4)});
  REQUIRE(params::parse(warmup.desc, &p).is_ok());
  CHECK(p.schedule.at(1) == Approx(0.025));
  CHECK(p.schedule.at(4) == Approx(0.1));
  CHECK(p.schedule.at(9) == Approx(0.1));

  // Warm-up over 2 updates, then from lr at update 3 down to min_lr at update 11 (10 updates).
  Op cosine({real("lr", 0.1), text("schedule", "cosine"), integer("warmup_steps", 2), integer("total_steps", 11),
             real("min_lr", 0.01)});
  REQUIRE(params::parse(cosine.desc, &p).is_ok());
  CHECK(p.schedule.at(2) == Approx(0.1));
  CHECK(p.schedule.at(3) == Approx(0.1));
  const double half = 0.01 + 0.09 * 0.5 * (1.0 + std::cos(std::numbers::pi * 4.0 / 8.0));
  CHECK(p.schedule.at(7) == Approx(half));
  CHECK(p.schedule.at(11) == Approx(0.01));
  CHECK(p.schedule.at(50) == Approx(0.01));
}

TEST_CASE("gradient accumulation: which steps update, and the mean", "[params]") {
  params::AdamUpdateParams p;
  Op op({integer("accumulation", 4)});
  REQUIRE(params::parse(op.desc, &p).is_ok());
  CHECK(p.update_index(3) == 0);
  CHECK(p.update_index(4) == 1);
  CHECK(p.update_index(8) == 2);
  CHECK(p.zeroes_gradient());
  CHECK(p.gradient_scale(0.5f) == Approx(0.125f));
}

TEST_CASE("bad optimizer and loss attributes are refused, naming the op and the attribute", "[params]") {
  struct Case {
    std::vector<pock_attr> attrs;
    const char* message;
  };
  const std::vector<Case> cases = {
      {{text("lr", "fast")}, "attribute 'lr' must be a number"},
      {{real("lr", std::nan(""))}, "attribute 'lr' is NaN"},
      {{text("schedule", "exponential")}, "attribute 'schedule' is 'exponential'"},
      {{integer("accumulation", 0)}, "attribute 'accumulation' must be at least 1"},
      {{integer("warmup_steps", -3)}, "attribute 'warmup_steps' is negative"},
      {{real("beta1", 1.0)}, "attribute 'beta1' must be in [0, 1)"},
      {{real("decoupled", 1.5)}, "attribute 'decoupled' must be an integer"},
  };
  for (const Case& c : cases) {
    Op op(c.attrs);
    params::AdamUpdateParams p;
    const Status s = params::parse(op.desc, &p);
    INFO(s.message());
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message().find("SgdUpdate 'update fc.weight'") != std::string::npos);
    CHECK(s.message().find(c.message) != std::string::npos);
  }
  Op smoothing({real("label_smoothing", 1.5)});
  params::CrossEntropyParams ce;
  CHECK(params::parse(smoothing.desc, &ce).code() == Code::kInvalidArgument);
}

TEST_CASE("lenient where exporters differ: a whole float as an integer, a scalar as a one-element list",
          "[params]") {
  params::AdamUpdateParams adam;
  Op whole({real("decoupled", 1.0), real("accumulation", 2.0)});
  REQUIRE(params::parse(whole.desc, &adam).is_ok());
  CHECK(adam.decoupled);
  CHECK(adam.accumulation == 2);

  params::WindowParams window;
  Op scalar_stride({integer("strides", 2), integer("groups", 4)});
  scalar_stride.desc.op = "Conv2d";
  REQUIRE(params::parse(scalar_stride.desc, &window).is_ok());
  CHECK(window.stride_h == 2);
  CHECK(window.stride_w == 1);
  CHECK(window.groups == 4);

  Op bad_groups({integer("groups", 0)});
  bad_groups.desc.op = "Conv2d";
  CHECK(params::parse(bad_groups.desc, &window).code() == Code::kInvalidArgument);
}
