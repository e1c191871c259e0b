#include "hexagon_device.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace pock::hexagon {
namespace {

const char* status_text(uint32_t status) {
  switch (status) {
    case HX_ERR_MESSAGE: return "a malformed message";
    case HX_ERR_OPCODE: return "an unknown opcode";
    case HX_ERR_BOUNDS: return "a tensor outside the shared region";
    case HX_ERR_SHAPE: return "sizes its kernel cannot run";
    case HX_ERR_STEP: return "a step counter outside [0, 2^31)";
    case HX_ERR_NOT_ATTACHED: return "no shared region mapped";
    default: return "an unknown status";
  }
}

hx_header header(uint32_t kind, uint32_t sequence, uint32_t count, uint32_t arg0) {
  hx_header h{};
  h.magic = HX_MAGIC;
  h.version = HX_VERSION;
  h.kind = kind;
  h.sequence = sequence;
  h.count = count;
  h.length = static_cast<uint32_t>(sizeof(hx_header) + count * sizeof(hx_op));
  h.arg0 = arg0;
  return h;
}

}  // namespace

HexagonDevice::HexagonDevice(DspConfig config) : config_(std::move(config)) {
  pending_.reserve(HX_MAX_BATCH);
  message_.resize(sizeof(hx_header) + (HX_MAX_BATCH + 1) * sizeof(hx_op));  // + a fault record
}

HexagonDevice::~HexagonDevice() {
  if (dsp_.running()) {
    const hx_header bye = header(HX_EXIT, ++sequence_, 0, 0);
    std::string ignored;
    dsp_.send(&bye, sizeof bye, 100, &ignored);
  }
  dsp_.stop();
  region_.release();
}

bool HexagonDevice::start() {
  if (region_.mapped()) return true;
  if (dead_) {
    error_ = "hexagon: the DSP is gone (" + death_ + ")";
    return false;
  }
  std::string why;
  if (!region_.create(config_.region_bytes, &why)) {
    error_ = "hexagon: " + why;
    return false;
  }
  const bool started = dsp_.start(config_.emulator, config_.program, region_.fd(), &why);
  region_.close_fd();  // the child has its copy; the mapping keeps the memory
  if (!started) {
    region_.release();
    error_ = "hexagon: cannot start the DSP process: " + why;
    return false;
  }
  counters_.dsp_pid = dsp_.pid();
  const hx_header attach = header(HX_ATTACH, ++sequence_, 0, static_cast<uint32_t>(region_.size()));
  hx_reply reply{};
  if (!round_trip(&attach, sizeof attach, attach.sequence, &reply, &why) || reply.status != HX_OK) {
    if (why.empty()) why = std::string("it answered ") + status_text(reply.status);
    die("the DSP did not attach the shared region: " + why);
    region_.release();
    return false;
  }
  return true;
}

// Sends one message and reads its reply; false with *why when the DSP is gone, late or garbled.
bool HexagonDevice::round_trip(const void* message, size_t bytes, uint32_t sequence, hx_reply* reply, std::string* why) {
  const auto begin = std::chrono::steady_clock::now();
  const bool ok = dsp_.send(message, bytes, config_.timeout_ms, why) &&
                  dsp_.receive(reply, sizeof *reply, config_.timeout_ms, why);
  counters_.reply_wait_ns += static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - begin).count());
  if (!ok) return false;
  // Nothing the DSP says is trusted: a reply that is not one is a protocol failure.
  if (reply->magic != HX_MAGIC || reply->version != HX_VERSION) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "%08x", reply->magic);
    *why = std::string("a malformed reply (magic 0x") + hex + ", version " + std::to_string(reply->version) + ")";
    return false;
  }
  if (reply->sequence != sequence) {
    *why = "a reply to message " + std::to_string(reply->sequence) + " while waiting for " + std::to_string(sequence);
    return false;
  }
  return true;
}

pock_status HexagonDevice::die(const std::string& what) {
  const std::string how = dsp_.kill_and_reap();
  dead_ = true;
  death_ = what + "; the DSP process " + how;
  pending_.clear();
  counters_.dsp_pid = -1;
  ++counters_.dsp_deaths;
  error_ = "hexagon: " + death_;
  return POCK_ERR_BACKEND;
}

std::string HexagonDevice::batch_summary() const {
  if (pending_.empty()) return "an empty batch";
  std::string s = "a batch of " + std::to_string(pending_.size()) + " ops (" + pending_.front()->op + " '" +
                  pending_.front()->name + "'";
  if (pending_.size() > 1) s += " ... " + pending_.back()->op + " '" + pending_.back()->name + "'";
  return s + ")";
}

pock_status HexagonDevice::flush() {
  if (dead_) {
    error_ = "hexagon: the DSP is gone (" + death_ + ")";
    return POCK_ERR_BACKEND;
  }
  if (pending_.empty() && !armed_fault_) return POCK_OK;
  const uint32_t count = static_cast<uint32_t>(pending_.size()) + (armed_fault_ ? 1u : 0u);
  const hx_header h = header(HX_RUN, ++sequence_, count, 0);
  std::memcpy(message_.data(), &h, sizeof h);
  auto* records = reinterpret_cast<hx_op*>(message_.data() + sizeof h);
  for (size_t i = 0; i < pending_.size(); ++i) records[i] = pending_[i]->record;
  if (armed_fault_) {
    hx_op fault{};
    fault.opcode = HX_OP_FAULT;
    fault.dim[0] = armed_fault_;
    records[pending_.size()] = fault;
    armed_fault_ = 0;
  }
  ++counters_.messages;
  hx_reply reply{};
  std::string why;
  if (!round_trip(message_.data(), h.length, h.sequence, &reply, &why)) {
    return die(why + " after " + batch_summary() + " was sent");
  }
  if (reply.ops_run > count || (reply.status == HX_OK && reply.ops_run != count) ||
      (reply.status != HX_OK && reply.failed_op >= count)) {
    return die("an inconsistent reply (" + std::to_string(reply.ops_run) + " of " + std::to_string(count) +
               " ops run, status " + std::to_string(reply.status) + ")");
  }
  counters_.ops_run += reply.ops_run;
  if (reply.status != HX_OK) {
    // The DSP is alive and refused the batch before running any of it.
    const std::string which = reply.failed_op < pending_.size()
                                  ? pending_[reply.failed_op]->op + " '" + pending_[reply.failed_op]->name + "'"
                                  : std::string("the fault record");
    error_ = "hexagon: the DSP rejected " + which + " (record " + std::to_string(reply.failed_op) + " of " +
             std::to_string(count) + "): " + status_text(reply.status) + " (detail " + std::to_string(reply.detail) + ")";
    pending_.clear();
    return POCK_ERR_BACKEND;
  }
  pending_.clear();
  return POCK_OK;
}

void* HexagonDevice::allocate(size_t bytes, size_t alignment) {
  if (!start()) return nullptr;
  // 128: an HVX vector, so every buffer can be read with aligned vector loads.
  void* p = region_.allocate(bytes, alignment < 128 ? 128 : alignment);
  if (!p) {
    error_ = "hexagon: the shared region (" + std::to_string(region_.size() >> 20) + " MiB) has no room for " +
             std::to_string(bytes) + " bytes; raise POCK_HEXAGON_REGION_MB";
  }
  return p;
}

void HexagonDevice::free(void* p) {
  if (!p) return;
  region_.free(p);
  // A dead DSP's region lives only while the runtime still rescues buffers from it.
  if (dead_ && region_.live_allocations() == 0) region_.release();
}

bool HexagonDevice::pending_touches(const uint8_t* p, size_t n) const {
  const size_t begin = region_.offset_of(p), end = begin + n;
  for (const PreparedOp* op : pending_) {
    for (int i = 0; i < op->ranges; ++i) {
      if (op->begin[i] < end && begin < op->end[i]) return true;
    }
  }
  return false;
}

pock_status HexagonDevice::copy(void* dst, const void* src, size_t n, int32_t direction) {
  if (direction < POCK_COPY_HOST_TO_DEVICE || direction > POCK_COPY_DEVICE_TO_DEVICE) {
    error_ = "hexagon: copy direction " + std::to_string(direction) + " is not a pock_copy_direction";
    return POCK_ERR_INVALID_ARGUMENT;
  }
  if (n == 0) return POCK_OK;
  const bool dst_here = direction != POCK_COPY_DEVICE_TO_HOST, src_here = direction != POCK_COPY_HOST_TO_DEVICE;
  if (!dst || !src || (dst_here && !region_.contains(dst, n)) || (src_here && !region_.contains(src, n))) {
    error_ = "hexagon: a copy of " + std::to_string(n) + " bytes reaches outside the shared region";
    return POCK_ERR_INVALID_ARGUMENT;
  }
  // The bytes must be what the schedule says at this point: a copy to the host ends a DSP segment
  // (the ops before it run now), and a copy into memory that a queued op reads or writes waits
  // for that op. After the DSP died nothing is queued, and the region still holds what the last
  // completed batch left there.
  if (!dead_) {
    const bool flush_first = direction == POCK_COPY_DEVICE_TO_HOST
                                 ? !pending_.empty()
                                 : pending_touches(static_cast<const uint8_t*>(dst), n) ||
                                       (src_here && pending_touches(static_cast<const uint8_t*>(src), n));
    if (flush_first) {
      const pock_status s = flush();
      if (s != POCK_OK) return s;
    }
  }
  std::memmove(dst, src, n);
  ++counters_.copies[direction];
  counters_.copy_bytes[direction] += n;
  return POCK_OK;
}

pock_status HexagonDevice::prepare(const pock_op_desc& op, const hx_op& record, const int8_t* source, PreparedOp* out) {
  out->record = record;
  out->op = op.op;
  out->name = op.name ? op.name : "";
  out->ranges = 0;
  for (int slot = 0; slot < HX_MAX_TENSORS; ++slot) {
    out->record.tensor[slot] = HX_ABSENT;
    if (source[slot] < 0) continue;
    const pock_tensor_desc& t = source[slot] >= 16 ? op.outputs[source[slot] - 16] : op.inputs[source[slot]];
    if (!region_.contains(t.data, t.nbytes)) {
      error_ = std::string("hexagon: op ") + op.op + " '" + out->name + "' has a tensor outside the shared region";
      return POCK_ERR_INVALID_ARGUMENT;
    }
    out->record.tensor[slot] = region_.offset_of(t.data);
    out->begin[out->ranges] = out->record.tensor[slot];
    out->end[out->ranges] = out->record.tensor[slot] + static_cast<uint32_t>(t.nbytes);
    ++out->ranges;
  }
  return POCK_OK;
}

pock_status HexagonDevice::enqueue(const PreparedOp& op) {
  if (dead_) {
    error_ = "hexagon: cannot run " + op.op + " '" + op.name + "': the DSP is gone (" + death_ + ")";
    return POCK_ERR_BACKEND;
  }
  if (pending_.size() == HX_MAX_BATCH) {
    const pock_status s = flush();
    if (s != POCK_OK) return s;
  }
  pending_.push_back(&op);
  ++counters_.ops_enqueued;
  return POCK_OK;
}

pock_status HexagonDevice::synchronize() { return flush(); }

int32_t HexagonDevice::all_finite(const void* data, size_t nbytes, pock_dtype dtype) {
  const pock_buffer_span one{data, nbytes, dtype};
  size_t which = 0;
  return all_finite_many(&one, 1, &which);
}

int32_t HexagonDevice::all_finite_many(const pock_buffer_span* buffers, size_t count, size_t* non_finite) {
  for (size_t k = 0; k < count; ++k) {
    if (!region_.contains(buffers[k].data, buffers[k].nbytes)) {
      error_ = "hexagon: all_finite on memory outside the shared region";
      return -1;
    }
  }
  // One flush for all: the queued ops must have written what is read here.
  if (!pending_.empty() && flush() != POCK_OK) return -1;
  // The host reads the shared region directly: one pass, no message, as the region is mapped here.
  for (size_t k = 0; k < count; ++k) {
    if (buffers[k].dtype != POCK_F32) continue;
    const auto* v = static_cast<const float*>(buffers[k].data);
    for (size_t i = 0; i < buffers[k].nbytes / sizeof(float); ++i) {
      if (!std::isfinite(v[i])) {
        *non_finite = k;
        return 0;
      }
    }
  }
  return 1;
}

pock_hexagon_counters HexagonDevice::counters() const { return counters_; }

}  // namespace pock::hexagon
