#include "int8_dot.h"

#include <hexagon_types.h>
#include <hvx_hexagon_protos.h>

#include "hx_dsp.h"

static int8_t g_row[HX_MAX_INT8_ROW] __attribute__((aligned(128)));
static float g_floats[HX_MAX_INT8_ROW] __attribute__((aligned(128)));

int8_t* hx_int8_row(void) { return g_row; }
float* hx_float_row(void) { return g_floats; }

int32_t hx_dot_i8(const int8_t* a, const int8_t* b, uint32_t n) {
  HVX_Vector acc = Q6_V_vzero();
  uint32_t i = 0;
  for (; i + 128 <= n; i += 128) {
    /* Unaligned vector loads (vmemu): rows start anywhere in the shared region. */
    const HVX_Vector va = *(const HVX_UVector*)(a + i);
    const HVX_Vector vb = *(const HVX_UVector*)(b + i);
    acc = Q6_Vw_vrmpyacc_VwVbVb(acc, va, vb);
  }
  int32_t lanes[32] __attribute__((aligned(128)));
  *(HVX_Vector*)lanes = acc;
  int32_t sum = 0;
  for (int l = 0; l < 32; ++l) sum += lanes[l];
  for (; i < n; ++i) sum += (int32_t)a[i] * (int32_t)b[i];
  return sum;
}
