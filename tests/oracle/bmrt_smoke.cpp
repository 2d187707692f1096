// bmrt_smoke MODEL.bmodel INPUT.npz OUTPUT.npz [NET]: runs a bmodel the way an
// application on a BM1684X board does, through Sophgo's own runtime
// (libbmrt + libbmlib) — here their simulator build from the tpu-mlir wheel,
// whose libbmlib runs the firmware inside Sophgo's chip simulator
// (FACTS.md section 7.1). The board smoke test of issue 29. NET (default:
// the first) is run at the shapes of the npz arrays, which select its stage.
//
// The libraries are a test reference like ONNX Runtime: loaded with dlopen
// from the directory of KILN_SOPHGO_SIM, never linked. The C API below is
// declared from libsophon's public documentation (bmlib_runtime.h,
// bmruntime_interface.h). Without the libraries it prints "SKIPPED: why" and
// exits 0.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/host/npz.h"

namespace {

// bmlib_runtime.h / bmruntime_interface.h (LP64 Linux).
struct bm_device_mem_t {
  unsigned long device_addr;
  unsigned int reserved;
  int dmabuf_fd;
  unsigned int flags;
  unsigned int size;
};
constexpr int kMaxDims = 8;
struct bm_shape_t {
  int num_dims;
  int dims[kMaxDims];
};
struct bm_tensor_t {
  int dtype; // bm_data_type_t
  bm_shape_t shape;
  bm_device_mem_t device_mem;
  int st_mode;
};
struct bm_stage_info_t {
  bm_shape_t *input_shapes, *output_shapes;
  bm_device_mem_t *input_mems, *output_mems;
};
struct bm_net_info_t {
  const char *name;
  bool is_dynamic;
  int input_num;
  const char **input_names;
  int *input_dtypes;
  float *input_scales;
  int output_num;
  const char **output_names;
  int *output_dtypes;
  float *output_scales;
  int stage_num;
  bm_stage_info_t *stages;
  size_t *max_input_bytes, *max_output_bytes;
};
static_assert(sizeof(bm_device_mem_t) == 24 && sizeof(bm_tensor_t) == 72, "libsophon's layout");

struct Api {
  int (*bm_dev_request)(void **handle, int devid);
  void (*bm_dev_free)(void *handle);
  int (*bm_malloc_device_byte)(void *handle, bm_device_mem_t *mem, unsigned int size);
  void (*bm_free_device)(void *handle, bm_device_mem_t mem);
  int (*bm_memcpy_s2d)(void *handle, bm_device_mem_t dst, void *src);
  int (*bm_memcpy_d2s)(void *handle, void *dst, bm_device_mem_t src);
  int (*bm_thread_sync)(void *handle);
  void *(*bmrt_create)(void *handle);
  void (*bmrt_destroy)(void *bmrt);
  bool (*bmrt_load_bmodel)(void *bmrt, const char *path);
  void (*bmrt_get_network_names)(void *bmrt, const char ***names);
  const bm_net_info_t *(*bmrt_get_network_info)(void *bmrt, const char *name);
  bool (*bmrt_launch_tensor_ex)(void *bmrt, const char *net, const bm_tensor_t *inputs,
                                int input_num, bm_tensor_t *outputs, int output_num,
                                bool user_mem, bool user_stmode);
};

template <typename F> bool bind(void *lib, const char *name, F &fn, std::string &why) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn) why = std::string("no ") + name + " in Sophgo's runtime";
  return fn != nullptr;
}

// Loads libbmlib and libbmrt from the simulator's directory; libbmlib runs
// the firmware of the library TPUKERNEL_FIRMWARE_PATH names.
bool load(Api &api, std::string &why) {
  const char *sim = std::getenv("KILN_SOPHGO_SIM");
  if (!sim || !*sim) {
    why = "KILN_SOPHGO_SIM is not set (tools/dev oracle fetches Sophgo's simulator)";
    return false;
  }
  std::string dir(sim);
  dir = dir.substr(0, dir.rfind('/') + 1);
  setenv("TPUKERNEL_FIRMWARE_PATH", sim, 1);
  void *bmlib = dlopen((dir + "libbmlib.so.0").c_str(), RTLD_NOW | RTLD_GLOBAL);
  void *bmrt = bmlib ? dlopen((dir + "libbmrt.so.1.0").c_str(), RTLD_NOW | RTLD_GLOBAL) : nullptr;
  if (!bmrt) {
    why = std::string("Sophgo's runtime is not available: ") + dlerror();
    return false;
  }
  return bind(bmlib, "bm_dev_request", api.bm_dev_request, why) &&
         bind(bmlib, "bm_dev_free", api.bm_dev_free, why) &&
         bind(bmlib, "bm_malloc_device_byte", api.bm_malloc_device_byte, why) &&
         bind(bmlib, "bm_free_device", api.bm_free_device, why) &&
         bind(bmlib, "bm_memcpy_s2d", api.bm_memcpy_s2d, why) &&
         bind(bmlib, "bm_memcpy_d2s", api.bm_memcpy_d2s, why) &&
         bind(bmlib, "bm_thread_sync", api.bm_thread_sync, why) &&
         bind(bmrt, "bmrt_create", api.bmrt_create, why) &&
         bind(bmrt, "bmrt_destroy", api.bmrt_destroy, why) &&
         bind(bmrt, "bmrt_load_bmodel", api.bmrt_load_bmodel, why) &&
         bind(bmrt, "bmrt_get_network_names", api.bmrt_get_network_names, why) &&
         bind(bmrt, "bmrt_get_network_info", api.bmrt_get_network_info, why) &&
         bind(bmrt, "bmrt_launch_tensor_ex", api.bmrt_launch_tensor_ex, why);
}

// bm_data_type_t -> the npz dtype holding it.
bool hostType(int bmType, kiln::host::DType &out) {
  using kiln::host::DType;
  switch (bmType) {
  case 0: out = DType::F32; return true;
  case 1: out = DType::F16; return true;
  case 2: out = DType::I8; return true;
  case 3: out = DType::U8; return true;
  case 4: out = DType::I16; return true;
  case 5: out = DType::U16; return true;
  case 6: out = DType::I32; return true;
  default: return false; // bf16 and 4-bit have no npy type
  }
}

int fail(const std::string &msg) {
  std::fprintf(stderr, "bmrt_smoke: %s\n", msg.c_str());
  return 1;
}

bool sameShape(const bm_shape_t &s, const std::vector<int64_t> &dims) {
  if (s.num_dims != int(dims.size()))
    return false;
  for (int d = 0; d < s.num_dims; ++d)
    if (s.dims[d] != dims[d])
      return false;
  return true;
}

int run(const Api &api, const char *modelPath, const char *inputPath, const char *outputPath,
        const char *netName) {
  std::vector<kiln::host::Array> inputs;
  if (std::string err = kiln::host::readNpz(inputPath, inputs); !err.empty())
    return fail(err);
  void *handle = nullptr;
  if (api.bm_dev_request(&handle, 0) != 0)
    return fail("bm_dev_request failed");
  void *bmrt = api.bmrt_create(handle);
  if (!bmrt)
    return fail("bmrt_create failed");
  if (!api.bmrt_load_bmodel(bmrt, modelPath))
    return fail(std::string("libbmrt refused ") + modelPath);
  const char **names = nullptr;
  api.bmrt_get_network_names(bmrt, &names);
  const bm_net_info_t *net = api.bmrt_get_network_info(bmrt, netName ? netName : names[0]);
  if (!net)
    return fail(std::string("libbmrt has no net '") + netName + "'");
  std::printf("libbmrt loaded net '%s': %d input(s), %d output(s), %d stage(s)\n", net->name,
              net->input_num, net->output_num, net->stage_num);

  std::vector<bm_tensor_t> in(net->input_num), out(net->output_num);
  for (int i = 0; i < net->input_num; ++i) {
    const kiln::host::Array *a = nullptr;
    for (const auto &x : inputs)
      if (x.name == net->input_names[i])
        a = &x;
    kiln::host::DType want;
    if (!a)
      return fail(std::string(inputPath) + " has no input '" + net->input_names[i] + "'");
    if (!hostType(net->input_dtypes[i], want) || a->dtype != want ||
        a->data.size() > net->max_input_bytes[i])
      return fail(std::string("input '") + net->input_names[i] + "' is " +
                  kiln::host::toString(a->dtype) + " " + kiln::host::shapeString(a->shape) +
                  ", not what the net takes (" + std::to_string(net->max_input_bytes[i]) +
                  " bytes of bm_data_type_t " + std::to_string(net->input_dtypes[i]) + ")");
    // The application sets the shape; libbmrt runs the stage that has it.
    in[i].dtype = net->input_dtypes[i];
    in[i].shape.num_dims = int(a->shape.size());
    for (size_t d = 0; d < a->shape.size() && d < size_t(kMaxDims); ++d)
      in[i].shape.dims[d] = int(a->shape[d]);
    for (int st = 0; st < net->stage_num; ++st)
      if (sameShape(net->stages[st].input_shapes[i], a->shape))
        std::printf("input '%s' %s: stage %d's shape\n", net->input_names[i],
                    kiln::host::shapeString(a->shape).c_str(), st);
    in[i].st_mode = 0;
    if (api.bm_malloc_device_byte(handle, &in[i].device_mem, a->data.size()) != 0 ||
        api.bm_memcpy_s2d(handle, in[i].device_mem, const_cast<uint8_t *>(a->data.data())) != 0)
      return fail("could not place an input in device memory");
  }
  if (!api.bmrt_launch_tensor_ex(bmrt, net->name, in.data(), net->input_num, out.data(),
                                 net->output_num, /*user_mem=*/false, /*user_stmode=*/false))
    return fail("bmrt_launch_tensor_ex failed");
  if (api.bm_thread_sync(handle) != 0)
    return fail("bm_thread_sync failed");

  std::vector<kiln::host::Array> outputs(net->output_num);
  for (int i = 0; i < net->output_num; ++i) {
    kiln::host::Array &a = outputs[i];
    a.name = net->output_names[i];
    if (!hostType(out[i].dtype, a.dtype))
      return fail("output '" + a.name + "' has a type npz cannot hold");
    for (int d = 0; d < out[i].shape.num_dims; ++d)
      a.shape.push_back(out[i].shape.dims[d]);
    a.data.resize(a.numElements() * a.elementBytes());
    if (a.data.size() > out[i].device_mem.size ||
        api.bm_memcpy_d2s(handle, a.data.data(), out[i].device_mem) != 0)
      return fail("could not read output '" + a.name + "'");
    std::printf("output '%s': %s %s\n", a.name.c_str(), kiln::host::toString(a.dtype),
                kiln::host::shapeString(a.shape).c_str());
  }
  for (auto &t : in)
    api.bm_free_device(handle, t.device_mem);
  for (auto &t : out)
    api.bm_free_device(handle, t.device_mem);
  api.bmrt_destroy(bmrt);
  api.bm_dev_free(handle);
  if (std::string err = kiln::host::writeNpz(outputPath, outputs); !err.empty())
    return fail(err);
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: bmrt_smoke MODEL.bmodel INPUT.npz OUTPUT.npz [NET]\n");
    return 2;
  }
  Api api{};
  std::string why;
  if (!load(api, why)) {
    std::printf("SKIPPED: %s\n", why.c_str());
    return 0;
  }
  int rc = run(api, argv[1], argv[2], argv[3], argc == 5 ? argv[4] : nullptr);
  std::fflush(nullptr);
  // The simulator's threads do not survive static destruction: leave now.
  std::_Exit(rc);
}
