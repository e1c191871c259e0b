/* The DSP program: the skeleton side of the host plugin. It maps the shared region when asked,
 * then answers each batch of op records with one reply. A batch is checked in full before its
 * first op runs, so a bad record never leaves half a batch done. The socket closing (the host
 * exited or dropped us) ends the program. */
#include "hx_dsp.h"
#include "sys.h"

static const hx_kernel* const kFamilies[] = {
    hx_linalg_kernels, hx_elementwise_kernels, hx_elementwise_grad_kernels, hx_activation_mask_kernels,
    hx_training_kernels, hx_conv_kernels, hx_layer_grad_conv_kernels, hx_fault_kernels,
};

static hx_op g_batch[HX_MAX_BATCH];

static const hx_kernel* find_kernel(uint32_t opcode) {
  for (uint32_t f = 0; f < sizeof kFamilies / sizeof kFamilies[0]; ++f) {
    for (const hx_kernel* k = kFamilies[f]; k->opcode != 0; ++k) {
      if (k->opcode == opcode) return k;
    }
  }
  return 0;
}

static void reply(uint32_t sequence, uint32_t status, uint32_t failed_op, uint32_t ops_run, uint32_t detail) {
  hx_reply r;
  r.magic = HX_MAGIC;
  r.version = HX_VERSION;
  r.sequence = sequence;
  r.status = status;
  r.failed_op = failed_op;
  r.ops_run = ops_run;
  r.detail = detail;
  r.reserved = 0;
  if (hx_write_full(HX_FD_CONTROL, &r, sizeof r) != 0) hx_exit(3); /* the host is gone */
}

static void attach(const hx_header* h) {
  if (hx_region || h->arg0 == 0 || h->arg0 > HX_MAX_REGION) {
    reply(h->sequence, HX_ERR_MESSAGE, HX_ABSENT, 0, 0);
    return;
  }
  uint8_t* p = (uint8_t*)hx_mmap_shared(HX_FD_REGION, h->arg0);
  if (!p) {
    reply(h->sequence, HX_ERR_NOT_ATTACHED, HX_ABSENT, 0, 0);
    return;
  }
  hx_region = p;
  hx_region_bytes = h->arg0;
  reply(h->sequence, HX_OK, HX_ABSENT, 0, (uint32_t)(uintptr_t)p);
}

static void run_batch(const hx_header* h) {
  const uint32_t n = h->count;
  if (hx_read_full(HX_FD_CONTROL, g_batch, n * sizeof(hx_op)) != 0) hx_exit(0);
  if (!hx_region) {
    reply(h->sequence, HX_ERR_NOT_ATTACHED, HX_ABSENT, 0, 0);
    return;
  }
  const hx_kernel* kernels[HX_MAX_BATCH];
  for (uint32_t i = 0; i < n; ++i) {
    kernels[i] = find_kernel(g_batch[i].opcode);
    if (!kernels[i]) {
      reply(h->sequence, HX_ERR_OPCODE, i, 0, g_batch[i].opcode);
      return;
    }
    uint32_t slot = HX_ABSENT;
    const uint32_t status = kernels[i]->check(&g_batch[i], &slot);
    if (status != HX_OK) {
      reply(h->sequence, status, i, 0, slot);
      return;
    }
  }
  for (uint32_t i = 0; i < n; ++i) kernels[i]->run(&g_batch[i]);
  reply(h->sequence, HX_OK, HX_ABSENT, n, 0);
}

void hx_start(long* sp) {
  (void)sp;
  for (;;) {
    hx_header h;
    if (hx_read_full(HX_FD_CONTROL, &h, sizeof h) != 0) hx_exit(0); /* the host closed the socket */
    const int framed = h.magic == HX_MAGIC && h.version == HX_VERSION && h.count <= HX_MAX_BATCH &&
                       h.length == sizeof h + h.count * sizeof(hx_op);
    if (!framed) {
      /* The stream cannot be resynchronised: say why, then stop. */
      reply(h.sequence, HX_ERR_MESSAGE, HX_ABSENT, 0, h.magic);
      hx_exit(2);
    }
    if (h.kind == HX_EXIT) hx_exit(0);
    if (h.kind == HX_ATTACH && h.count == 0) {
      attach(&h);
    } else if (h.kind == HX_RUN) {
      run_batch(&h);
    } else {
      reply(h.sequence, HX_ERR_MESSAGE, HX_ABSENT, 0, h.kind);
      hx_exit(2);
    }
  }
}
