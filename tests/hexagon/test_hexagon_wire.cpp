// The DSP program trusts the host no more than the host trusts it: spoken to directly over the
// wire format (kernels/hexagon/hx_wire.h), it refuses a whole batch — before running any of it —
// when a record has an unknown opcode, a tensor outside the region or misaligned, sizes whose
// product overflows, or an out-of-range step counter, and stays alive to take the next batch; it
// answers a message it cannot frame (bad magic, version, length, count) and then exits, since the
// stream cannot be resynchronised; and it runs nothing before the region is attached.
#include <cstring>
#include <string>
#include <vector>

#include "hexagon/hexagon_harness.hpp"
#include "kernels/hexagon/host/dsp_process.hpp"
#include "kernels/hexagon/hx_wire.h"
#include "kernels/hexagon/host/shared_region.hpp"

using namespace pock;
using namespace pock::test;
using namespace pock::hexagon;

namespace {

constexpr size_t kRegion = 1 << 20;
constexpr int kTimeoutMs = 10000;

class Wire {
 public:
  Wire() {
    std::string why;
    REQUIRE(region_.create(kRegion, &why));
    const std::string dir = kHexagonPlugin.substr(0, kHexagonPlugin.rfind('/'));
    REQUIRE(dsp_.start(POCK_HEXAGON_QEMU_PATH, dir + "/pock_hexagon_dsp", region_.fd(), &why));
    region_.close_fd();
  }

  hx_reply send(uint32_t kind, const std::vector<hx_op>& records, uint32_t arg0 = 0) {
    hx_header h{};
    h.magic = HX_MAGIC;
    h.version = HX_VERSION;
    h.kind = kind;
    h.sequence = ++sequence_;
    h.count = static_cast<uint32_t>(records.size());
    h.length = static_cast<uint32_t>(sizeof h + records.size() * sizeof(hx_op));
    h.arg0 = arg0;
    return send_raw(h, records);
  }

  hx_reply send_raw(const hx_header& h, const std::vector<hx_op>& records) {
    std::vector<uint8_t> bytes(sizeof h + records.size() * sizeof(hx_op));
    std::memcpy(bytes.data(), &h, sizeof h);
    if (!records.empty()) std::memcpy(bytes.data() + sizeof h, records.data(), records.size() * sizeof(hx_op));
    std::string why;
    REQUIRE(dsp_.send(bytes.data(), bytes.size(), kTimeoutMs, &why));
    hx_reply r{};
    INFO(why);
    REQUIRE(dsp_.receive(&r, sizeof r, kTimeoutMs, &why));
    CHECK(r.magic == HX_MAGIC);
    CHECK(r.sequence == h.sequence);
    return r;
  }

  void attach() { REQUIRE(send(HX_ATTACH, {}, kRegion).status == HX_OK); }

  float* f32(uint32_t offset) { return reinterpret_cast<float*>(region_.base() + offset); }
  DspProcess& dsp() { return dsp_; }

 private:
  SharedRegion region_;
  DspProcess dsp_;
  uint32_t sequence_ = 0;
};

// Relu of `n` floats from offset `in` to offset `out`.
hx_op relu(uint32_t in, uint32_t out, uint32_t n) {
  hx_op op{};
  op.opcode = HX_OP_UNARY;
  for (uint32_t& t : op.tensor) t = HX_ABSENT;
  op.tensor[0] = in;
  op.tensor[3] = out;
  op.dim[0] = n;
  op.dim[1] = HX_UNARY_RELU;
  return op;
}

}  // namespace

TEST_CASE("hexagon wire: a valid batch runs on the shared region", "[hexagon][wire]") {
  if (!hexagon_available()) return;
  Wire w;
  w.attach();
  for (int i = 0; i < 4; ++i) w.f32(0)[i] = static_cast<float>(i) - 1.5f;
  const hx_reply r = w.send(HX_RUN, {relu(0, 64, 4), relu(64, 128, 4)});
  CHECK(r.status == HX_OK);
  CHECK(r.ops_run == 2);
  CHECK(r.failed_op == HX_ABSENT);
  CHECK(std::vector<float>(w.f32(128), w.f32(128) + 4) == std::vector<float>{0, 0, 0.5f, 1.5f});
}

TEST_CASE("hexagon wire: a bad record refuses its whole batch, and the DSP takes the next one", "[hexagon][wire]") {
  if (!hexagon_available()) return;
  Wire w;
  CHECK(w.send(HX_RUN, {relu(0, 64, 4)}).status == HX_ERR_NOT_ATTACHED);
  w.attach();
  w.f32(0)[0] = 1.0f;
  w.f32(64)[0] = -7.0f;  // what a run of the first record would overwrite

  struct Bad {
    const char* what;
    hx_op op;
    uint32_t status;
  };
  std::vector<Bad> bad;
  hx_op op = relu(0, kRegion - 8, 4);  // ends 8 bytes past the region
  bad.push_back({"a tensor past the end of the region", op, HX_ERR_BOUNDS});
  op = relu(0, 64, 4);
  op.tensor[3] = HX_ABSENT;
  bad.push_back({"a required tensor absent", op, HX_ERR_BOUNDS});
  op = relu(2, 64, 4);
  bad.push_back({"a misaligned tensor", op, HX_ERR_BOUNDS});
  op = relu(0, 64, 0x40000001u);  // 4 GiB of floats: the byte count wraps in 32 bits
  bad.push_back({"a size whose byte count overflows 32 bits", op, HX_ERR_BOUNDS});
  hx_op linear{};
  linear.opcode = HX_OP_LINEAR;
  linear.tensor[0] = 0;
  linear.tensor[1] = 256;
  linear.tensor[2] = HX_ABSENT;
  linear.tensor[3] = 512;
  linear.dim[0] = 0x10000;  // rows * k = 2^32: wraps to 0 in 32 bits
  linear.dim[1] = 0x10000;
  linear.dim[2] = 1;
  bad.push_back({"dims whose product overflows 32 bits", linear, HX_ERR_BOUNDS});
  op = relu(0, 64, 4);
  op.opcode = 77;
  bad.push_back({"an unknown opcode", op, HX_ERR_OPCODE});
  op = relu(0, 64, 4);
  op.dim[1] = 99;
  bad.push_back({"an unknown activation", op, HX_ERR_SHAPE});
  hx_op adam{};
  adam.opcode = HX_OP_ADAM_UPDATE;
  adam.tensor[0] = 0;
  adam.tensor[1] = 64;
  adam.tensor[2] = 128;  // the step counter: set to -1 below
  adam.tensor[3] = 192;
  adam.tensor[4] = 256;
  adam.tensor[5] = HX_ABSENT;
  adam.dim[0] = 4;
  adam.dim[1] = 1;
  bad.push_back({"a negative step counter", adam, HX_ERR_STEP});
  const int64_t minus_one = -1;
  std::memcpy(w.f32(128), &minus_one, sizeof minus_one);

  for (const Bad& b : bad) {
    INFO(b.what);
    const hx_reply r = w.send(HX_RUN, {relu(0, 64, 1), b.op});
    CHECK(r.status == b.status);
    CHECK(r.failed_op == 1);
    CHECK(r.ops_run == 0);
    CHECK(w.f32(64)[0] == -7.0f);  // the valid first record did not run either
  }
  CHECK(w.send(HX_RUN, {relu(0, 64, 1)}).status == HX_OK);
  CHECK(w.f32(64)[0] == 1.0f);
}

TEST_CASE("hexagon wire: a message that cannot be framed ends the DSP program", "[hexagon][wire]") {
  if (!hexagon_available()) return;
  struct Broken {
    const char* what;
    void (*mutate)(hx_header*);
  };
  const Broken broken[] = {
      {"bad magic", [](hx_header* h) { h->magic = 0x12345678; }},
      {"another version", [](hx_header* h) { h->version = HX_VERSION + 1; }},
      {"a length that disagrees with the count", [](hx_header* h) { h->length += 4; }},
      {"more records than a batch holds", [](hx_header* h) {
         h->count = HX_MAX_BATCH + 1;
         h->length = static_cast<uint32_t>(sizeof(hx_header) + h->count * sizeof(hx_op));
       }},
      {"an unknown kind", [](hx_header* h) { h->kind = 42; }},
  };
  for (const Broken& b : broken) {
    INFO(b.what);
    Wire w;
    w.attach();
    hx_header h{};
    h.magic = HX_MAGIC;
    h.version = HX_VERSION;
    h.kind = HX_RUN;
    h.sequence = 7;
    h.count = 0;
    h.length = sizeof h;
    b.mutate(&h);
    const hx_reply r = w.send_raw(h, {});
    CHECK(r.status == HX_ERR_MESSAGE);
    CHECK(w.dsp().stop(5000).find("exited with status 2") != std::string::npos);
  }
}
