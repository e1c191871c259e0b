// grid_sample family: GridSample in every mode, padding and corner alignment against
// torch.nn.functional.grid_sample (values computed with PyTorch in double, pasted here), and its
// errors; the cpu kernels of GridSample and GridSampleGrad against ref on random shapes and grids.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "support/backend_compare.hpp"
#include "support/expect_close.hpp"
#include "support/infer_types.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

TEST_CASE("GridSample matches torch grid_sample in every mode", "[ops][grid_sample]") {
  std::vector<float> xs(12);
  for (int i = 0; i < 12; ++i) xs[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i) - 1.0f;
  const HostTensor x = HostTensor::f32({1, 1, 3, 4}, xs);
  // Points inside, between pixels, and outside on each side.
  const HostTensor grid =
      HostTensor::f32({1, 2, 3, 2}, {-1.2f, -0.9f, -0.3f, 0.4f, 0.55f, -0.15f, 0.9f, 1.3f, 1.6f, -0.6f, -0.05f, 0.7f});
  struct Case {
    const char* mode;
    const char* padding;
    int64_t align_corners;
    std::vector<float> y;  // torch.nn.functional.grid_sample
  };
  const std::vector<Case> cases = {
      {"bilinear", "zeros", 0, {-0.065f, 2.65f, 1.85f, 0.1575f, 0.0f, 3.515f}},
      {"bilinear", "zeros", 1, {-0.56f, 2.325f, 1.8625f, 3.0975f, 0.13f, 3.1125f}},
      {"bilinear", "border", 0, {-1.0f, 2.65f, 1.85f, 4.5f, 0.7f, 3.7f}},
      {"bilinear", "border", 1, {-0.8f, 2.325f, 1.8625f, 4.425f, 1.3f, 3.1125f}},
      {"bilinear", "reflection", 0, {-1.0f, 2.65f, 1.85f, 4.5f, 0.35f, 3.7f}},
      {"bilinear", "reflection", 1, {-0.65f, 2.325f, 1.8625f, 3.825f, 0.85f, 3.1125f}},
      {"nearest", "zeros", 0, {0.0f, 3.5f, 2.5f, 0.0f, 0.0f, 3.5f}},
      {"nearest", "zeros", 1, {-1.0f, 1.5f, 2.0f, 4.5f, 0.0f, 3.5f}},
      {"nearest", "border", 0, {-1.0f, 3.5f, 2.5f, 4.5f, 0.5f, 3.5f}},
      {"nearest", "border", 1, {-1.0f, 1.5f, 2.0f, 4.5f, 0.5f, 3.5f}},
      {"nearest", "reflection", 0, {-1.0f, 3.5f, 2.5f, 4.5f, 0.0f, 3.5f}},
      {"nearest", "reflection", 1, {-1.0f, 1.5f, 2.0f, 4.5f, 0.0f, 3.5f}},
      {"bicubic", "zeros", 0, {-0.075139f, 3.185088f, 1.953581f, 0.132285f, -0.032171f, 3.63376f}},
      {"bicubic", "zeros", 1, {-0.714764f, 2.782257f, 1.905201f, 3.705779f, 0.100991f, 3.668478f}},
      {"bicubic", "border", 0, {-1.225187f, 2.796625f, 1.737242f, 4.558688f, 0.6505f, 3.779687f}},
      {"bicubic", "border", 1, {-0.904625f, 2.527688f, 1.790494f, 4.663828f, 1.135375f, 3.258164f}},
      {"bicubic", "reflection", 0, {-1.375f, 2.796625f, 1.737242f, 4.65f, 0.345125f, 3.78325f}},
      {"bicubic", "reflection", 1, {-0.91025f, 2.671688f, 1.788543f, 4.240969f, 0.49075f, 3.478664f}},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.mode << " " << c.padding << " align_corners " << c.align_corners) {
      auto y = run_op("GridSample", {x, grid},
                      {{"mode", std::string(c.mode)}, {"padding_mode", std::string(c.padding)}, {"align_corners", c.align_corners}});
      REQUIRE(y.is_ok());
      CHECK(y.value()[0].shape == Shape{1, 1, 2, 3});
      const std::vector<float> got = y.value()[0].f32();
      for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(c.y[i]).margin(1e-5));
    }
  }
}

TEST_CASE("grid_sample shape inference and errors", "[ops][grid_sample][errors]") {
  auto shape = infer("GridSample", {f32({2, 3, 5, 6}), f32({2, 4, 7, 2})}, {});
  REQUIRE(shape.is_ok());
  CHECK(shape.value()[0].shape == Shape{2, 3, 4, 7});
  CHECK_FALSE(infer("GridSample", {f32({2, 3, 5, 6}), f32({1, 4, 7, 2})}, {}).is_ok());  // batch
  CHECK_FALSE(infer("GridSample", {f32({2, 3, 5, 6}), f32({2, 4, 7, 3})}, {}).is_ok());  // last dim
  CHECK_FALSE(infer("GridSample", {f32({3, 5, 6}), f32({3, 4, 7, 2})}, {}).is_ok());     // 3-D x
  auto mode = infer("GridSample", {f32({1, 1, 2, 2}), f32({1, 1, 1, 2})}, {{"mode", std::string("area")}});
  REQUIRE_FALSE(mode.is_ok());
  CHECK(mode.status().message().find("mode") != std::string::npos);
  CHECK_FALSE(infer("GridSample", {f32({1, 1, 2, 2}), f32({1, 1, 1, 2})}, {{"padding_mode", std::string("wrap")}}).is_ok());
  CHECK(infer("GridSampleGrad", {f32({1, 1, 1, 1}), f32({1, 1, 2, 2}), f32({1, 1, 1, 2})}, {{"mode", std::string("bicubic")}})
            .is_ok());
  CHECK_FALSE(infer("GridSampleGrad", {f32({1, 1, 1, 1}), f32({1, 1, 2, 2}), f32({1, 1, 1, 2})}, {{"mode", std::string("area")}})
                  .is_ok());
}

TEST_CASE("cpu GridSample and GridSampleGrad match ref in every mode on random shapes", "[ops][cpu][grid_sample]") {
  std::mt19937 gen(31);
  uint32_t seed = 900;
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    for (const char* padding : {"zeros", "border", "reflection"}) {
      for (int64_t align : {0, 1}) {
        const Shape x = {random_dim(gen, 1, 2), random_dim(gen, 1, 3), random_dim(gen, 1, 6), random_dim(gen, 1, 7)};
        const Shape grid = {x[0], random_dim(gen, 1, 5), random_dim(gen, 1, 9), 2};
        const Attrs attrs{{"mode", std::string(mode)}, {"padding_mode", std::string(padding)}, {"align_corners", align}};
        INFO(mode << " " << padding << " align_corners " << align);
        // Grid values reach past [-1, 1] so that padding matters.
        check_against_ref("cpu", {"GridSample", {input(x, ++seed), input(grid, ++seed, -1.4f, 1.4f)}, attrs});
        const Shape y = {x[0], x[1], grid[1], grid[2]};
        check_against_ref("cpu", {"GridSampleGrad", {input(y, ++seed), input(x, ++seed), input(grid, ++seed, -1.4f, 1.4f)}, attrs});
      }
    }
  }
  // More points than one chunk and several channels, split over threads.
  const Attrs bilinear{{"mode", std::string("bilinear")}};
  check_against_ref("cpu", {"GridSample", {input({2, 5, 20, 24}, ++seed), input({2, 17, 19, 2}, ++seed, -1.1f, 1.1f)}, bilinear});
  check_against_ref("cpu", {"GridSampleGrad",
                            {input({2, 5, 17, 19}, ++seed), input({2, 5, 20, 24}, ++seed), input({2, 17, 19, 2}, ++seed, -1.1f, 1.1f)},
                            bilinear});
  const Attrs bicubic{{"mode", std::string("bicubic")}, {"padding_mode", std::string("border")}};
  check_against_ref("cpu", {"GridSampleGrad",
                            {input({2, 5, 17, 19}, ++seed), input({2, 5, 20, 24}, ++seed), input({2, 17, 19, 2}, ++seed, -1.1f, 1.1f)},
                            bicubic}, "", 4);
}
