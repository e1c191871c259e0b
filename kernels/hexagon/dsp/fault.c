/* Faults on request, for the host's tests: the DSP side crashing, hanging, or answering garbage
 * mid-step must each give the host a clean POCK_ERR_BACKEND. The host sends HX_OP_FAULT only
 * when a test armed it (pock_hexagon_inject_fault). */
#include "hx_dsp.h"
#include "sys.h"

static uint32_t check_fault(const hx_op* op, uint32_t* slot) {
  (void)slot;
  return op->dim[0] >= HX_FAULT_CRASH && op->dim[0] <= HX_FAULT_GARBAGE ? HX_OK : HX_ERR_SHAPE;
}

static void run_fault(const hx_op* op) {
  if (op->dim[0] == HX_FAULT_CRASH) {
    *(volatile uint32_t*)4 = 0; /* unmapped page: SIGSEGV */
  } else if (op->dim[0] == HX_FAULT_HANG) {
    for (volatile int spin = 1; spin;) {
    }
  } else {
    static const uint32_t junk[8] = {0xdeadbeefu, 7, 7, 7, 7, 7, 7, 7};
    hx_write_full(HX_FD_CONTROL, junk, sizeof junk);
  }
}

const hx_kernel hx_fault_kernels[] = {
    {HX_OP_FAULT, check_fault, run_fault},
    {0, 0, 0},
};
