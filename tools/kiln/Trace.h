//===- Trace.h - A Chrome/Perfetto trace of a run on the cmodel -*- C++ -*-===//
//
// One track per engine (TIU, GDMA), one slice per command named by the ONNX
// op it runs (TIU) or the tensor it moves (GDMA), with its group; a counter
// of the DDR bytes moved so far. Timestamps are the cmodel's modelled cycles
// at 1 GHz, so 1 us = 1000 cycles. ui.perfetto.dev and chrome://tracing open
// the file.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_TRACE_H
#define KILN_TOOLS_KILN_TRACE_H

#include "kiln/cmodel/device.h"

#include <string>
#include <vector>

namespace kiln::cli {

/// Writes the trace of one run of net `netIndex` (at stage `stage`) of the
/// bmodel `file`, whose
/// commands were recorded as `events` (Device::traceInto) from submission
/// `firstSubmission` on, one submission per group in order. Returns an error
/// message, empty on success.
std::string writeTrace(const std::string &path, const std::vector<uint8_t> &file,
                       uint32_t netIndex, uint32_t stage,
                       const std::vector<cmodel::TraceEvent> &events,
                       uint64_t firstSubmission);

} // namespace kiln::cli

#endif
