/* The shared region as the DSP program sees it, and the bounds check every record passes. */
#include "hx_dsp.h"

uint8_t* hx_region = 0;
uint32_t hx_region_bytes = 0;

uint32_t hx_check_tensor(const hx_op* op, int i, uint64_t count, uint32_t elem, uint32_t* slot) {
  *slot = (uint32_t)i;
  const uint64_t offset = op->tensor[i];
  if (op->tensor[i] == HX_ABSENT) return HX_ERR_BOUNDS;
  /* count < 2^32 and elem <= 8, so the product cannot wrap in 64 bits. */
  if (count >> 32) return HX_ERR_BOUNDS;
  const uint64_t end = offset + count * elem;
  if (end > hx_region_bytes) return HX_ERR_BOUNDS;
  if (offset & (elem - 1)) return HX_ERR_BOUNDS; /* misaligned: Hexagon faults on it */
  return HX_OK;
}

uint32_t hx_check_optional(const hx_op* op, int i, uint64_t count, uint32_t elem, uint32_t* slot) {
  if (op->tensor[i] == HX_ABSENT) return HX_OK;
  return hx_check_tensor(op, i, count, elem, slot);
}
