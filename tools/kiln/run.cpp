// kiln run MODEL.bmodel --input IN.npz --output OUT.npz [--stats STATS.json]
//   [--all-tensors] [--device-mem MIB] [--repeat N] [--trace TRACE.json]
// The cmodel's DDR is what the bmodel's memory query asks for, unless
// --device-mem gives a size.
// With --repeat the net runs N times on the same inputs (outputs must not
// change); the stats then show what the residency manager saved.
// --trace writes the first run's commands as a Chrome/Perfetto trace (Trace.h).
// Runs the bmodel through the runtime core on the cmodel.
#include "Commands.h"
#include "Json.h"
#include "NetIo.h"
#include "Trace.h"

#include "kiln/cmodel/device.h"
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
  std::unique_ptr<cmodel::Device> device = deviceFor(file, uint64_t(deviceMiB) << 20, error);
  if (!device)
    return fail(model + ": " + error);
  kiln_hal hal = device->hal();
  rt::Runtime runtime;
  if (kiln_status st = runtime.init(hal); st != KILN_OK)
    return fail(std::string("runtime init: ") + kiln_status_str(st));
  rt::Net net;
  kiln_error_detail detail{};
  if (kiln_status st = net.load(runtime, file.data(), file.size(), 0, &detail); st != KILN_OK)
    return fail(model + ": cannot load bmodel: " + describeError(detail));

  if (auto err = setInputs(net.handle(), inputs, inPath); !err.empty())
    return fail(err);

  auto start = std::chrono::steady_clock::now();
  kiln_run_stats runStats{};
  uint64_t loadsAvoided = 0, bytesSaved = 0;
  std::vector<host::Array> tensors;
  std::vector<cmodel::TraceEvent> trace;
  const uint64_t firstSubmission = device->stats().submissions;
  for (unsigned r = 0; r < repeat; ++r) {
    // Per-layer values come from the last run only (reading them costs time).
    const bool capture = allTensors && r + 1 == repeat;
    device->traceInto(!tracePath.empty() && r == 0 ? &trace : nullptr);
    kiln_status st = runNet(net.handle(), 600u * 1000u * 1000u, &runStats,
                            capture ? &tensors : nullptr, &detail);
    device->traceInto(nullptr);
    if (st != KILN_OK) {
      std::string why = device->faultReason();
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
    if (auto err = cli::writeTrace(tracePath, file, 0, trace, firstSubmission); !err.empty())
      return fail(err);

  std::vector<host::Array> outputs = readOutputs(net.handle());
  for (host::Array &t : tensors)
    outputs.push_back(std::move(t));
  if (auto err = host::writeNpz(outPath, outputs); !err.empty())
    return fail(err);

  const auto &s = device->stats();
  std::printf("ran %s on the cmodel (device DDR %llu bytes)%s: %u groups, %llu cycles (TIU "
              "busy %llu, GDMA busy %llu), DDR %llu bytes, %.1f ms",
              model.c_str(), (unsigned long long)device->ddr().size(),
              repeat > 1 ? " (totals over --repeat runs)" : "",
              runStats.groups_run, (unsigned long long)s.cycles,
              (unsigned long long)s.tiu_busy_cycles,
              (unsigned long long)s.gdma_busy_cycles,
              (unsigned long long)(s.ddr_read_bytes + s.ddr_write_bytes), wallMs);
  if (repeat > 1)
    std::printf("; resident loads avoided %llu (%llu bytes)",
                (unsigned long long)loadsAvoided, (unsigned long long)bytesSaved);
  std::printf("\n");
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
