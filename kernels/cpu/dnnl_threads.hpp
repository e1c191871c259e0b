// The thread count of the oneDNN calls the cpu backend makes (bf16 GEMMs, convolutions).
#pragma once

namespace pock::cpu {

// oneDNN as Debian builds it runs on GNU OpenMP, whose thread count belongs to the calling thread
// (omp_set_num_threads): set it to the op's num_threads before each oneDNN call; 0 or less keeps
// OpenMP's default (one per core). A no-op in a build without oneDNN.
void set_dnnl_threads(int threads);

}  // namespace pock::cpu
