/* The Hexagon plugin's own extensions (libpock_hexagon.so), beyond include/pock/backend.h's.
 * Through get_proc_address on the plugin's pock_backend_v1:
 *   "pock_hexagon_counters"      pock_hexagon_counters_fn     what this backend instance did
 *   "pock_hexagon_inject_fault"  pock_hexagon_inject_fault_fn a fault for tests (see below)
 * and, for callers that reach the plugin only as a library an engine loaded (dlsym):
 *   pock_hexagon_process_counters      the sum over every live instance in the process
 *   pock_hexagon_process_inject_fault  arms every live instance
 *   pock_hexagon_init_error            why an init failed
 * Environment: POCK_HEXAGON_DSP (the DSP program; default: pock_hexagon_dsp next to the plugin),
 * POCK_HEXAGON_QEMU (default: qemu-hexagon on PATH), POCK_HEXAGON_REGION_MB (shared region,
 * default 256), POCK_HEXAGON_TIMEOUT_MS (the longest wait for one reply, default 30000). */
#ifndef POCK_HEXAGON_H_
#define POCK_HEXAGON_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pock_hexagon_counters {
  uint64_t messages;       /* op batches sent to the DSP: one per flush of a non-empty queue */
  uint64_t ops_enqueued;   /* execute_op calls accepted */
  uint64_t ops_run;        /* ops the DSP reported done */
  uint64_t copies[3];      /* copy() calls by pock_copy_direction */
  uint64_t copy_bytes[3];
  uint64_t reply_wait_ns;  /* time spent waiting for the DSP's replies */
  int64_t dsp_pid;         /* the DSP process: 0 before it starts, -1 once it is gone */
  uint64_t dsp_deaths;     /* DSP processes lost: crashed, hung (killed on timeout), or garbled */
} pock_hexagon_counters;

#define POCK_HEXAGON_EXT_COUNTERS "pock_hexagon_counters"
typedef void (*pock_hexagon_counters_fn)(void* context, pock_hexagon_counters* out);

/* The next batch sent carries a fault record after its ops: the DSP side then crashes (SIGSEGV),
 * hangs (the host kills it when POCK_HEXAGON_TIMEOUT_MS passes) or answers garbage. */
#define POCK_HEXAGON_FAULT_CRASH 1u
#define POCK_HEXAGON_FAULT_HANG 2u
#define POCK_HEXAGON_FAULT_GARBAGE 3u
#define POCK_HEXAGON_EXT_INJECT_FAULT "pock_hexagon_inject_fault"
typedef void (*pock_hexagon_inject_fault_fn)(void* context, uint32_t fault);

#define POCK_HEXAGON_PROCESS_COUNTERS "pock_hexagon_process_counters"
typedef void (*pock_hexagon_process_counters_fn)(pock_hexagon_counters* out);
#define POCK_HEXAGON_PROCESS_INJECT_FAULT "pock_hexagon_process_inject_fault"
typedef void (*pock_hexagon_process_inject_fault_fn)(uint32_t fault);

/* Why this thread's last pock_backend_init_v1 failed (no DSP program, no qemu-hexagon), "" when
 * it did not: the backend ABI returns only a status from init. */
#define POCK_HEXAGON_INIT_ERROR "pock_hexagon_init_error"
typedef const char* (*pock_hexagon_init_error_fn)(void);

#ifdef __cplusplus
}
#endif
#endif /* POCK_HEXAGON_H_ */
