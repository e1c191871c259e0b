#include "sys.h"

/* Syscall numbers of Linux's generic table, which Hexagon uses. */
enum { SYS_munmap = 215, SYS_mmap = 222, SYS_read = 63, SYS_write = 64, SYS_exit_group = 94 };
enum { PROT_READ = 1, PROT_WRITE = 2, MAP_SHARED = 1 };

static long syscall6(long n, long a, long b, long c, long d, long e, long f) {
  register long r0 __asm__("r0") = a;
  register long r1 __asm__("r1") = b;
  register long r2 __asm__("r2") = c;
  register long r3 __asm__("r3") = d;
  register long r4 __asm__("r4") = e;
  register long r5 __asm__("r5") = f;
  register long r6 __asm__("r6") = n;
  __asm__ volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r5), "r"(r6) : "memory");
  return r0;
}

long hx_read(int fd, void* buf, size_t n) { return syscall6(SYS_read, fd, (long)buf, (long)n, 0, 0, 0); }
long hx_write(int fd, const void* buf, size_t n) { return syscall6(SYS_write, fd, (long)buf, (long)n, 0, 0, 0); }

void* hx_mmap_shared(int fd, size_t bytes) {
  /* Hexagon's mmap is mmap2: the offset counts 4 KiB pages (0 here). */
  const long p = syscall6(SYS_mmap, 0, (long)bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p < 0 && p > -4096 ? NULL : (void*)p;
}

_Noreturn void hx_exit(int code) {
  for (;;) syscall6(SYS_exit_group, code, 0, 0, 0, 0, 0);
}

int hx_read_full(int fd, void* buf, size_t n) {
  uint8_t* p = (uint8_t*)buf;
  while (n > 0) {
    const long got = hx_read(fd, p, n);
    if (got == -4) continue; /* EINTR */
    if (got <= 0) return -1;
    p += got;
    n -= (size_t)got;
  }
  return 0;
}

int hx_write_full(int fd, const void* buf, size_t n) {
  const uint8_t* p = (const uint8_t*)buf;
  while (n > 0) {
    const long put = hx_write(fd, p, n);
    if (put == -4) continue;
    if (put <= 0) return -1;
    p += put;
    n -= (size_t)put;
  }
  return 0;
}

void* memcpy(void* dst, const void* src, size_t n) {
  uint8_t* d = (uint8_t*)dst;
  const uint8_t* s = (const uint8_t*)src;
  for (size_t i = 0; i < n; ++i) d[i] = s[i];
  return dst;
}

void* memmove(void* dst, const void* src, size_t n) {
  uint8_t* d = (uint8_t*)dst;
  const uint8_t* s = (const uint8_t*)src;
  if (d < s) {
    for (size_t i = 0; i < n; ++i) d[i] = s[i];
  } else {
    for (size_t i = n; i > 0; --i) d[i - 1] = s[i - 1];
  }
  return dst;
}

void* memset(void* dst, int c, size_t n) {
  uint8_t* d = (uint8_t*)dst;
  for (size_t i = 0; i < n; ++i) d[i] = (uint8_t)c;
  return dst;
}
