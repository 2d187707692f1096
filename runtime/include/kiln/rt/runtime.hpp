// kiln runtime: a thin header-only C++ wrapper over kiln_rt.h.
//
// No exceptions and no heap: each object holds the storage the C API asks
// for, and every operation returns a kiln_status. Objects do not move, since
// the C handles point into them. Unload nets in reverse order of loading
// (destroying a Net unloads it).
#ifndef KILN_RT_RUNTIME_HPP
#define KILN_RT_RUNTIME_HPP

#include <stddef.h>
#include <stdint.h>

#include "kiln/rt/kiln_rt.h"

namespace kiln::rt {

// Storage reserved by the wrappers; the core static_asserts its objects fit.
constexpr size_t kRuntimeStorageBytes = 1280; // mostly the LMEM residency tracker
constexpr size_t kNetStorageBytes = 128;

class Runtime {
public:
  Runtime() = default;
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  kiln_status init(const kiln_hal &hal) {
    return kiln_runtime_init(storage_, sizeof storage_, &hal, &rt_);
  }
  kiln_runtime *handle() const { return rt_; }

private:
  alignas(16) unsigned char storage_[kRuntimeStorageBytes];
  kiln_runtime *rt_ = nullptr;
};

class Net {
public:
  Net() = default;
  Net(const Net &) = delete;
  Net &operator=(const Net &) = delete;
  ~Net() { unload(); }

  // bmodel must be 8-byte aligned and outlive the loaded net. On failure
  // *detail (if given) says which record was refused and why.
  kiln_status load(Runtime &rt, const void *bmodel, size_t size, uint32_t net_index = 0,
                   kiln_error_detail *detail = nullptr) {
    if (net_)
      return KILN_ERR_BAD_STATE;
    return kiln_net_load_ex(rt.handle(), bmodel, size, net_index, storage_, sizeof storage_,
                            &net_, detail);
  }
  kiln_status unload() {
    if (!net_)
      return KILN_OK;
    kiln_status st = kiln_net_unload(net_);
    if (st == KILN_OK)
      net_ = nullptr;
    return st;
  }
  bool loaded() const { return net_ != nullptr; }
  kiln_net *handle() const { return net_; }

  uint32_t inputCount() const { return kiln_net_input_count(net_); }
  uint32_t outputCount() const { return kiln_net_output_count(net_); }
  uint32_t tensorCount() const { return kiln_net_tensor_count(net_); }
  kiln_status inputInfo(uint32_t index, kiln_tensor_info *out) const {
    return kiln_net_input_info(net_, index, out);
  }
  kiln_status outputInfo(uint32_t index, kiln_tensor_info *out) const {
    return kiln_net_output_info(net_, index, out);
  }
  kiln_status tensorInfo(uint32_t index, kiln_tensor_info *out) const {
    return kiln_net_tensor_info(net_, index, out);
  }

  kiln_status setInput(uint32_t index, const void *data, size_t bytes) {
    return kiln_net_set_input(net_, index, data, bytes);
  }
  kiln_status run(uint32_t timeout_us, kiln_run_stats *stats = nullptr,
                  kiln_error_detail *detail = nullptr) {
    return kiln_net_run_ex(net_, timeout_us, nullptr, nullptr, stats, detail);
  }
  kiln_status getOutput(uint32_t index, void *dst, size_t bytes) const {
    return kiln_net_get_output(net_, index, dst, bytes);
  }
  kiln_status readTensor(uint32_t index, void *dst, size_t bytes) const {
    return kiln_net_read_tensor(net_, index, dst, bytes);
  }

private:
  alignas(16) unsigned char storage_[kNetStorageBytes];
  kiln_net *net_ = nullptr;
};

} // namespace kiln::rt

#endif
