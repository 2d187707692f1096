/* Firmware-style use of the runtime: an MMIO board driver under the runtime,
 * a bmodel from the image, one inference. The image is a link test (it need
 * not run): the addresses below stand for a board's memory map. */
#include <stdint.h>

#include "kiln/rt/kiln_board.h"
#include "kiln/rt/kiln_rt.h"

#define BOARD_REGS 0x50000000u        /* NPU register block */
#define BOARD_DDR_CPU 0x80000000u     /* device DDR window, as the CPU maps it */
#define BOARD_DDR_DEVICE 0x100000000u /* the same window, as the NPU addresses it */
#define BOARD_DDR_BYTES (256u << 20)

/* A real image links its bmodel in (or reads it from flash); this stand-in
 * header only has to reach the verifier. */
static const uint8_t bmodel[64] __attribute__((aligned(8))) = {'K', 'I', 'L', 'N',
                                                               'B', 'M', 'D', 'L'};

/* At least kiln_runtime_storage_size() and kiln_net_storage_size() bytes
 * (`kiln inspect` prints both); init and load refuse smaller buffers. */
static kiln_board board;
static uint8_t runtime_storage[2048] __attribute__((aligned(16)));
static uint8_t net_storage[512] __attribute__((aligned(16)));
static float io_buffer[1024];

/* The generic timer: counter ticks at CNTFRQ_EL0 Hz. */
static uint64_t now_us(void *ctx) {
  (void)ctx;
  uint64_t ticks, freq;
  __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(ticks));
  __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(freq));
  return ticks / freq * 1000000u + ticks % freq * 1000000u / freq;
}

int main(void) {
  kiln_board_io io;
  kiln_hal hal;
  kiln_runtime *rt;
  kiln_net *net;
  kiln_tensor_info info;
  kiln_memory_requirements req;

  kiln_board_mmio_io((volatile uint32_t *)(uintptr_t)BOARD_REGS, (void *)(uintptr_t)BOARD_DDR_CPU,
                     BOARD_DDR_DEVICE, BOARD_DDR_BYTES, now_us, 0, &io);
  kiln_status st = kiln_board_init(&board, &io, &hal);
  if (st == KILN_OK)
    st = kiln_bmodel_query_memory(bmodel, sizeof bmodel, 0, &req);
  if (st == KILN_OK && req.device_bytes > hal.mem_size)
    st = KILN_ERR_NO_DEVICE_MEMORY;
  if (st == KILN_OK)
    st = kiln_runtime_init(runtime_storage, sizeof runtime_storage, &hal, &rt);
  if (st == KILN_OK)
    st = kiln_net_load(rt, bmodel, sizeof bmodel, 0, net_storage, sizeof net_storage, &net);
  if (st == KILN_OK && kiln_net_input_info(net, 0, &info) == KILN_OK &&
      info.bytes <= sizeof io_buffer) {
    st = kiln_net_set_input(net, 0, io_buffer, (size_t)info.bytes);
    if (st == KILN_OK)
      st = kiln_net_run(net, 1000000u, 0);
    if (st == KILN_OK && kiln_net_output_info(net, 0, &info) == KILN_OK)
      st = kiln_net_get_output(net, 0, io_buffer, sizeof io_buffer);
    kiln_net_unload(net);
  }
  /* A real image would report this; kiln_status_str names it. */
  return kiln_status_str(st)[0] == 'o' ? 0 : (int)st;
}
