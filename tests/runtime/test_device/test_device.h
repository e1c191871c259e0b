/* The test device (test_device_backend.cpp): what a test reads from and tells the plugin, through
 * plain C functions it finds with dlsym in the library an engine loaded. */
#ifndef POCK_TEST_DEVICE_H_
#define POCK_TEST_DEVICE_H_

#include <stdint.h>

typedef struct test_device_counts {
  int64_t allocs, frees;
  int64_t copies[3];      /* by pock_copy_direction */
  int64_t copy_bytes[3];
  int64_t executes;
  int64_t all_finite_calls;       /* pock_all_finite */
  int64_t all_finite_many_calls;  /* pock_all_finite_many */
  int64_t all_finite_many_buffers;
  int64_t zero_calls;  /* pock_zero */
  int64_t zero_bytes;
} test_device_counts;

typedef void (*test_device_counters_fn)(test_device_counts* out);
/* The n-th execute from now (1: the next) fails as a dead device (POCK_ERR_BACKEND), and so does
 * every execute after it; copy keeps working, as for a DSP whose shared memory the host maps. */
typedef void (*test_device_fail_after_fn)(int64_t n);

/* Which optional extensions get_proc_address offers from now on (an engine asks when it opens):
 * a mask of the three below; all by default. Kept across engines: set it back when done. */
#define TEST_DEVICE_OFFERS_ALL_FINITE 1
#define TEST_DEVICE_OFFERS_ALL_FINITE_MANY 2
#define TEST_DEVICE_OFFERS_ZERO 4
#define TEST_DEVICE_OFFERS_EVERYTHING 7
typedef void (*test_device_offer_fn)(int32_t extensions);
/* After the next execute of the op named `op_name`, its first input's first value becomes NaN:
 * an optimizer update that overflowed on the device (input 0 is the parameter it updates in
 * place). NULL disarms it. */
typedef void (*test_device_poison_after_fn)(const char* op_name);

#define TEST_DEVICE_COUNTERS "test_device_counters"
#define TEST_DEVICE_FAIL_AFTER "test_device_fail_after"
#define TEST_DEVICE_OFFER "test_device_offer"
#define TEST_DEVICE_POISON_AFTER "test_device_poison_after"

#endif
