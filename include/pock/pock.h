/* PockEngine C API: what an app (or a JNI / Swift wrapper) calls.
 *
 * Opaque handles, status codes, no exceptions, no callbacks into the caller during a step.
 * Every call that can fail returns a pock_status; the message of the last failure on an engine
 * is available from pock_engine_last_error() until the next call on that engine.
 * Thread safety: one engine is used by one thread at a time; distinct engines are independent.
 * A call made while another thread is inside a call on the same engine returns POCK_ERR_BUSY
 * and does nothing (detected, not waited for: serialize the calls, or use one engine a thread).
 * pock_engine_close must not race any call on its engine. */
#ifndef POCK_POCK_H_
#define POCK_POCK_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define POCK_API_VERSION 1

typedef enum pock_status {
  POCK_OK = 0,
  POCK_ERR_INVALID_ARGUMENT = 1, /* a null pointer, a wrong size or name from the caller */
  POCK_ERR_INVALID_BLOB = 2,     /* the blob or checkpoint is corrupt, truncated or hostile */
  POCK_ERR_UNSUPPORTED_OP = 3,   /* an op the runtime does not know */
  POCK_ERR_MISSING_KERNEL = 4,   /* a known op with no kernel on any available backend */
  POCK_ERR_SHAPE_MISMATCH = 5,   /* a tensor's shape or dtype differs from what is expected */
  POCK_ERR_OUT_OF_MEMORY = 6,    /* the arena or a backend allocation could not be obtained */
  POCK_ERR_NUMERICAL = 7,        /* NaN or Inf in the loss or a gradient; weights were kept */
  POCK_ERR_IO = 8,               /* a file could not be read, written or renamed */
  POCK_ERR_NOT_FOUND = 9,        /* no tensor, parameter or function of that name */
  POCK_ERR_INTERNAL = 10,        /* a broken invariant: please report it */
  POCK_ERR_BACKEND = 11,         /* a backend plugin could not be loaded (missing library or symbol,
                                    wrong ABI version, init failed) or failed on its device */
  POCK_ERR_BUSY = 12             /* another thread is inside a call on this engine: nothing was done,
                                    and pock_engine_last_error still holds that call's message */
} pock_status;

typedef enum pock_dtype {
  POCK_F32 = 0, POCK_F16 = 1, POCK_BF16 = 2, POCK_I32 = 3, POCK_I64 = 4,
  POCK_I8 = 5, POCK_U8 = 6, POCK_BOOL = 7,
  /* Appended values (new codes only ever follow the last one): storage and inference dtypes. */
  POCK_F64 = 8, POCK_I16 = 9, POCK_U16 = 10, POCK_U32 = 11, POCK_U64 = 12
} pock_dtype;

typedef struct pock_engine pock_engine; /* opaque */

typedef struct pock_engine_options {
  uint32_t struct_size;   /* sizeof(pock_engine_options): lets the struct grow without ABI breaks */
  int32_t num_threads;    /* 0: one per core */
  int32_t rollback_on_failure; /* non-zero (default): a failed train step restores the weights */
  const char* backend;    /* preferred backend ("ref", "cpu", ...); NULL: as the blob says */
  /* Backend plugins to load, a NULL-terminated list (NULL: none). An entry containing '/' is a
   * path to a shared library; any other entry is a file name looked up in the directories of the
   * POCK_BACKEND_PATH environment variable (':'-separated), then by the system's loader. A plugin
   * that cannot be loaded is reported (pock_engine_backend_info) and skipped: opening fails only
   * when some op of the blob then has no backend that can run it. */
  const char* const* backend_plugins;
  /* Most bytes of memory the engine may plan for: arenas, persistent regions (every memory
   * space) and the rollback snapshot. Opening a blob whose plan is larger fails with
   * POCK_ERR_OUT_OF_MEMORY, naming both figures, before anything is allocated. 0: no budget. */
  uint64_t memory_budget_bytes;
} pock_engine_options;

#define POCK_TENSOR_MAX_RANK 8
typedef struct pock_tensor_info {
  pock_dtype dtype;
  int32_t rank;
  int64_t dims[POCK_TENSOR_MAX_RANK];
  size_t nbytes;
} pock_tensor_info;

const char* pock_status_string(pock_status status);
void pock_engine_options_init(pock_engine_options* options);

/* Opening verifies the whole blob and binds every op to a kernel before returning. */
pock_status pock_engine_open_file(const char* path, const pock_engine_options* options,
                                  pock_engine** out_engine);
/* The buffer must stay valid and unchanged until pock_engine_close (weights are not copied). */
pock_status pock_engine_open_buffer(const void* data, size_t size,
                                    const pock_engine_options* options, pock_engine** out_engine);
void pock_engine_close(pock_engine* engine);
/* Message of the last failed call on this engine; "" if none. Valid until the next call. */
const char* pock_engine_last_error(const pock_engine* engine);
/* Message of the last failed open (no engine exists then); thread-local. */
const char* pock_last_open_error(void);

/* Inputs, labels and outputs by name. */
pock_status pock_engine_tensor_info(pock_engine* engine, const char* name, pock_tensor_info* info);
pock_status pock_engine_set_input(pock_engine* engine, const char* name, const void* data,
                                  size_t nbytes);
pock_status pock_engine_get_output(pock_engine* engine, const char* name, void* data,
                                   size_t nbytes);

/* Runs the inference function: reads the inputs set before, fills the outputs. */
pock_status pock_engine_infer(pock_engine* engine);
/* Runs another inference function of the blob by name (e.g. "decode", a language model's
 * step over its KV cache): reads the inputs set before, fills the outputs, updates its caches.
 * POCK_ERR_NOT_FOUND when the blob has no such function. */
pock_status pock_engine_run(pock_engine* engine, const char* function);
/* 1 if the blob has a function of that name ("infer", "train", "eval", "decode", ...). */
int pock_engine_has_function(const pock_engine* engine, const char* function);
/* One training step on the inputs and labels set before: forward, loss, backward, update.
 * On failure the parameters and optimizer state are as they were before the call (with
 * rollback_on_failure, the default; without it, as the failed step left them). */
pock_status pock_engine_train_step(pock_engine* engine, float* out_loss);
/* Forward and loss without any update. */
pock_status pock_engine_eval_step(pock_engine* engine, float* out_loss);
int64_t pock_engine_step(const pock_engine* engine);
int pock_engine_can_train(const pock_engine* engine);

/* Parameters by their model name (trainable or frozen). */
pock_status pock_engine_get_parameter(pock_engine* engine, const char* name, void* data,
                                      size_t nbytes);
pock_status pock_engine_set_parameter(pock_engine* engine, const char* name, const void* data,
                                      size_t nbytes);

/* The backends an engine knows: built-in ones, then each plugin it was asked to load, whether
 * the load succeeded or not. Strings stay valid until the engine closes. */
typedef struct pock_backend_info {
  uint32_t struct_size;  /* set by the caller: sizeof(pock_backend_info) */
  const char* name;      /* backend name ("cpu", "hexagon"); a failed plugin: the entry given */
  const char* library;   /* resolved path of a plugin's library; "" for a built-in backend */
  pock_status status;    /* POCK_OK: usable; else why not (see message) */
  const char* message;   /* "" when usable */
  int32_t ops_bound;     /* ops of the blob bound to it */
  int32_t own_memory;    /* 1: it keeps tensors in a memory space of its own (a device) */
} pock_backend_info;
int32_t pock_engine_backend_count(const pock_engine* engine);
pock_status pock_engine_backend_info(pock_engine* engine, int32_t index, pock_backend_info* info);

/* Checkpoint = trainable parameters + optimizer state + step, written atomically. */
pock_status pock_engine_save_checkpoint(pock_engine* engine, const char* path);
pock_status pock_engine_load_checkpoint(pock_engine* engine, const char* path);

#ifdef __cplusplus
}
#endif
#endif /* POCK_POCK_H_ */
