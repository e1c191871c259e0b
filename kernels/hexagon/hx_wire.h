/* The wire format between the host plugin (kernels/hexagon/host) and the DSP program
 * (kernels/hexagon/dsp): what travels over the control socket. Tensors never travel: they live in
 * one shared region that both sides map, and a message names them by byte offset into it.
 *
 * Both compilers see this header — g++ for x86-64 and clang --target=hexagon, which has short
 * enums, unsigned char and 32-bit pointers by default — so every field is a fixed-width 32-bit
 * integer or a float, no enum or pointer is ever a field, and each struct's size is asserted.
 *
 * A conversation: the host sends HX_ATTACH (the region's size); the DSP maps the region and
 * replies. Then each HX_RUN carries a batch of op records, which the DSP checks in full (every
 * offset and size inside the region, every opcode known) before it runs the first one, and
 * answers with one hx_reply per batch. HX_EXIT, or the socket closing, ends the DSP program.
 * docs/hexagon.md has the whole protocol. */
#ifndef POCK_HX_WIRE_H_
#define POCK_HX_WIRE_H_

#include <stdint.h>

#define HX_MAGIC 0x50584748u /* "HGXP" little-endian */
#define HX_VERSION 3u  /* 2: pointwise Conv2d and its gradients; 3: int8 Linear on HVX */

/* File descriptors the DSP program starts with (the host's spawn code puts them there). */
#define HX_FD_REGION 3  /* the shared region: a memfd the DSP maps MAP_SHARED */
#define HX_FD_CONTROL 4 /* one end of a stream socketpair: messages in, replies out */

/* hx_header.kind */
#define HX_ATTACH 1u /* arg0: region bytes. No records. */
#define HX_RUN 2u    /* `count` hx_op records follow */
#define HX_EXIT 3u   /* no reply */

#define HX_MAX_BATCH 512u         /* records per HX_RUN; the host flushes a full queue early */
#define HX_MAX_REGION (1u << 30)  /* the DSP's 32-bit address space must also hold its code and stack */
#define HX_ABSENT 0xffffffffu     /* hx_op.tensor[i] of an omitted optional input */

typedef struct hx_header {
  uint32_t magic;    /* HX_MAGIC */
  uint32_t version;  /* HX_VERSION */
  uint32_t kind;     /* HX_ATTACH, HX_RUN, HX_EXIT */
  uint32_t sequence; /* the host's message counter; the reply echoes it */
  uint32_t count;    /* records that follow */
  uint32_t length;   /* bytes of the whole message, header included */
  uint32_t arg0;     /* HX_ATTACH: region bytes */
  uint32_t reserved;
} hx_header;

/* Opcodes, with the hx_op slots each reads: t = tensor[] (offsets), d = dim[] (sizes), p = param[].
 * Every f32 tensor is contiguous and row-major; "rows" is the product of the leading dims. */
#define HX_OP_LINEAR 1u             /* t0 x [rows, k], t1 w [n, k], t2 bias [n] or ABSENT, t3 y [rows, n];
                                       d0 rows, d1 k, d2 n; flags ACT_* */
#define HX_OP_MATMUL 2u             /* t0 a, t1 b, t3 y [batch, m, n]; d0 batch, d1 m, d2 n, d3 k,
                                       d4/d5: a/b has the batch (1) or is one matrix for all (0); TRANSPOSE_* */
#define HX_OP_LINEAR_INPUT_GRAD 3u  /* t0 dy [rows, n], t1 w [n, k], t3 dx [rows, k]; d0 rows, d1 n, d2 k */
#define HX_OP_LINEAR_WEIGHT_GRAD 4u /* t0 dy [rows, n], t1 x [rows, k], t3 dw [n, k]; d0 rows, d1 n, d2 k */
#define HX_OP_SUM_ROWS 5u           /* SumToShape [rows, n] -> [n] (a bias gradient): t0 x, t3 y; d0 rows, d1 n */
#define HX_OP_UNARY 6u              /* t0 x, t3 y; d0 count, d1 HX_UNARY_* */
#define HX_OP_UNARY_GRAD 7u         /* t0 dy, t1 x (the forward input), t3 dx; d0 count, d1 HX_UNARY_* */
#define HX_OP_BINARY 8u             /* t0 a [rows, nb], t1 b [nb] repeated over rows (nb == count: same
                                       shape), t3 y; d0 count, d1 HX_BINARY_*, d2 nb, d3 rows */
#define HX_OP_CLIP_MASK 9u          /* t0 v, t3 u8 mask; d0 count; p0 lo, p1 hi; INCLUSIVE, HAS_LO, HAS_HI */
#define HX_OP_MASK_GRAD 10u         /* t0 dy, t1 u8 mask, t3 dx; d0 count */
#define HX_OP_SGD_UPDATE 11u        /* t0 param, t1 grad, t2 i64 step, t3 momentum buffer or ABSENT,
                                       t4 f32 clip scale or ABSENT; d0 count (the gradient's), d1 accumulation,
                                       d2 warmup steps, d3 total steps; p: HX_P_*; NESTEROV, ZERO_GRAD, SCHEDULE_* */
#define HX_OP_ADAM_UPDATE 12u       /* t0 param, t1 grad, t2 i64 step, t3 exp_avg, t4 exp_avg_sq, t5 clip scale
                                       or ABSENT; d as SgdUpdate; p: HX_P_*; DECOUPLED, ZERO_GRAD, SCHEDULE_* */
/* Pointwise (1x1, stride 1, unpadded, one group) Conv2d in NCHW, with P = H * W pixels per plane. */
#define HX_OP_POINTWISE_CONV 13u    /* t0 x [N, C, P], t1 w [O, C], t2 bias [O] or ABSENT, t3 y [N, O, P];
                                       d0 N, d1 C, d2 O, d3 P; flags ACT_* */
#define HX_OP_POINTWISE_CONV_INPUT_GRAD 14u  /* t0 dy [N, O, P], t1 w [O, C], t3 dx [N, C, P]; d0 N, d1 C, d2 O, d3 P */
#define HX_OP_POINTWISE_CONV_WEIGHT_GRAD 15u /* t0 x [N, C, P], t1 dy [N, O, P], t3 dw [R, C] for the leading R
                                                output channels; d0 N, d1 C, d2 O, d3 P, d4 R */
#define HX_OP_CHANNEL_SUM 16u       /* Conv2dGradBias: t0 dy [N, O, P], t3 db [R], the leading R channels
                                       summed over N and P; d0 N, d1 O, d2 P, d3 R */
/* Frozen int8 weights (recipe frozen_weights "int8"), int8 products on HVX; rows quantized as
 * kernels/int8_rows.h defines. A row holds at most HX_MAX_INT8_ROW elements. */
#define HX_OP_LINEAR_INT8 17u       /* t0 x f32 [rows, k], t1 w i8 [n, k], t2 scale f32 [n], t3 y [rows, n],
                                       t4 bias [n] or ABSENT; d0 rows, d1 k, d2 n */
#define HX_OP_LINEAR_INT8_INPUT_GRAD 18u /* t0 dy f32 [rows, n], t1 w_t i8 [k, n], t2 scale f32 [n], t3 dx [rows, k];
                                            d0 rows, d1 n, d2 k */
#define HX_MAX_INT8_ROW 8192u
/* Fault injection for tests: d0 = HX_FAULT_*. The host sends it only when a test armed it. */
#define HX_OP_FAULT 100u

#define HX_UNARY_RELU 1u
#define HX_UNARY_RELU6 2u
#define HX_UNARY_GELU 3u      /* erf form */
#define HX_UNARY_GELU_TANH 4u /* tanh form */
#define HX_UNARY_SILU 5u

#define HX_BINARY_ADD 1u
#define HX_BINARY_MUL 2u

/* param[] of the updates. The host sends 1 - beta and log(beta), computed in double, because
 * float beta2 = 0.999f alone would make Adam's 1 - beta2^t wrong by 1e-5 at t = 1. */
#define HX_P_LR 0
#define HX_P_MIN_LR 1
#define HX_P_WEIGHT_DECAY 2
#define HX_P_MOMENTUM 3 /* SgdUpdate */
#define HX_P_BETA1 3    /* AdamUpdate */
#define HX_P_BETA2 4
#define HX_P_ONE_MINUS_BETA1 5
#define HX_P_ONE_MINUS_BETA2 6
#define HX_P_LOG_BETA1 7
#define HX_P_LOG_BETA2 8
#define HX_P_EPS 9

#define HX_FAULT_CRASH 1u   /* the DSP program dies of SIGSEGV */
#define HX_FAULT_HANG 2u    /* it spins forever */
#define HX_FAULT_GARBAGE 3u /* it answers a reply that is not one */

/* hx_op.flags */
#define HX_FLAG_ACT_RELU (1u << 0)  /* Linear, pointwise Conv2d: fused epilogue */
#define HX_FLAG_ACT_RELU6 (1u << 1)
#define HX_FLAG_TRANSPOSE_A (1u << 2) /* MatMul */
#define HX_FLAG_TRANSPOSE_B (1u << 3)
#define HX_FLAG_NESTEROV (1u << 4)    /* SgdUpdate */
#define HX_FLAG_DECOUPLED (1u << 5)   /* AdamUpdate: AdamW */
#define HX_FLAG_ZERO_GRAD (1u << 6)   /* updates: the gradient is an accumulator, cleared once applied */
#define HX_FLAG_INCLUSIVE (1u << 7)   /* ClipMask */
#define HX_FLAG_HAS_LO (1u << 8)
#define HX_FLAG_HAS_HI (1u << 9)
#define HX_FLAG_SCHEDULE_WARMUP (1u << 10) /* updates: linear_warmup */
#define HX_FLAG_SCHEDULE_COSINE (1u << 11) /* updates: cosine (with its warm-up) */

#define HX_MAX_TENSORS 6
#define HX_MAX_DIMS 8
#define HX_MAX_PARAMS 16

typedef struct hx_op {
  uint32_t opcode;
  uint32_t flags;
  uint32_t tensor[HX_MAX_TENSORS]; /* byte offsets into the region, or HX_ABSENT */
  uint32_t dim[HX_MAX_DIMS];       /* element counts: the opcode's sizes */
  float param[HX_MAX_PARAMS];      /* the opcode's scalars (learning rate, bounds, ...) */
} hx_op;

/* hx_reply.status */
#define HX_OK 0u
#define HX_ERR_MESSAGE 1u  /* bad magic, version, kind or length: the DSP exits after replying */
#define HX_ERR_OPCODE 2u   /* record `failed_op` has an unknown opcode */
#define HX_ERR_BOUNDS 3u   /* a tensor of record `failed_op` does not lie inside the region */
#define HX_ERR_SHAPE 4u    /* record `failed_op` has sizes its opcode cannot run */
#define HX_ERR_STEP 5u     /* an update's step counter is negative or beyond 2^31 */
#define HX_ERR_NOT_ATTACHED 6u /* HX_RUN before HX_ATTACH, or the region could not be mapped */

typedef struct hx_reply {
  uint32_t magic;     /* HX_MAGIC */
  uint32_t version;   /* HX_VERSION */
  uint32_t sequence;  /* the message's */
  uint32_t status;    /* HX_OK or HX_ERR_* */
  uint32_t failed_op; /* index in the batch of the record that failed, HX_ABSENT when none */
  uint32_t ops_run;   /* records completed */
  uint32_t detail;    /* HX_ERR_BOUNDS: the tensor slot; HX_ATTACH: the DSP's region address */
  uint32_t reserved;
} hx_reply;

#ifdef __cplusplus
static_assert(sizeof(hx_header) == 32, "hx_header is 32 bytes on both sides");
static_assert(sizeof(hx_op) == 4 * (2 + HX_MAX_TENSORS + HX_MAX_DIMS + HX_MAX_PARAMS), "hx_op has no padding");
static_assert(sizeof(hx_reply) == 32, "hx_reply is 32 bytes on both sides");
#else
_Static_assert(sizeof(hx_header) == 32, "hx_header is 32 bytes on both sides");
_Static_assert(sizeof(hx_op) == 4 * (2 + HX_MAX_TENSORS + HX_MAX_DIMS + HX_MAX_PARAMS), "hx_op has no padding");
_Static_assert(sizeof(hx_reply) == 32, "hx_reply is 32 bytes on both sides");
#endif

#endif /* POCK_HX_WIRE_H_ */
