// kiln run MODEL.bmodel --input IN.npz --output OUT.npz [--stats STATS.json]
//   [--all-tensors] [--device-mem MIB] [--repeat N] [--trace TRACE.json]
//   [--device cmodel|sophgo-sim|bmlib] [--isa auto|kiln|bm1684x]
// The device's DDR is what the bmodel's memory query asks for, unless
// --device-mem gives a size. A bmodel compiled with `isa: bm1684x` runs its
// BM1684X streams (on kiln's cmodel: kiln's model of the chip's commands),
// unless --isa kiln picks its kiln records; --device sophgo-sim runs the
// streams on Sophgo's own simulator (tools/dev oracle fetches it), command
// by command; --device bmlib launches each group through Sophgo's bmlib and
// the chip's firmware, as on a board (kiln/bmlib/device.h; KILN_BMLIB and
// TPUKERNEL_FIRMWARE_PATH point it at the simulator build).
// With --repeat the net runs N times on the same inputs (outputs must not
// change); the stats then show what the residency manager saved.
// --trace writes the first run's commands as a Chrome/Perfetto trace (Trace.h).
// Runs the bmodel through the runtime core on the cmodel.
#include "Commands.h"
#include "Json.h"
#include "NetIo.h"
#include "Trace.h"

#include "kiln/bmlib/device.h"
#include "kiln/cmodel/device.h"
#include "kiln/sophgo_sim/device.h"
#include "kiln/host/npz.h"
#include "kiln/rt/runtime.hpp"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

using namespace kiln;

llvm::cl::SubCommand kiln::cli::runCommand("run", "Run a bmodel on the cmodel through the runtime "
                                                  "core and write its outputs");

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> model(cl::Positional, cl::Required, cl::desc("<MODEL.bmodel>"),
                           cl::sub(cli::runCommand), cl::cat(cli::options()));
cl::opt<std::string> netName("net", cl::desc("Which of the file's nets to run, by name "
                                             "(default: the first)"),
                             cl::value_desc("NAME"), cl::sub(cli::runCommand),
                             cl::cat(cli::options()));
cl::opt<std::string> inPath("input", cl::Required, cl::desc("The net's inputs, by name"),
                            cl::value_desc("IN.npz"), cl::sub(cli::runCommand),
                            cl::cat(cli::options()));
cl::opt<std::string> outPath("output", cl::Required, cl::desc("Where the outputs go"),
                             cl::value_desc("OUT.npz"), cl::sub(cli::runCommand),
                             cl::cat(cli::options()));
cl::opt<std::string> statsPath("stats", cl::desc("Write the run's cycles, commands and DDR "
                                                 "bytes as JSON"),
                               cl::value_desc("STATS.json"), cl::sub(cli::runCommand),
                               cl::cat(cli::options()));
cl::opt<std::string> tracePath("trace", cl::desc("Write the first run's commands as a "
                                                 "Chrome/Perfetto trace"),
                               cl::value_desc("TRACE.json"), cl::sub(cli::runCommand),
                               cl::cat(cli::options()));
cl::opt<bool> allTensors("all-tensors",
                         cl::desc("Also write every DDR tensor of the run (as tensor:NAME)"),
                         cl::sub(cli::runCommand), cl::cat(cli::options()));
cl::opt<uint64_t> deviceMiB("device-mem", cl::desc("The cmodel's DDR size (default: what the "
                                                   "bmodel asks for)"),
                            cl::value_desc("MIB"), cl::sub(cli::runCommand),
                            cl::cat(cli::options()));
enum class DeviceKind { Cmodel, SophgoSim, Bmlib };
cl::opt<DeviceKind> deviceOpt(
    "device", cl::desc("What runs the commands"), cl::init(DeviceKind::Cmodel),
    cl::values(clEnumValN(DeviceKind::Cmodel, "cmodel", "kiln's cmodel (default)"),
               clEnumValN(DeviceKind::SophgoSim, "sophgo-sim",
                          "Sophgo's BM1684X simulator (BM1684X streams; tools/dev oracle)"),
               clEnumValN(DeviceKind::Bmlib, "bmlib",
                          "Sophgo's bmlib and the chip's firmware, as on a board (BM1684X "
                          "streams)")),
    cl::sub(cli::runCommand), cl::cat(cli::options()));
cl::opt<std::string> kernelModule(
    "kernel-module", cl::desc("With --device bmlib: the firmware's kernel module to load (a "
                              "board's libbm1684x_kernel_module.so)"),
    cl::value_desc("FILE"), cl::sub(cli::runCommand), cl::cat(cli::options()));
enum class IsaChoice { Auto, Kiln, Bm1684x };
cl::opt<IsaChoice> isaOpt(
    "isa", cl::desc("Which of the bmodel's command sets the cmodel runs"),
    cl::init(IsaChoice::Auto),
    cl::values(clEnumValN(IsaChoice::Auto, "auto", "BM1684X streams if it carries them (default)"),
               clEnumValN(IsaChoice::Kiln, "kiln", "kiln's records"),
               clEnumValN(IsaChoice::Bm1684x, "bm1684x", "BM1684X's own streams")),
    cl::sub(cli::runCommand), cl::cat(cli::options()));
cl::opt<unsigned> repeatOpt("repeat", cl::desc("Run N times on the same inputs (the stats show "
                                               "what residency saved)"),
                            cl::value_desc("N"), cl::init(1), cl::sub(cli::runCommand),
                            cl::cat(cli::options()));
} // namespace

int kiln::cli::runMain() {
  const unsigned repeat = std::max(1u, unsigned(repeatOpt));
  std::vector<uint8_t> file;
  if (auto err = host::readFile(model, file); !err.empty())
    return fail(err);
  std::vector<host::Array> inputs;
  if (auto err = host::readNpz(inPath, inputs); !err.empty())
    return fail(err);

  std::string error;
  uint64_t ddrBytes = uint64_t(deviceMiB) << 20;
  if (!ddrBytes && !(ddrBytes = deviceBytesFor(file, error))) // verifies the file
    return fail(model + ": " + error);
  const kiln_isa isa = isaOpt == IsaChoice::Kiln      ? KILN_ISA_KILN
                       : isaOpt == IsaChoice::Bm1684x ? KILN_ISA_BM1684X
                                                      : isaOf(file);
  std::unique_ptr<cmodel::Device> device;
  std::unique_ptr<sophgo_sim::Device> sim;
  std::unique_ptr<bmlib::Device> board;
  kiln_hal hal;
  if (deviceOpt != DeviceKind::Cmodel) {
    if (isa != KILN_ISA_BM1684X)
      return fail(model + ": " +
                  (deviceOpt == DeviceKind::SophgoSim ? "Sophgo's simulator" : "the firmware") +
                  " runs BM1684X's own commands: compile with isa: bm1684x");
    if (!tracePath.empty())
      return fail("--trace needs --device cmodel");
  }
  if (deviceOpt == DeviceKind::SophgoSim) {
    if (!(sim = sophgo_sim::Device::open(ddrBytes, &error)))
      return fail("Sophgo's simulator is not available: " + error);
    hal = sim->hal();
  } else if (deviceOpt == DeviceKind::Bmlib) {
    if (!(board = bmlib::Device::open(ddrBytes, kernelModule, &error)))
      return fail("bmlib: " + error);
    hal = board->hal();
  } else {
    device = std::make_unique<cmodel::Device>(ddrBytes, isa);
    hal = device->hal();
  }
  rt::Runtime runtime;
  if (kiln_status st = runtime.init(hal); st != KILN_OK)
    return fail(std::string("runtime init: ") + kiln_status_str(st));
  uint32_t netIndex = 0;
  if (!netName.empty())
    if (auto err = netIndexOf(file, netName, netIndex); !err.empty())
      return fail(model + ": " + err);
  rt::Net net;
  kiln_error_detail detail{};
  if (kiln_status st = net.load(runtime, file.data(), file.size(), netIndex, &detail);
      st != KILN_OK)
    return fail(model + ": cannot load bmodel: " + describeError(detail));

  if (auto err = setInputs(net.handle(), inputs, inPath); !err.empty())
    return fail(err);

  auto start = std::chrono::steady_clock::now();
  kiln_run_stats runStats{};
  uint64_t loadsAvoided = 0, bytesSaved = 0;
  std::vector<host::Array> tensors;
  std::vector<cmodel::TraceEvent> trace;
  const uint64_t firstSubmission = device ? device->stats().submissions : 0;
  for (unsigned r = 0; r < repeat; ++r) {
    // Per-layer values come from the last run only (reading them costs time).
    const bool capture = allTensors && r + 1 == repeat;
    if (device)
      device->traceInto(!tracePath.empty() && r == 0 ? &trace : nullptr);
    kiln_status st = runNet(net.handle(), 600u * 1000u * 1000u, &runStats,
                            capture ? &tensors : nullptr, &detail);
    if (device)
      device->traceInto(nullptr);
    if (st != KILN_OK) {
      std::string why = device ? device->faultReason()
                        : sim  ? sim->faultReason()
                               : board->faultReason();
      return fail("run failed: " + describeError(detail) + (why.empty() ? "" : " (" + why + ")"));
    }
    loadsAvoided += runStats.resident_loads_avoided;
    bytesSaved += runStats.resident_bytes_saved;
  }
  double wallMs = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start)
                      .count() /
                  repeat;

  if (!tracePath.empty())
    if (auto err = cli::writeTrace(tracePath, file, netIndex, kiln_net_stage(net.handle()), trace,
                                      firstSubmission); !err.empty())
      return fail(err);

  std::vector<host::Array> outputs = readOutputs(net.handle());
  for (host::Array &t : tensors)
    outputs.push_back(std::move(t));
  if (auto err = host::writeNpz(outPath, outputs); !err.empty())
    return fail(err);

  cmodel::Stats s = device ? device->stats() : cmodel::Stats{};
  if (sim) {
    s.tiu_commands = sim->tiuCommands();
    s.gdma_commands = sim->gdmaCommands();
  } else if (board) {
    s.tiu_commands = board->tiuCommands();
    s.gdma_commands = board->gdmaCommands();
  }
  std::printf("ran %s on %s (%s, device DDR %llu bytes)%s: %u groups, %llu TIU and %llu GDMA "
              "commands",
              model.c_str(),
              sim     ? "Sophgo's simulator"
              : board ? "bmlib and the chip's firmware"
                      : "the cmodel",
              isa == KILN_ISA_BM1684X ? "BM1684X commands" : "kiln records",
              (unsigned long long)ddrBytes, repeat > 1 ? " (totals over --repeat runs)" : "",
              runStats.groups_run, (unsigned long long)s.tiu_commands,
              (unsigned long long)s.gdma_commands);
  // Sophgo's simulator and a board report no cycles: the cmodel models them.
  if (!sim && !board)
    std::printf(", %llu cycles (TIU busy %llu, GDMA busy %llu), DDR %llu bytes",
                (unsigned long long)s.cycles, (unsigned long long)s.tiu_busy_cycles,
                (unsigned long long)s.gdma_busy_cycles,
                (unsigned long long)(s.ddr_read_bytes + s.ddr_write_bytes));
  std::printf(", %.1f ms", wallMs);
  if (repeat > 1)
    std::printf("; resident loads avoided %llu (%llu bytes)",
                (unsigned long long)loadsAvoided, (unsigned long long)bytesSaved);
  std::printf("\n");
  if (kiln_net_stage_count(net.handle()) > 1)
    std::printf("  ran stage %u of %u (%s)\n", kiln_net_stage(net.handle()),
                kiln_net_stage_count(net.handle()), inputShapes(net.handle()).c_str());
  if (!statsPath.empty()) {
    auto err = writeJsonFile(statsPath, 0, [&](llvm::json::OStream &j) {
      j.object([&] {
        j.attribute("cycles", s.cycles);
        j.attribute("tiu_cycles", s.tiu_busy_cycles);
        j.attribute("gdma_cycles", s.gdma_busy_cycles);
        j.attribute("ddr_bytes", s.ddr_read_bytes + s.ddr_write_bytes);
        j.attribute("ddr_read_bytes", s.ddr_read_bytes);
        j.attribute("ddr_write_bytes", s.ddr_write_bytes);
        j.attribute("tiu_commands", s.tiu_commands);
        j.attribute("gdma_commands", s.gdma_commands);
        j.attribute("groups", runStats.groups_run);
        j.attributeBegin("wall_ms"); // in ms to the microsecond, not 17 digits
        j.rawValue([&](llvm::raw_ostream &os) { os << llvm::format("%.3f", wallMs); });
        j.attributeEnd();
        j.attribute("runs", repeat);
        j.attribute("resident_loads_avoided", loadsAvoided);
        j.attribute("resident_bytes_saved", bytesSaved);
      });
    });
    if (!err.empty())
      return fail(err);
  }
  return 0;
}
