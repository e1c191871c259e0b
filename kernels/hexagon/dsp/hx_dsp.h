/* What the DSP program's op families share: the mapped region, the checks that every record
 * passes before a batch runs, and the kernel table that dispatch.c walks. One kernel per opcode:
 * `check` proves that the record's tensors lie inside the region and its sizes make sense (the
 * host is trusted no more than the host trusts us), `run` then computes without any check. */
#ifndef HX_DSP_H_
#define HX_DSP_H_

#include <stdint.h>

#include "../hx_wire.h"

extern uint8_t* hx_region;
extern uint32_t hx_region_bytes;

/* Checks return HX_OK or an HX_ERR_* status; *slot names the offending tensor slot. */
typedef uint32_t (*hx_check_fn)(const hx_op* op, uint32_t* slot);
typedef void (*hx_run_fn)(const hx_op* op);

typedef struct hx_kernel {
  uint32_t opcode;
  hx_check_fn check;
  hx_run_fn run;
} hx_kernel;

/* Tensor slot `i` holds `count` elements of `elem` bytes inside the region (count may be 0). */
uint32_t hx_check_tensor(const hx_op* op, int i, uint64_t count, uint32_t elem, uint32_t* slot);
/* The same, or HX_ABSENT. */
uint32_t hx_check_optional(const hx_op* op, int i, uint64_t count, uint32_t elem, uint32_t* slot);

static inline float* hx_f32(const hx_op* op, int i) { return (float*)(hx_region + op->tensor[i]); }
static inline uint8_t* hx_u8(const hx_op* op, int i) { return hx_region + op->tensor[i]; }
static inline int hx_present(const hx_op* op, int i) { return op->tensor[i] != HX_ABSENT; }

#define HX_CHECK(expr)                  \
  do {                                  \
    const uint32_t hx_status_ = (expr); \
    if (hx_status_ != HX_OK) return hx_status_; \
  } while (0)

/* One list per family file (linalg.c, elementwise.c, ...), in the names of kernels/ref. */
extern const hx_kernel hx_linalg_kernels[];
extern const hx_kernel hx_elementwise_kernels[];
extern const hx_kernel hx_elementwise_grad_kernels[];
extern const hx_kernel hx_activation_mask_kernels[];
extern const hx_kernel hx_training_kernels[];
extern const hx_kernel hx_conv_kernels[];
extern const hx_kernel hx_layer_grad_conv_kernels[];
extern const hx_kernel hx_fault_kernels[];
/* Each list ends with an entry whose opcode is 0. */

#endif
