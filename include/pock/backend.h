/* PockEngine backend ABI, version 1.
 *
 * Every backend — the in-tree reference and CPU backends as much as an out-of-tree plugin such as
 * Hexagon — is a pock_backend_v1: a versioned struct of function pointers, each taking the
 * backend's `void* context`. A plugin is a shared library exporting
 *     pock_status pock_backend_init_v1(pock_backend_v1* out);
 * which fills `out` (after checking out->abi_version / struct_size set by the caller).
 * Rules: nothing throws across this boundary; every call that can fail returns a pock_status and
 * leaves a message for last_error(); members marked optional may be NULL.
 * A later version appends members and raises POCK_BACKEND_ABI_VERSION; it never reorders them.
 *
 * Memory spaces. A backend that sets alloc, free and copy keeps tensors in a memory space of its
 * own (GPU memory, a DSP's buffers) that the host must not touch: the runtime allocates that
 * space's arena and persistent region through alloc, moves bytes only through copy (at the points
 * the compiler scheduled, and for the caller's get/set of parameters and checkpoints), and gives the
 * backend only ops whose tensors all live in its space (memory_space POCK_MEMORY_DEVICE). A backend
 * that leaves alloc NULL runs on host memory. docs/backend-abi.md has the whole contract. */
#ifndef POCK_BACKEND_H_
#define POCK_BACKEND_H_

#include "pock/pock.h"

#ifdef __cplusplus
extern "C" {
#endif

#define POCK_BACKEND_ABI_VERSION 1

typedef enum pock_memory_space { POCK_MEMORY_HOST = 0, POCK_MEMORY_DEVICE = 1 } pock_memory_space;

/* copy()'s direction argument. */
typedef enum pock_copy_direction {
  POCK_COPY_HOST_TO_DEVICE = 0, POCK_COPY_DEVICE_TO_HOST = 1, POCK_COPY_DEVICE_TO_DEVICE = 2
} pock_copy_direction;

typedef struct pock_tensor_desc {
  pock_dtype dtype;
  int32_t rank;
  int64_t dims[POCK_TENSOR_MAX_RANK];
  void* data;          /* fixed for the engine's lifetime: the arena is planned statically */
  size_t nbytes;
  uint32_t memory_space; /* pock_memory_space */
  uint32_t flags;        /* pock_tensor_flags; fills what was padding, so the struct's size is unchanged */
} pock_tensor_desc;

typedef enum pock_tensor_flags {
  /* Contents never change while the engine is open (frozen weights, folded constants): a backend
   * may read and repack them once in prepare_op. Without it, re-read the data on every execute. */
  POCK_TENSOR_CONSTANT = 1u << 0
} pock_tensor_flags;

typedef enum pock_attr_kind {
  POCK_ATTR_INT = 0, POCK_ATTR_FLOAT = 1, POCK_ATTR_STRING = 2, POCK_ATTR_INTS = 3, POCK_ATTR_FLOATS = 4
} pock_attr_kind;

typedef struct pock_attr {
  const char* name;
  int32_t kind;          /* pock_attr_kind */
  int64_t i;
  double f;
  const char* s;
  const int64_t* ints;   /* kind INTS: `count` values */
  const double* floats;  /* kind FLOATS: `count` values */
  int64_t count;
} pock_attr;

/* One op instance as the runtime binds it. Pointers stay valid until the engine closes. */
typedef struct pock_op_desc {
  const char* op;        /* op type, e.g. "Conv2d" */
  const char* name;      /* node name from the source model, for messages */
  int32_t num_inputs;
  int32_t num_outputs;
  const pock_tensor_desc* inputs;   /* an omitted optional input has data == NULL, rank -1 */
  const pock_tensor_desc* outputs;
  int32_t num_attrs;
  const pock_attr* attrs;
  int32_t num_threads;   /* threads the backend may use for this op */
} pock_op_desc;

typedef struct pock_backend_v1 {
  uint32_t abi_version;  /* POCK_BACKEND_ABI_VERSION the struct was filled for */
  uint32_t struct_size;  /* sizeof(pock_backend_v1) as the filler knew it */
  const char* name;      /* "ref", "cpu", "hexagon", ... */
  void* context;

  /* How well the backend runs this op: 0 = unsupported, higher = preferred. Required. */
  int32_t (*supports_op)(void* context, const pock_op_desc* op);
  /* Once per op at load: may allocate per-op state. Required. */
  pock_status (*prepare_op)(void* context, const pock_op_desc* op, void** op_handle);
  /* Runs the op. No allocation is expected here. Required. */
  pock_status (*execute_op)(void* context, void* op_handle, const pock_op_desc* op);
  /* Frees what prepare_op allocated. Optional. */
  void (*release_op)(void* context, void* op_handle);

  /* Buffers in the backend's memory space. Optional for host-memory backends. */
  void* (*alloc)(void* context, size_t nbytes, size_t alignment);
  void (*free)(void* context, void* ptr);
  /* direction: pock_copy_direction (0 host->backend, 1 backend->host, 2 backend->backend). Optional for host backends.
   * Setting all three makes the backend own a memory space (see the top of this file). */
  pock_status (*copy)(void* context, void* dst, const void* src, size_t nbytes, int32_t direction);

  /* Message of the last failure; valid until the next call. Required. */
  const char* (*last_error)(void* context);
  /* Extensions without ABI breaks: NULL when unknown. Optional. */
  void* (*get_proc_address)(void* context, const char* name);
  /* Called once when the runtime drops the backend. Optional. */
  void (*destroy)(void* context);
} pock_backend_v1;

/* Extension "pock_workspace_bytes" (through get_proc_address): the bytes of scratch memory the
 * backend holds for the ops it prepared (staging, im2col columns), reported by `pockc inspect`. */
#define POCK_EXT_WORKSPACE_BYTES "pock_workspace_bytes"
typedef size_t (*pock_workspace_bytes_fn)(void* context);

/* Extension "pock_all_finite" (optional, device backends): 1 when every value of a buffer in the
 * backend's memory is finite, 0 when some is NaN or Inf, negative on failure. The runtime checks
 * the trained parameters after each step with it; without it, a device backend's parameters are
 * checked through the loss alone. */
#define POCK_EXT_ALL_FINITE "pock_all_finite"
typedef int32_t (*pock_all_finite_fn)(void* context, const void* data, size_t nbytes, pock_dtype dtype);

/* Extension "pock_zero" (optional, device backends): sets `nbytes` of the backend's memory at `dst`
 * to zero, in the order of the backend's other work (copies, ops). The runtime zeroes a device's
 * persistent region with it when an engine opens; without it, it copies zeros from the host in
 * chunks (thousands of copies for a model of a few GB). */
#define POCK_EXT_ZERO "pock_zero"
typedef pock_status (*pock_zero_fn)(void* context, void* dst, size_t nbytes);

/* Extension "pock_synchronize" (optional, device backends): waits until every op and copy the
 * backend has accepted is done, and reports the first failure among them. A backend may run ops
 * asynchronously (a GPU stream) or batch consecutive ops into one message (a DSP), provided that
 * copy() to the host waits for the work it depends on. The runtime calls this once at the end of
 * every function run (infer, train step, eval), so a step's failure is the step's. */
#define POCK_EXT_SYNCHRONIZE "pock_synchronize"
typedef pock_status (*pock_synchronize_fn)(void* context);

typedef pock_status (*pock_backend_init_v1_fn)(pock_backend_v1* out);
#define POCK_BACKEND_INIT_SYMBOL "pock_backend_init_v1"

#ifdef __cplusplus
}
#endif
#endif /* POCK_BACKEND_H_ */
