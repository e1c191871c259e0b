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
} test_device_counts;

typedef void (*test_device_counters_fn)(test_device_counts* out);
/* The n-th execute from now (1: the next) fails as a dead device (POCK_ERR_BACKEND), and so does
 * every execute after it; copy keeps working, as for a DSP whose shared memory the host maps. */
typedef void (*test_device_fail_after_fn)(int64_t n);

#define TEST_DEVICE_COUNTERS "test_device_counters"
#define TEST_DEVICE_FAIL_AFTER "test_device_fail_after"

#endif
