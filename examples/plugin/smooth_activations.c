/* A backend plugin for the smooth activations of transformer blocks — GELU (erf and tanh forms),
 * SiLU, Sigmoid and Tanh, and their gradients — on f32 host memory, in plain C loops that the
 * compiler vectorizes. Built against the installed include/pock/backend.h alone: it links nothing
 * of PockEngine. An app loads it by path (pock_engine_options.backend_plugins); pockc takes
 * --backend-plugin.
 *
 * It follows the ABI's rules: nothing crosses the boundary but statuses; attributes are parsed
 * once, in prepare_op, into the op's handle; execute_op allocates nothing. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pock/backend.h"

typedef enum activation {
  GELU, GELU_GRAD, SILU, SILU_GRAD, SIGMOID, SIGMOID_GRAD, TANH, TANH_GRAD, NUM_ACTIVATIONS
} activation;

static const char* const kOpNames[NUM_ACTIVATIONS] = {"Gelu", "GeluGrad", "Silu", "SiluGrad",
                                                      "Sigmoid", "SigmoidGrad", "Tanh", "TanhGrad"};

/* What prepare_op parses once per op. */
typedef struct prepared_op {
  activation kind;
  int tanh_gelu; /* Gelu / GeluGrad with approximate = "tanh" */
} prepared_op;

typedef struct plugin_state {
  char error[256];
  uint64_t executed; /* ops run since load: the example app checks that the plugin did the work */
} plugin_state;

static plugin_state g_state;

static int find_kind(const char* op) {
  for (int k = 0; k < NUM_ACTIVATIONS; ++k) {
    if (strcmp(op, kOpNames[k]) == 0) return k;
  }
  return -1;
}

static int is_host_f32(const pock_tensor_desc* t) {
  return t->rank >= 0 && t->dtype == POCK_F32 && t->memory_space == POCK_MEMORY_HOST;
}

static int32_t supports_op(void* context, const pock_op_desc* op) {
  (void)context;
  const int kind = find_kind(op->op);
  if (kind < 0) return 0;
  const int grad = kind % 2 == 1;
  if (op->num_inputs != (grad ? 2 : 1) || op->num_outputs != 1) return 0;
  for (int i = 0; i < op->num_inputs; ++i) {
    if (!is_host_f32(&op->inputs[i]) || op->inputs[i].nbytes != op->outputs[0].nbytes) return 0;
  }
  if (!is_host_f32(&op->outputs[0])) return 0;
  return 100; /* above the built-in cpu (and ref's 1): preferred wherever it applies */
}

static pock_status fail(const char* what, const pock_op_desc* op) {
  /* snprintf-free, so the message never depends on locale or allocation */
  strncpy(g_state.error, what, sizeof g_state.error - 1);
  strncat(g_state.error, op->name, sizeof g_state.error - strlen(g_state.error) - 1);
  return POCK_ERR_INVALID_ARGUMENT;
}

static pock_status prepare_op(void* context, const pock_op_desc* op, void** handle) {
  (void)context;
  if (supports_op(NULL, op) == 0) return fail("smooth_activations: cannot run op ", op);
  prepared_op* p = (prepared_op*)calloc(1, sizeof *p);
  if (!p) return POCK_ERR_OUT_OF_MEMORY;
  p->kind = (activation)find_kind(op->op);
  for (int i = 0; i < op->num_attrs; ++i) {
    const pock_attr* a = &op->attrs[i];
    if (strcmp(a->name, "approximate") != 0) continue;
    if (a->kind != POCK_ATTR_STRING || (strcmp(a->s, "tanh") != 0 && strcmp(a->s, "none") != 0)) {
      free(p);
      return fail("smooth_activations: approximate must be 'none' or 'tanh' in op ", op);
    }
    p->tanh_gelu = strcmp(a->s, "tanh") == 0;
  }
  *handle = p;
  return POCK_OK;
}

static const float kSqrt2OverPi = 0.7978845608028654f;
static const float kInvSqrt2 = 0.7071067811865476f;
static const float kInvSqrt2Pi = 0.3989422804014327f;

static float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

static void gelu(const float* x, float* y, size_t n, int tanh_form) {
  if (tanh_form) {
    for (size_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + tanhf(kSqrt2OverPi * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
  } else {
    for (size_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * kInvSqrt2));
  }
}

static void gelu_grad(const float* dy, const float* x, float* dx, size_t n, int tanh_form) {
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    float d;
    if (tanh_form) {
      const float t = tanhf(kSqrt2OverPi * (v + 0.044715f * v * v * v));
      d = 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * 0.044715f * v * v);
    } else {
      d = 0.5f * (1.0f + erff(v * kInvSqrt2)) + v * expf(-0.5f * v * v) * kInvSqrt2Pi;
    }
    dx[i] = dy[i] * d;
  }
}

static pock_status execute_op(void* context, void* handle, const pock_op_desc* op) {
  plugin_state* state = (plugin_state*)context;
  const prepared_op* p = (const prepared_op*)handle;
  const size_t n = op->outputs[0].nbytes / sizeof(float);
  const float* a = (const float*)op->inputs[0].data;
  const float* b = op->num_inputs > 1 ? (const float*)op->inputs[1].data : NULL;
  float* out = (float*)op->outputs[0].data;
  /* Each loop reads element i before it writes it, so an output may share an input's buffer. */
  switch (p->kind) {
    case GELU: gelu(a, out, n, p->tanh_gelu); break;
    case GELU_GRAD: gelu_grad(a, b, out, n, p->tanh_gelu); break;
    case SILU: for (size_t i = 0; i < n; ++i) out[i] = a[i] * sigmoidf(a[i]); break;
    case SILU_GRAD:
      for (size_t i = 0; i < n; ++i) {
        const float s = sigmoidf(b[i]);
        out[i] = a[i] * s * (1.0f + b[i] * (1.0f - s));
      }
      break;
    case SIGMOID: for (size_t i = 0; i < n; ++i) out[i] = sigmoidf(a[i]); break;
    case SIGMOID_GRAD: for (size_t i = 0; i < n; ++i) out[i] = a[i] * b[i] * (1.0f - b[i]); break; /* (dy, y) */
    case TANH: for (size_t i = 0; i < n; ++i) out[i] = tanhf(a[i]); break;
    case TANH_GRAD: for (size_t i = 0; i < n; ++i) out[i] = a[i] * (1.0f - b[i] * b[i]); break; /* (dy, y) */
    default: return fail("smooth_activations: unprepared op ", op);
  }
  ++state->executed;
  return POCK_OK;
}

static void release_op(void* context, void* handle) {
  (void)context;
  free(handle);
}

static const char* last_error(void* context) { return ((plugin_state*)context)->error; }

/* Extension POCK_EXAMPLE_EXT_EXECUTED: ops this plugin has run since it was loaded. */
static uint64_t executed(void* context) { return ((plugin_state*)context)->executed; }

static void* get_proc_address(void* context, const char* name) {
  (void)context;
  if (strcmp(name, "pock_example_ops_executed") == 0) return (void*)executed;
  return NULL;
}

/* The one symbol a plugin exports. */
__attribute__((visibility("default"))) pock_status pock_backend_init_v1(pock_backend_v1* out) {
  if (!out || out->abi_version < 1 || out->struct_size < sizeof(pock_backend_v1)) return POCK_ERR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  out->abi_version = POCK_BACKEND_ABI_VERSION;
  out->struct_size = sizeof *out;
  out->name = "smooth_activations";
  out->context = &g_state;
  out->supports_op = supports_op;
  out->prepare_op = prepare_op;
  out->execute_op = execute_op;
  out->release_op = release_op;
  out->last_error = last_error;
  out->get_proc_address = get_proc_address;
  return POCK_OK;
}

/* For the example's test, which finds it with dlsym in the library the engine loaded. */
__attribute__((visibility("default"))) uint64_t pock_smooth_activations_executed(void) { return g_state.executed; }
