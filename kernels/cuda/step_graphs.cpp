#include "kernels/cuda/step_graphs.hpp"

#include <cstdlib>
#include <cstring>

#include "kernels/cuda/stream.hpp"

namespace pock::cuda {

bool StepGraphs::enabled_by_environment() {
  // On unless POCK_CUDA_GRAPHS=0: on an H200 every benchmark workload ran faster with graphs
  // (1.1x-3.3x) and trained to the same bits (benchmarks/RESULTS.md, "cuda backend").
  const char* env = std::getenv("POCK_CUDA_GRAPHS");
  return !(env && std::strcmp(env, "0") == 0);
}

void StepGraphs::reserve_one_more() {
  ++capacity_;
  pending_.reserve(capacity_);
  key_.reserve(capacity_);
}

void StepGraphs::record(const KernelDef* def, void* state, const pock_op_desc* desc) {
  pending_.push_back({def, state, desc});
  key_.push_back(desc);
}

size_t StepGraphs::graphs() const {
  size_t n = 0;
  for (const auto& [key, entry] : entries_) n += entry.exec != nullptr;
  return n;
}

void StepGraphs::clear() {
  for (auto& [key, entry] : entries_) {
    if (entry.exec) cudaGraphExecDestroy(entry.exec);
  }
  entries_.clear();
  pending_.clear();
  key_.clear();
}

Status StepGraphs::run_op_by_op() {
  for (const Recorded& r : pending_) {
    const Status s = r.def->run(KernelCall{r.desc, r.state});
    if (!s.is_ok()) return s;
  }
  return Status::ok();
}

Status StepGraphs::capture_and_launch(Instance& in, Entry& entry) {
  cudaStream_t stream = in.stream();
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    cudaGetLastError();
    entry.uncapturable = true;
    return run_op_by_op();
  }
  const Status ran = run_op_by_op();  // captured, not run
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  cudaError_t made = cudaErrorUnknown;
  if (ran.is_ok() && ended == cudaSuccess && graph) made = cudaGraphInstantiate(&entry.exec, graph, 0);
  if (graph) cudaGraphDestroy(graph);
  if (made != cudaSuccess) {
    // Not capturable (or an op failed while captured): run it as it is, which also reports the
    // op's own failure, and never try this run again.
    cudaGetLastError();
    entry.exec = nullptr;
    entry.uncapturable = true;
    return run_op_by_op();
  }
  return check(cudaGraphLaunch(entry.exec, stream), "cuda: graph launch");
}

Status StepGraphs::flush(Instance& in) {
  if (pending_.empty()) return Status::ok();
  auto it = entries_.find(key_);
  if (it == entries_.end()) it = entries_.emplace(key_, Entry{}).first;  // first sighting only
  Entry& entry = it->second;
  Status s;
  if (entry.exec) {
    s = check(cudaGraphLaunch(entry.exec, in.stream()), "cuda: graph launch");
  } else if (!entry.uncapturable && ++entry.seen >= 2) {
    s = capture_and_launch(in, entry);
  } else {
    s = run_op_by_op();
  }
  pending_.clear();
  key_.clear();
  return s;
}

}  // namespace pock::cuda
