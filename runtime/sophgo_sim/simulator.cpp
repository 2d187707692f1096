#include "kiln/sophgo_sim/simulator.h"

#include <dlfcn.h>
#include <fenv.h>
#include <sys/stat.h>

#include <cstdlib>
#include <mutex>

namespace kiln::sophgo_sim {
namespace {

// The C API as TPU-MLIR's debugger declares it (FACTS.md section 5.1).
struct LocalMem {
  char *raw_ptr;
  uint32_t **mem_arr;
  int32_t count, size_per_mem, align_num, need_free;
};
struct Api {
  int (*cmodel_init)(int, long long);
  void *(*get_global_memaddr)(int);
  LocalMem *(*get_local_mem)(int);
  char *(*get_static_memaddr_by_node)(int);
  void (*execute_command)(int, void *, unsigned);
  int (*tpu_npu_num)();
  int (*tpu_bank_num)();
  int (*tpu_local_mem_size_per_npu)();
  int (*tpu_eu_num)(int);
  int (*tpu_get_ic_parallel)(int);
};
Api api;

// The simulator's cmodel_init sets the thread's floating-point modes to
// flush subnormals (MXCSR FTZ and DAZ): that is part of its model of the
// chip, so each of its commands runs in the modes it set, and the caller's
// modes (in which kiln's own model runs) are restored after every call.
fenv_t simEnvironment;
struct FpEnvironment {
  fenv_t env;
  FpEnvironment() { fegetenv(&env); }
  ~FpEnvironment() { fesetenv(&env); }
};

// Where the simulator is: KILN_SOPHGO_SIM, else this build's oracle.
const char *libraryPath() {
  const char *path = std::getenv("KILN_SOPHGO_SIM");
  if (path && *path) return path;
#ifdef KILN_SOPHGO_SIM_DEFAULT
  return KILN_SOPHGO_SIM_DEFAULT;
#else
  return nullptr;
#endif
}

template <typename F> bool bind(void *lib, const char *name, F &fn, std::string *why) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn) *why = std::string("the simulator lacks ") + name;
  return fn != nullptr;
}

} // namespace

SophgoSim *SophgoSim::get(std::string *why, uint64_t ddrBytes) {
  static SophgoSim *sim = nullptr;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [ddrBytes] {
    const char *path = libraryPath();
    struct stat st;
    if (!path || !*path) {
      failure = "KILN_SOPHGO_SIM is not set: tools/dev oracle fetches Sophgo's simulator";
      return;
    }
    if (stat(path, &st) != 0) {
      failure = std::string("Sophgo's simulator is not at ") + path +
                " (tools/dev oracle could not fetch the tpu-mlir wheel from PyPI)";
      return;
    }
    // RTLD_LOCAL: its symbols stay out of the process's namespace. The
    // library's own RUNPATH points at the wheel's bundled libc, which
    // tools/dev does not unpack, so the system's libraries serve it.
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      failure = std::string("dlopen ") + path + ": " + dlerror();
      return;
    }
    std::string bad;
    if (!(bind(lib, "cmodel_init", api.cmodel_init, &bad) &&
          bind(lib, "get_global_memaddr", api.get_global_memaddr, &bad) &&
          bind(lib, "get_local_mem", api.get_local_mem, &bad) &&
          bind(lib, "get_static_memaddr_by_node", api.get_static_memaddr_by_node, &bad) &&
          bind(lib, "execute_command", api.execute_command, &bad) &&
          bind(lib, "tpu_npu_num", api.tpu_npu_num, &bad) &&
          bind(lib, "tpu_bank_num", api.tpu_bank_num, &bad) &&
          bind(lib, "tpu_local_mem_size_per_npu", api.tpu_local_mem_size_per_npu, &bad) &&
          bind(lib, "tpu_eu_num", api.tpu_eu_num, &bad) &&
          bind(lib, "tpu_get_ic_parallel", api.tpu_get_ic_parallel, &bad))) {
      failure = bad;
      return;
    }
    FpEnvironment keep;
    if (api.cmodel_init(0, static_cast<long long>(ddrBytes)) != 0) {
      failure = "cmodel_init failed";
      return;
    }
    fegetenv(&simEnvironment);
    auto *s = new SophgoSim;
    s->lib_ = lib;
    s->ddr_ = static_cast<uint8_t *>(api.get_global_memaddr(0));
    s->ddrBytes_ = ddrBytes;
    LocalMem *lm = api.get_local_mem(0);
    s->lmem_ = lm ? reinterpret_cast<uint8_t *>(lm->raw_ptr) : nullptr;
    s->smem_ = reinterpret_cast<uint8_t *>(api.get_static_memaddr_by_node(0));
    if (!s->ddr_ || !s->lmem_ || !s->smem_) {
      failure = "the simulator gave no DDR, LMEM or static memory";
      delete s;
      return;
    }
    sim = s;
  });
  if (sim && sim->ddrBytes_ < ddrBytes) {
    if (why)
      *why = "the simulator was opened with " + std::to_string(sim->ddrBytes_) +
             " bytes of DDR, fewer than " + std::to_string(ddrBytes);
    return nullptr;
  }
  if (!sim && why) *why = failure;
  return sim;
}

int SophgoSim::npuNum() const { return api.tpu_npu_num(); }
int SophgoSim::bankNum() const { return api.tpu_bank_num(); }
int SophgoSim::lmemBytesPerNpu() const { return api.tpu_local_mem_size_per_npu(); }
int SophgoSim::euNum(int dtype) const { return api.tpu_eu_num(dtype); }
int SophgoSim::icParallel(int dtype) const { return api.tpu_get_ic_parallel(dtype); }
uint64_t SophgoSim::lmemBytes() const {
  return static_cast<uint64_t>(npuNum()) * static_cast<uint64_t>(lmemBytesPerNpu());
}

void SophgoSim::execute(const uint8_t *cmd, Engine engine) const {
  FpEnvironment keep;
  fesetenv(&simEnvironment);
  api.execute_command(0, const_cast<uint8_t *>(cmd), engine);
}

} // namespace kiln::sophgo_sim
