// What the process costs, measured by the operating system: peak resident memory and CPU time.
// CPU time (all threads together) is reported beside wall time because on a shared machine the
// wall time of a step also counts the time other programs held the cores.
#pragma once
#include <cstdint>

namespace personalize {

// Peak resident set size of this process so far, in bytes (getrusage's ru_maxrss).
int64_t peak_rss_bytes();
// Current resident set size in bytes (Linux /proc/self/statm; 0 where unavailable).
int64_t current_rss_bytes();
// CPU time used by this process, all threads, in seconds.
double process_cpu_seconds();
// Monotonic wall clock in seconds.
double wall_seconds();

}  // namespace personalize
