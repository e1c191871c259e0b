// One Hexagon backend instance: the shared region, the DSP process and the queue of ops waiting
// to be sent. Ops run lazily: execute_op only appends a record, and the queue goes to the DSP as
// one message when the host needs a result — a copy back to the host, a copy into memory a
// queued op touches, synchronize, all_finite — which makes one message per contiguous DSP
// segment of the schedule. After the DSP side dies (crash, timeout, a malformed reply) it is
// reaped, ops fail with POCK_ERR_BACKEND, and copy and free keep working on the region, which the
// host still maps: the runtime rescues the device's memory through them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../hx_wire.h"
#include "../pock_hexagon.h"
#include "dsp_config.hpp"
#include "dsp_process.hpp"
#include "pock/backend.h"
#include "shared_region.hpp"

namespace pock::hexagon {

// An op as prepared: its record, with the region ranges it touches (for copy hazards) and its
// names (for messages).
struct PreparedOp {
  hx_op record{};
  uint32_t begin[HX_MAX_TENSORS] = {};
  uint32_t end[HX_MAX_TENSORS] = {};
  int ranges = 0;
  std::string op, name;
};

class HexagonDevice {
 public:
  explicit HexagonDevice(DspConfig config);
  ~HexagonDevice();
  HexagonDevice(const HexagonDevice&) = delete;
  HexagonDevice& operator=(const HexagonDevice&) = delete;

  void* allocate(size_t bytes, size_t alignment);
  void free(void* p);
  pock_status copy(void* dst, const void* src, size_t n, int32_t direction);
  // Fills the record's tensor offsets; every tensor must lie in this device's region.
  pock_status prepare(const pock_op_desc& op, const hx_op& record, const int8_t* source, PreparedOp* out);
  pock_status enqueue(const PreparedOp& op);
  pock_status synchronize();
  int32_t all_finite(const void* data, size_t nbytes, pock_dtype dtype);
  // Every buffer at once: one flush of the queue, then a scan of each (see pock_all_finite_many).
  int32_t all_finite_many(const pock_buffer_span* buffers, size_t count, size_t* non_finite);

  void arm_fault(uint32_t fault) { armed_fault_ = fault; }
  pock_hexagon_counters counters() const;
  const char* last_error() const { return error_.c_str(); }
  void set_error(std::string e) { error_ = std::move(e); }

 private:
  bool start();  // the region and the DSP process, on first use
  pock_status flush();
  bool pending_touches(const uint8_t* p, size_t n) const;
  // Records the DSP's death: reaps it, drops the queue, keeps `what` for every later call.
  pock_status die(const std::string& what);
  bool round_trip(const void* message, size_t bytes, uint32_t sequence, hx_reply* reply, std::string* why);
  std::string batch_summary() const;

  DspConfig config_;
  SharedRegion region_;
  DspProcess dsp_;
  bool dead_ = false;
  std::string death_;
  std::string error_;
  uint32_t sequence_ = 0;
  uint32_t armed_fault_ = 0;
  std::vector<const PreparedOp*> pending_;  // reserved: enqueue allocates nothing
  std::vector<uint8_t> message_;            // header + records, sized once
  pock_hexagon_counters counters_{};
};

}  // namespace pock::hexagon
