// kiln run MODEL.bmodel --input IN.npz --output OUT.npz [--stats STATS.json]
//   [--all-tensors] [--device-mem MIB] [--repeat N] [--trace TRACE.json]
// The cmodel's DDR is what the bmodel's memory query asks for, unless
// --device-mem gives a size.
// With --repeat the net runs N times on the same inputs (outputs must not
// change); the stats then show what the residency manager saved.
// --trace writes the first run's commands as a Chrome/Perfetto trace (Trace.h).
// Runs the bmodel through the runtime core on the cmodel.
#include "Commands.h"
#include "NetIo.h"
#include "Trace.h"

#include "kiln/cmodel/device.h"
#include "kiln/host/npz.h"
#include "kiln/rt/runtime.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

using namespace kiln;

int kiln::cli::runMain(const Args &args) {
  std::string model, inPath, outPath, statsPath, tracePath;
  bool allTensors = false;
  uint64_t deviceMiB = 0; // 0: what the bmodel needs
  unsigned repeat = 1;
  for (size_t i = 0; i < args.size(); ++i) {
    auto next = [&]() { return i + 1 < args.size() ? args[++i] : std::string(); };
    if (args[i] == "--input")
      inPath = next();
    else if (args[i] == "--output")
      outPath = next();
    else if (args[i] == "--stats")
      statsPath = next();
    else if (args[i] == "--trace")
      tracePath = next();
    else if (args[i] == "--all-tensors")
      allTensors = true;
    else if (args[i] == "--device-mem")
      deviceMiB = std::strtoull(next().c_str(), nullptr, 10);
    else if (args[i] == "--repeat")
      repeat = std::max(1ul, std::strtoul(next().c_str(), nullptr, 10));
    else if (!args[i].empty() && args[i][0] == '-')
      return fail("run: unknown option '" + args[i] + "'");
    else
      model = args[i];
  }
  if (model.empty() || inPath.empty() || outPath.empty())
    return fail("run expects MODEL --input IN.npz --output OUT.npz");

  std::vector<uint8_t> file;
  if (auto err = host::readFile(model, file); !err.empty())
    return fail(err);
  std::vector<host::Array> inputs;
  if (auto err = host::readNpz(inPath, inputs); !err.empty())
    return fail(err);

  std::string error;
  std::unique_ptr<cmodel::Device> device = deviceFor(file, deviceMiB << 20, error);
  if (!device)
    return fail(model + ": " + error);
  kiln_hal hal = device->hal();
  rt::Runtime runtime;
  if (kiln_status st = runtime.init(hal); st != KILN_OK)
    return fail(std::string("runtime init: ") + kiln_status_str(st));
  rt::Net net;
  if (kiln_status st = net.load(runtime, file.data(), file.size(), 0); st != KILN_OK)
    return fail(model + ": cannot load bmodel: " + kiln_status_str(st));

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
                            capture ? &tensors : nullptr);
    device->traceInto(nullptr);
    if (st != KILN_OK) {
      std::string why = device->faultReason();
      return fail(std::string("run failed: ") + kiln_status_str(st) +
                  (why.empty() ? "" : " (" + why + ")"));
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
    FILE *f = std::fopen(statsPath.c_str(), "w");
    if (!f)
      return fail("cannot write " + statsPath);
    std::fprintf(f,
                 "{\"cycles\": %llu, \"tiu_cycles\": %llu, \"gdma_cycles\": %llu, "
                 "\"ddr_bytes\": %llu, \"ddr_read_bytes\": %llu, "
                 "\"ddr_write_bytes\": %llu, \"tiu_commands\": %llu, "
                 "\"gdma_commands\": %llu, \"groups\": %u, \"wall_ms\": %.3f, "
                 "\"runs\": %u, \"resident_loads_avoided\": %llu, "
                 "\"resident_bytes_saved\": %llu}\n",
                 (unsigned long long)s.cycles, (unsigned long long)s.tiu_busy_cycles,
                 (unsigned long long)s.gdma_busy_cycles,
                 (unsigned long long)(s.ddr_read_bytes + s.ddr_write_bytes),
                 (unsigned long long)s.ddr_read_bytes,
                 (unsigned long long)s.ddr_write_bytes,
                 (unsigned long long)s.tiu_commands,
                 (unsigned long long)s.gdma_commands, runStats.groups_run, wallMs,
                 repeat, (unsigned long long)loadsAvoided,
                 (unsigned long long)bytesSaved);
    std::fclose(f);
  }
  return 0;
}
