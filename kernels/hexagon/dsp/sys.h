/* Linux system calls of the DSP program (Hexagon: number in r6, arguments in r0-r5, trap0(#1),
 * result in r0, negative errno on failure), and the few libc pieces the compiler itself calls. */
#ifndef HX_SYS_H_
#define HX_SYS_H_

#include <stddef.h>
#include <stdint.h>

/* Each returns what the kernel returned: >= 0, or -errno. */
long hx_read(int fd, void* buf, size_t n);
long hx_write(int fd, const void* buf, size_t n);
void* hx_mmap_shared(int fd, size_t bytes); /* NULL on failure */
_Noreturn void hx_exit(int code);

/* Reads or writes exactly n bytes; 0 on success, -1 on EOF or error. */
int hx_read_full(int fd, void* buf, size_t n);
int hx_write_full(int fd, const void* buf, size_t n);

/* clang emits calls to these for struct copies and zeroing even with -ffreestanding. */
void* memcpy(void* dst, const void* src, size_t n);
void* memmove(void* dst, const void* src, size_t n);
void* memset(void* dst, int c, size_t n);

#endif
