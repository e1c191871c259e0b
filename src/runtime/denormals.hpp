// Flush-to-zero for the duration of a function run, on the caller's thread. Denormal floats make
// every multiply that touches them ~100x slower on x86 and ARM cores, and training produces them
// (softmax tails, vanishing gradients) where their value is far below any tolerance. The previous
// mode is restored afterwards: an app's own float code keeps IEEE semantics. The cpu backend's
// pool workers flush through PTHREADPOOL_FLAG_DISABLE_DENORMALS; XNNPACK does so itself.
#pragma once
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace pock {

class FlushDenormalsScope {
 public:
  FlushDenormalsScope() {
#if defined(__x86_64__) || defined(__i386__)
    saved_ = _mm_getcsr();
    _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero);
#elif defined(__aarch64__)
    uint64_t fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    saved_ = fpcr;
    __asm__ volatile("msr fpcr, %0" : : "r"(fpcr | kFpcrFlushToZero));
#endif
  }
  ~FlushDenormalsScope() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(static_cast<unsigned int>(saved_));
#elif defined(__aarch64__)
    __asm__ volatile("msr fpcr, %0" : : "r"(saved_));
#endif
  }
  FlushDenormalsScope(const FlushDenormalsScope&) = delete;
  FlushDenormalsScope& operator=(const FlushDenormalsScope&) = delete;

 private:
  static constexpr uint32_t kFlushToZero = 1u << 15;     // MXCSR.FTZ: denormal results become 0
  static constexpr uint32_t kDenormalsAreZero = 1u << 6;  // MXCSR.DAZ: denormal inputs read as 0
  static constexpr uint64_t kFpcrFlushToZero = 1ull << 24;  // FPCR.FZ
  uint64_t saved_ = 0;
};

}  // namespace pock
