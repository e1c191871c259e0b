// The plugin's memory space through the ABI: alloc carves aligned buffers from the shared region
// and reuses freed ones, says why when the region is full; copy moves bytes in every direction
// and refuses pointers outside the region; all_finite sees NaN and Inf, all_finite_many says in
// which buffer; a copy into memory that a
// queued op still reads runs that op first (and only then), so lazy batching never reorders the
// schedule. A compiler that only asks supports_op starts no DSP process.
#include <cmath>
#include <cstring>
#include <limits>

#include "hexagon/hexagon_harness.hpp"

using namespace pock;
using namespace pock::test;

TEST_CASE("hexagon memory: alloc, free and copy in the shared region", "[hexagon][memory]") {
  if (!hexagon_available()) return;
  BackendEntry entry = load_hexagon();
  pock_backend_v1& b = *entry.backend;
  void* a = b.alloc(b.context, 1000, 64);
  void* c = b.alloc(b.context, 5000, 256);
  REQUIRE(a != nullptr);
  REQUIRE(c != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(a) % 128 == 0);  // an HVX vector, at least
  CHECK(reinterpret_cast<uintptr_t>(c) % 256 == 0);
  CHECK((static_cast<uint8_t*>(c) >= static_cast<uint8_t*>(a) + 1000 || static_cast<uint8_t*>(c) + 5000 <= a));

  std::vector<uint8_t> in(1000), out(1000, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7);
  REQUIRE(b.copy(b.context, a, in.data(), in.size(), POCK_COPY_HOST_TO_DEVICE) == POCK_OK);
  REQUIRE(b.copy(b.context, c, a, in.size(), POCK_COPY_DEVICE_TO_DEVICE) == POCK_OK);
  REQUIRE(b.copy(b.context, out.data(), c, out.size(), POCK_COPY_DEVICE_TO_HOST) == POCK_OK);
  CHECK(out == in);

  // Outside the region, or a direction that is not one: refused, with a reason.
  CHECK(b.copy(b.context, out.data(), in.data(), 8, POCK_COPY_HOST_TO_DEVICE) == POCK_ERR_INVALID_ARGUMENT);
  CHECK(std::string(b.last_error(b.context)).find("outside the shared region") != std::string::npos);
  CHECK(b.copy(b.context, a, in.data(), 8, 7) == POCK_ERR_INVALID_ARGUMENT);

  // A freed buffer's space is found again; a request larger than the region is refused.
  b.free(b.context, a);
  void* again = b.alloc(b.context, 1000, 64);
  CHECK(again == a);
  CHECK(b.alloc(b.context, size_t{4} << 30, 64) == nullptr);
  CHECK(std::string(b.last_error(b.context)).find("POCK_HEXAGON_REGION_MB") != std::string::npos);
  b.free(b.context, again);
  b.free(b.context, c);
}

TEST_CASE("hexagon memory: all_finite checks the region", "[hexagon][memory]") {
  if (!hexagon_available()) return;
  BackendEntry entry = load_hexagon();
  pock_backend_v1& b = *entry.backend;
  auto all_finite = extension<pock_all_finite_fn>(b, POCK_EXT_ALL_FINITE);
  REQUIRE(all_finite != nullptr);
  void* p = b.alloc(b.context, 64 * sizeof(float), 64);
  REQUIRE(p != nullptr);
  std::vector<float> v(64, 1.0f);
  REQUIRE(b.copy(b.context, p, v.data(), 256, POCK_COPY_HOST_TO_DEVICE) == POCK_OK);
  CHECK(all_finite(b.context, p, 256, POCK_F32) == 1);
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    v[37] = bad;
    REQUIRE(b.copy(b.context, p, v.data(), 256, POCK_COPY_HOST_TO_DEVICE) == POCK_OK);
    CHECK(all_finite(b.context, p, 256, POCK_F32) == 0);
  }
  CHECK(all_finite(b.context, v.data(), 256, POCK_F32) < 0);  // not its memory
  b.free(b.context, p);
}

TEST_CASE("hexagon memory: all_finite_many names the buffer that holds NaN or Inf", "[hexagon][memory]") {
  if (!hexagon_available()) return;
  BackendEntry entry = load_hexagon();
  pock_backend_v1& b = *entry.backend;
  auto many = extension<pock_all_finite_many_fn>(b, POCK_EXT_ALL_FINITE_MANY);
  REQUIRE(many != nullptr);
  std::vector<pock_buffer_span> spans;
  std::vector<float> v(64, 1.0f);
  for (int k = 0; k < 4; ++k) {
    void* p = b.alloc(b.context, v.size() * sizeof(float), 64);
    REQUIRE(p != nullptr);
    REQUIRE(b.copy(b.context, p, v.data(), 256, POCK_COPY_HOST_TO_DEVICE) == POCK_OK);
    spans.push_back({p, 256, POCK_F32});
  }
  size_t which = 99;
  CHECK(many(b.context, spans.data(), spans.size(), &which) == 1);
  v[60] = std::numeric_limits<float>::infinity();
  REQUIRE(b.copy(b.context, const_cast<void*>(spans[2].data), v.data(), 256, POCK_COPY_HOST_TO_DEVICE) == POCK_OK);
  CHECK(many(b.context, spans.data(), spans.size(), &which) == 0);
  CHECK(which == 2);
  std::vector<pock_buffer_span> outside = spans;
  outside[3].data = v.data();  // not its memory
  CHECK(many(b.context, outside.data(), outside.size(), &which) < 0);
  CHECK(std::string(b.last_error(b.context)).find("outside the shared region") != std::string::npos);
  for (const pock_buffer_span& s : spans) b.free(b.context, const_cast<void*>(s.data));
}

TEST_CASE("hexagon memory: a copy into memory a queued op reads runs that op first", "[hexagon][memory]") {
  if (!hexagon_available()) return;
  BackendEntry entry = load_hexagon();
  pock_backend_v1& b = *entry.backend;
  // Relu y = max(x, 0) on 4 floats, x and y and an unrelated z in the region.
  auto tensor = [&](void* data) {
    pock_tensor_desc t{};
    t.dtype = POCK_F32;
    t.rank = 1;
    t.dims[0] = 4;
    t.nbytes = 16;
    t.data = data;
    t.memory_space = POCK_MEMORY_DEVICE;
    return t;
  };
  void* x = b.alloc(b.context, 16, 64);
  void* y = b.alloc(b.context, 16, 64);
  void* z = b.alloc(b.context, 16, 64);
  REQUIRE((x && y && z));
  pock_tensor_desc in = tensor(x), out = tensor(y);
  pock_op_desc relu{};
  relu.op = "Relu";
  relu.name = "relu";
  relu.num_inputs = relu.num_outputs = 1;
  relu.inputs = &in;
  relu.outputs = &out;
  void* handle = nullptr;
  REQUIRE(b.prepare_op(b.context, &relu, &handle) == POCK_OK);
  auto sync = extension<pock_synchronize_fn>(b, POCK_EXT_SYNCHRONIZE);
  const float first[4] = {-1, 2, -3, 4}, second[4] = {5, -6, 7, -8};
  float got[4] = {};
  REQUIRE(b.copy(b.context, x, first, 16, POCK_COPY_HOST_TO_DEVICE) == POCK_OK);

  REQUIRE(b.execute_op(b.context, handle, &relu) == POCK_OK);  // queued, not run
  const uint64_t before = counters_of(b).messages;
  REQUIRE(b.copy(b.context, z, second, 16, POCK_COPY_HOST_TO_DEVICE) == POCK_OK);  // touches nothing queued
  CHECK(counters_of(b).messages == before);
  REQUIRE(b.copy(b.context, x, second, 16, POCK_COPY_HOST_TO_DEVICE) == POCK_OK);  // the queued Relu reads x
  CHECK(counters_of(b).messages == before + 1);
  REQUIRE(b.copy(b.context, got, y, 16, POCK_COPY_DEVICE_TO_HOST) == POCK_OK);
  CHECK(std::vector<float>(got, got + 4) == std::vector<float>{0, 2, 0, 4});  // the x of its turn

  REQUIRE(b.execute_op(b.context, handle, &relu) == POCK_OK);
  REQUIRE(b.copy(b.context, got, y, 16, POCK_COPY_DEVICE_TO_HOST) == POCK_OK);  // a copy back runs the queue
  CHECK(counters_of(b).messages == before + 2);
  CHECK(std::vector<float>(got, got + 4) == std::vector<float>{5, 0, 7, 0});
  CHECK(sync(b.context) == POCK_OK);  // nothing queued: no message
  CHECK(counters_of(b).messages == before + 2);
  b.release_op(b.context, handle);
  for (void* p : {x, y, z}) b.free(b.context, p);
}

TEST_CASE("hexagon memory: asking supports_op starts no DSP process", "[hexagon][memory]") {
  if (!hexagon_available()) return;
  BackendEntry entry = load_hexagon();
  pock_backend_v1& b = *entry.backend;
  CHECK(DirectOp(b, {"Relu", {input({2, 3}, 1)}}, false).score() == 0);  // host memory: a host tensor
  CHECK(counters_of(b).dsp_pid == 0);
  CHECK(counters_of(b).messages == 0);
}

TEST_CASE("hexagon memory: without its DSP program the plugin does not load, and says why", "[hexagon][memory]") {
  if (!hexagon_available()) return;
  void* library = dlopen(kHexagonPlugin.c_str(), RTLD_NOW);  // kept loaded across the loader's failed load
  REQUIRE(library != nullptr);
  auto why = reinterpret_cast<pock_hexagon_init_error_fn>(dlsym(library, POCK_HEXAGON_INIT_ERROR));
  REQUIRE(why != nullptr);
  setenv("POCK_HEXAGON_DSP", "/nonexistent/pock_hexagon_dsp", 1);
  BackendEntry e = load_backend_plugin(kHexagonPlugin);
  unsetenv("POCK_HEXAGON_DSP");
  CHECK(!e.status.is_ok());
  CHECK(std::string(why()).find("/nonexistent/pock_hexagon_dsp") != std::string::npos);
  CHECK(load_backend_plugin(kHexagonPlugin).status.is_ok());
  CHECK(std::string(why()).empty());  // the next init succeeded
  dlclose(library);
}
