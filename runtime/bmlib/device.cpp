// kiln's HAL over Sophgo's bmlib (see device.h).
#include "kiln/bmlib/device.h"
#include "kiln/rt/synchronous_hal.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

namespace kiln::bmlib {
namespace {

// bmlib_runtime.h's bm_device_mem_t (LP64 Linux), passed by value.
struct Mem {
  unsigned long device_addr;
  unsigned int reserved;
  int dmabuf_fd;
  unsigned int flags;
  unsigned int size;
};
static_assert(sizeof(Mem) == 24, "libsophon's bm_device_mem_t");

// The arguments of sg_api_multi_fullnet for one command group and no net
// inputs or outputs to copy (kiln's runtime placed them): packed, as
// libsophon's bmdnn_func_1684x.cpp lays them out. An input count of 0 in the
// launch message means the arguments are in device memory (LongArgs, which
// libbmrt sends when they outgrow a message), so these always go there.
struct __attribute__((packed)) FullnetArgs {
  int32_t input_num = 0;
  int32_t output_num = 0;
  uint64_t bdc_cmd_addr = 0;
  uint64_t gdma_cmd_addr = 0;
  int32_t group_num = 1;
  int32_t bdc_num = 0, gdma_num = 0;
  uint32_t bdc_bytes = 0, gdma_bytes = 0;
  uint32_t do_allreduce = 0;
  uint32_t reserved = 0; // libbmrt 1.30 sends a second zero word
};
static_assert(sizeof(FullnetArgs) == 52, "the firmware's argument layout");

struct __attribute__((packed)) LongArgs {
  uint32_t zero = 0;
  uint64_t args_addr = 0;
  uint64_t args_size = 0;
};

// Device memory after the runtime's window that holds the arguments.
constexpr uint64_t kArgsBytes = 256;

} // namespace

struct Device::Api {
  int (*bm_dev_request)(void **handle, int devid);
  void (*bm_dev_free)(void *handle);
  int (*bm_malloc_device_byte)(void *handle, Mem *mem, unsigned int size);
  void (*bm_free_device)(void *handle, Mem mem);
  int (*bm_memcpy_s2d_partial_offset)(void *handle, Mem dst, void *src, unsigned int size,
                                      unsigned int offset);
  int (*bm_memcpy_d2s_partial_offset)(void *handle, void *dst, Mem src, unsigned int size,
                                      unsigned int offset);
  void *(*tpu_kernel_load_module_file)(void *handle, const char *path);
  int (*tpu_kernel_get_function)(void *handle, void *module, const char *name);
  int (*tpu_kernel_launch)(void *handle, int function, void *args, size_t size);
};

namespace {

template <typename F> bool bind(void *lib, const char *name, F &fn, std::string *why) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn) *why = std::string("bmlib lacks ") + name;
  return fn != nullptr;
}

// libbmlib.so.0: KILN_BMLIB names it, else the loader finds libsophon's.
const Device::Api *loadApi(std::string *why) {
  static Device::Api api;
  static bool loaded = false;
  if (loaded)
    return &api;
  const char *path = std::getenv("KILN_BMLIB");
  void *lib = dlopen(path && *path ? path : "libbmlib.so.0", RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    *why = std::string("bmlib is not available (libsophon's libbmlib.so.0; KILN_BMLIB names "
                       "another): ") + dlerror();
    return nullptr;
  }
  if (!bind(lib, "bm_dev_request", api.bm_dev_request, why) ||
      !bind(lib, "bm_dev_free", api.bm_dev_free, why) ||
      !bind(lib, "bm_malloc_device_byte", api.bm_malloc_device_byte, why) ||
      !bind(lib, "bm_free_device", api.bm_free_device, why) ||
      !bind(lib, "bm_memcpy_s2d_partial_offset", api.bm_memcpy_s2d_partial_offset, why) ||
      !bind(lib, "bm_memcpy_d2s_partial_offset", api.bm_memcpy_d2s_partial_offset, why) ||
      !bind(lib, "tpu_kernel_load_module_file", api.tpu_kernel_load_module_file, why) ||
      !bind(lib, "tpu_kernel_get_function", api.tpu_kernel_get_function, why) ||
      !bind(lib, "tpu_kernel_launch", api.tpu_kernel_launch, why))
    return nullptr;
  loaded = true;
  return &api;
}

Mem &windowOf(unsigned char (&bytes)[24]) { return *reinterpret_cast<Mem *>(bytes); }

} // namespace

std::unique_ptr<Device> Device::open(uint64_t ddrBytes, const std::string &kernelModule,
                                     std::string *why, int devid) {
  const Api *api = loadApi(why);
  if (!api)
    return nullptr;
  if (ddrBytes == 0 || ddrBytes > 0xffffffffu - kArgsBytes) {
    *why = "bmlib: the runtime's memory must be 1 byte to 4 GiB";
    return nullptr;
  }
  std::unique_ptr<Device> d(new Device());
  d->api_ = api;
  if (api->bm_dev_request(&d->handle_, devid) != 0 || !d->handle_) {
    *why = "bm_dev_request(" + std::to_string(devid) + ") failed";
    d->handle_ = nullptr;
    return nullptr;
  }
  Mem &window = windowOf(d->window_);
  if (api->bm_malloc_device_byte(d->handle_, &window, unsigned(ddrBytes + kArgsBytes)) != 0) {
    *why = "bm_malloc_device_byte(" + std::to_string(ddrBytes) + ") failed";
    d->size_ = 0;
    return nullptr;
  }
  d->base_ = window.device_addr;
  d->size_ = ddrBytes;
  void *module = nullptr;
  if (!kernelModule.empty() &&
      !(module = api->tpu_kernel_load_module_file(d->handle_, kernelModule.c_str()))) {
    *why = "bmlib could not load the kernel module " + kernelModule;
    return nullptr;
  }
  d->function_ = api->tpu_kernel_get_function(d->handle_, module, "sg_api_multi_fullnet");
  if (d->function_ < 0) {
    *why = "the firmware has no sg_api_multi_fullnet";
    return nullptr;
  }
  return d;
}

Device::~Device() {
  if (!handle_)
    return;
  if (size_)
    api_->bm_free_device(handle_, windowOf(window_));
  api_->bm_dev_free(handle_);
}

kiln_status Device::run(const kiln_submit_desc &desc) {
  fault_.clear();
  if (desc.isa != KILN_ISA_BM1684X)
    return last_ = KILN_ERR_UNSUPPORTED;
  auto inside = [&](uint64_t addr, uint64_t bytes) {
    return addr >= base_ && addr - base_ <= size_ && bytes <= size_ - (addr - base_);
  };
  if (!inside(desc.ddr_base, desc.ddr_size) || !inside(desc.tiu_queue_addr, desc.tiu_bytes) ||
      !inside(desc.gdma_queue_addr, desc.gdma_bytes) || desc.tiu_bytes > 0xffffffffu ||
      desc.gdma_bytes > 0xffffffffu) {
    fault_ = "streams or DDR window outside the memory bmlib gave";
    return last_ = KILN_ERR_DEVICE_FAULT;
  }
  FullnetArgs args;
  args.bdc_cmd_addr = desc.tiu_queue_addr;
  args.gdma_cmd_addr = desc.gdma_queue_addr;
  args.bdc_num = int32_t(desc.tiu_count);
  args.gdma_num = int32_t(desc.gdma_count);
  args.bdc_bytes = uint32_t(desc.tiu_bytes);
  args.gdma_bytes = uint32_t(desc.gdma_bytes);
  ++launches_;
  tiuCommands_ += desc.tiu_count;
  gdmaCommands_ += desc.gdma_count;
  LongArgs message;
  message.args_addr = base_ + size_;
  message.args_size = sizeof args;
  if (api_->bm_memcpy_s2d_partial_offset(handle_, windowOf(window_), &args, sizeof args,
                                         unsigned(size_)) != 0) {
    fault_ = "bm_memcpy_s2d of the launch arguments failed";
    return last_ = KILN_ERR_DEVICE_FAULT;
  }
  if (int st = api_->tpu_kernel_launch(handle_, function_, &message, sizeof message); st != 0) {
    fault_ = "tpu_kernel_launch(sg_api_multi_fullnet) returned bm_status " + std::to_string(st);
    return last_ = KILN_ERR_DEVICE_FAULT;
  }
  return last_ = KILN_OK;
}

namespace {
Device &deviceOf(void *ctx) { return *static_cast<Device *>(ctx); }
} // namespace

kiln_hal Device::hal() {
  kiln_hal h{};
  h.ctx = this;
  h.mem_base = base_;
  h.mem_size = size_;
  h.isa = KILN_ISA_BM1684X;
  h.write_mem = [](void *ctx, uint64_t addr, const void *src, uint64_t size) {
    Device &d = deviceOf(ctx);
    if (addr < d.base_ || addr - d.base_ > d.size_ || size > d.size_ - (addr - d.base_) ||
        (size && !src))
      return KILN_ERR_INVALID_ARGUMENT;
    if (size && d.api_->bm_memcpy_s2d_partial_offset(d.handle_, windowOf(d.window_),
                                                     const_cast<void *>(src), unsigned(size),
                                                     unsigned(addr - d.base_)) != 0)
      return KILN_ERR_DEVICE_FAULT;
    return KILN_OK;
  };
  h.read_mem = [](void *ctx, uint64_t addr, void *dst, uint64_t size) {
    Device &d = deviceOf(ctx);
    if (addr < d.base_ || addr - d.base_ > d.size_ || size > d.size_ - (addr - d.base_) ||
        (size && !dst))
      return KILN_ERR_INVALID_ARGUMENT;
    if (size && d.api_->bm_memcpy_d2s_partial_offset(d.handle_, dst, windowOf(d.window_),
                                                     unsigned(size),
                                                     unsigned(addr - d.base_)) != 0)
      return KILN_ERR_DEVICE_FAULT;
    return KILN_OK;
  };
  // tpu_kernel_launch returns when the firmware is done.
  rt::setSynchronousSubmission<Device>(h);
  return h;
}

} // namespace kiln::bmlib
