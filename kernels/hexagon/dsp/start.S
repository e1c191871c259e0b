/* The DSP program's entry: no libc, so no crt0. The kernel (here qemu-hexagon) starts us with sp
 * pointing at argc; the ABI wants an 8-byte aligned stack and a zero frame pointer to end
 * backtraces. hx_start never returns; the trap after it is a guard. */
  .text
  .global _start
  .type _start,@function
_start:
  r0 = r29
  r29 = and(r29, #-8)
  r30 = #0
  call hx_start
  trap0(#0)
  .size _start, .-_start
