/* int8 dot products on HVX (vrmpy: 128 byte products a cycle, summed four at a time into 32
 * int32 lanes), and the row scratch the int8 kernels quantize into. v66/v67 HVX is integer-only,
 * which is what these kernels need: the float work is one scale per row and per output. */
#ifndef POCK_HEXAGON_INT8_DOT_H_
#define POCK_HEXAGON_INT8_DOT_H_
#include <stdint.h>

/* sum_i a[i] * b[i], exact in int32 for n <= HX_MAX_INT8_ROW; any alignment. */
int32_t hx_dot_i8(const int8_t* a, const int8_t* b, uint32_t n);

/* Scratch for one quantized row and one float row (HX_MAX_INT8_ROW each), 128-byte aligned. */
int8_t* hx_int8_row(void);
float* hx_float_row(void);

#endif
