/* examples/minimal_app through the C API alone (pock.h): open a blob compiled with a recipe,
 * train on the app's own data, save a checkpoint, restore it (as after a restart), classify.
 * A blob compiled without a recipe only classifies. Plain C99: proves the API is C.
 *
 *   c_api MODEL.pock [CHECKPOINT]   (input "x" f32 [B, ...], label "label" i64, output "logits" [B, C])
 *
 * Every call's status is checked and reported with the engine's message. */
#include <stdio.h>
#include <stdlib.h>

#include "pock/pock.h"

static int fail(pock_engine* engine, const char* what, pock_status status) {
  fprintf(stderr, "%s failed: %s: %s\n", what, pock_status_string(status),
          engine ? pock_engine_last_error(engine) : pock_last_open_error());
  pock_engine_close(engine);
  return 1;
}

/* The app's own data: sample i belongs to class i % C and lights up the features j with
 * j % C == its class. */
static void make_batch(int64_t batch, int64_t features, int64_t classes, float* x, int64_t* labels) {
  int64_t i, j;
  for (i = 0; i < batch; ++i) {
    labels[i] = i % classes;
    for (j = 0; j < features; ++j) x[i * features + j] = j % classes == labels[i] ? 1.0f : -1.0f;
  }
}

/* Samples whose largest logit is their label. */
static int64_t count_correct(const float* logits, const int64_t* labels, int64_t batch, int64_t classes) {
  int64_t i, c, best, correct = 0;
  for (i = 0; i < batch; ++i) {
    best = 0;
    for (c = 1; c < classes; ++c) best = logits[i * classes + c] > logits[i * classes + best] ? c : best;
    correct += best == labels[i];
  }
  return correct;
}

/* Runs `steps` training steps on one batch, then saves and restores a checkpoint. */
static pock_status train(pock_engine* engine, const float* x, size_t x_bytes, const int64_t* labels,
                         size_t label_bytes, int steps, const char* checkpoint) {
  pock_status status = POCK_OK;
  float loss = 0;
  int step;
  for (step = 1; step <= steps && status == POCK_OK; ++step) {
    status = pock_engine_set_input(engine, "x", x, x_bytes);
    if (status == POCK_OK) status = pock_engine_set_input(engine, "label", labels, label_bytes);
    if (status == POCK_OK) status = pock_engine_train_step(engine, &loss);
    if (status == POCK_OK && (step == 1 || step % 25 == 0)) printf("step %d  loss %.3g\n", step, loss);
  }
  if (status == POCK_OK) status = pock_engine_save_checkpoint(engine, checkpoint);
  if (status == POCK_OK) status = pock_engine_load_checkpoint(engine, checkpoint);
  return status;
}

int main(int argc, char** argv) {
  const char* checkpoint = argc > 2 ? argv[2] : "c_api.ckpt";
  pock_engine_options options;
  pock_engine* engine = NULL;
  pock_tensor_info x_info, logits_info;
  pock_status status;
  int64_t batch, classes, correct;
  float* x;
  float* logits;
  int64_t* labels;

  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.pock [CHECKPOINT]\n", argv[0]);
    return 2;
  }
  pock_engine_options_init(&options);
  options.num_threads = 1;
  status = pock_engine_open_file(argv[1], &options, &engine);
  if (status != POCK_OK) return fail(NULL, "open", status);
  status = pock_engine_tensor_info(engine, "x", &x_info);
  if (status == POCK_OK) status = pock_engine_tensor_info(engine, "logits", &logits_info);
  if (status != POCK_OK) return fail(engine, "tensor info", status);
  if (x_info.dtype != POCK_F32 || logits_info.dtype != POCK_F32 || x_info.rank < 1 || x_info.dims[0] < 1) {
    fprintf(stderr, "this example needs an f32 input \"x\" [B, ...] and f32 logits [B, C]\n");
    pock_engine_close(engine);
    return 1;
  }
  batch = x_info.dims[0];
  classes = logits_info.dims[logits_info.rank - 1];

  x = (float*)malloc(x_info.nbytes);
  logits = (float*)malloc(logits_info.nbytes);
  labels = (int64_t*)malloc((size_t)batch * sizeof(int64_t));
  if (!x || !logits || !labels) {
    fprintf(stderr, "out of memory\n");
    status = POCK_ERR_OUT_OF_MEMORY;
  } else {
    make_batch(batch, (int64_t)(x_info.nbytes / sizeof(float)) / batch, classes, x, labels);
    if (pock_engine_can_train(engine)) {
      status = train(engine, x, x_info.nbytes, labels, (size_t)batch * sizeof(int64_t), 100, checkpoint);
    } else {
      printf("%s was compiled without a recipe: classifying only\n", argv[1]);
    }
    if (status == POCK_OK) status = pock_engine_set_input(engine, "x", x, x_info.nbytes);
    if (status == POCK_OK) status = pock_engine_infer(engine);
    if (status == POCK_OK) status = pock_engine_get_output(engine, "logits", logits, logits_info.nbytes);
  }
  if (status == POCK_OK) {
    correct = count_correct(logits, labels, batch, classes);
    printf("step %lld, accuracy %lld/%lld\n", (long long)pock_engine_step(engine), (long long)correct,
           (long long)batch);
  }
  free(x);
  free(logits);
  free(labels);
  if (status != POCK_OK) return fail(engine, "training or inference", status);
  pock_engine_close(engine);
  return 0;
}
