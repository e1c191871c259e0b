/* Runs a PockEngine blob from C: open the file, fill the input, infer, print the output.
 *
 *   c_api MODEL.pock [INPUT [OUTPUT]]      (INPUT defaults to "x", OUTPUT to "logits")
 *
 * The input is filled with a fixed ramp so that runs are comparable. Every call's status is
 * checked and reported with the engine's message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pock/pock.h"

static int fail(pock_engine* engine, const char* what, pock_status status) {
  fprintf(stderr, "%s failed: %s: %s\n", what, pock_status_string(status),
          engine ? pock_engine_last_error(engine) : pock_last_open_error());
  pock_engine_close(engine);
  return 1;
}

static void print_dims(const pock_tensor_info* info) {
  int i;
  printf("[");
  for (i = 0; i < info->rank; ++i) printf(i ? ", %lld" : "%lld", (long long)info->dims[i]);
  printf("]");
}

/* An f32 input gets a fixed ramp in [-1, 1]; any other dtype gets zeros. Returns 1 for a ramp. */
static int fill_ramp(void* data, const pock_tensor_info* info) {
  size_t i;
  if (info->dtype == POCK_F32) {
    float* v = (float*)data;
    for (i = 0; i < info->nbytes / sizeof(float); ++i) v[i] = (float)((int)(i % 17) - 8) / 8.0f;
    return 1;
  }
  memset(data, 0, info->nbytes);
  return 0;
}

int main(int argc, char** argv) {
  const char* input_name = argc > 2 ? argv[2] : "x";
  const char* output_name = argc > 3 ? argv[3] : "logits";
  pock_engine_options options;
  pock_engine* engine = NULL;
  pock_tensor_info in_info, out_info;
  pock_status status;
  void* input;
  float* output;
  size_t i, count;

  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.pock [INPUT [OUTPUT]]\n", argv[0]);
    return 2;
  }
  pock_engine_options_init(&options);
  options.num_threads = 1;
  status = pock_engine_open_file(argv[1], &options, &engine);
  if (status != POCK_OK) return fail(NULL, "open", status);

  status = pock_engine_tensor_info(engine, input_name, &in_info);
  if (status != POCK_OK) return fail(engine, "input info", status);
  status = pock_engine_tensor_info(engine, output_name, &out_info);
  if (status != POCK_OK) return fail(engine, "output info", status);
  if (out_info.dtype != POCK_F32) {
    fprintf(stderr, "this example prints f32 outputs only\n");
    pock_engine_close(engine);
    return 1;
  }

  input = malloc(in_info.nbytes ? in_info.nbytes : 1);
  output = (float*)malloc(out_info.nbytes ? out_info.nbytes : 1);
  if (!input || !output) {
    fprintf(stderr, "out of memory\n");
    free(input);
    free(output);
    pock_engine_close(engine);
    return 1;
  }
  printf("%s: input %s", argv[1], input_name);
  print_dims(&in_info);
  printf(" filled with %s\n", fill_ramp(input, &in_info) ? "a ramp" : "zeros");

  status = pock_engine_set_input(engine, input_name, input, in_info.nbytes);
  if (status == POCK_OK) status = pock_engine_infer(engine);
  if (status == POCK_OK) status = pock_engine_get_output(engine, output_name, output, out_info.nbytes);
  if (status != POCK_OK) {
    free(input);
    free(output);
    return fail(engine, "infer", status);
  }

  count = out_info.nbytes / sizeof(float);
  printf("%s", output_name);
  print_dims(&out_info);
  printf(" =");
  for (i = 0; i < count && i < 16; ++i) printf(" %.4f", output[i]);
  if (count > 16) printf(" ... (%zu values)", count);
  printf("\n");

  free(input);
  free(output);
  pock_engine_close(engine);
  return 0;
}
