// Failures that a kernel finds on the device, where it cannot return a status (a label outside
// the classes): at prepare an op registers what the message will be and gets a site id; its
// kernel writes that id into the instance's error word; pock_synchronize, at the end of the
// function run, reports the site found there as the step's failure.
#pragma once
#include <cstdint>
#include <string>

namespace pock::cuda {

// Prepare only (the current instance's list). Ids start at 1.
int32_t add_error_site(const std::string& message);
// The device address kernels store a site id to (mapped pinned memory: a plain store, no atomics).
int32_t* device_error_word();

}  // namespace pock::cuda
