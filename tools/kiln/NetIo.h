// A loaded net's inputs and outputs as npz arrays, for `kiln run` and the
// cmodel level of `kiln compile`'s verification.
#ifndef KILN_TOOLS_KILN_NETIO_H
#define KILN_TOOLS_KILN_NETIO_H

#include "kiln/cmodel/device.h"
#include "kiln/host/npz.h"
#include "kiln/rt/kiln_rt.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln::cli {
/// The DDR net 0 of the bmodel needs (kiln_bmodel_query_memory), or 0 and
/// `error` set if the bmodel does not verify.
uint64_t deviceBytesFor(const std::vector<uint8_t> &bmodel, std::string &error);

/// The command set a device should run net 0 of a verified bmodel in:
/// BM1684X's own streams when every group carries them (isa: bm1684x),
/// else kiln's records.
kiln_isa isaOf(const std::vector<uint8_t> &bmodel);

/// A cmodel running `isa` whose DDR holds what net 0 of the bmodel needs,
/// or `ddrBytes` if not 0; nullptr and `error` set if the bmodel does not
/// verify.
std::unique_ptr<cmodel::Device> deviceFor(const std::vector<uint8_t> &bmodel, uint64_t ddrBytes,
                                          std::string &error, kiln_isa isa = KILN_ISA_KILN);

/// The symbolic name of a status ("KILN_ERR_OUT_OF_RANGE").
const char *statusName(kiln_status status);

/// A failed runtime call, as "KILN_ERR_OUT_OF_RANGE in net 0, group 3, GDMA
/// command 7: destination outside LMEM" (the runtime's kiln_error_detail).
std::string describeError(const kiln_error_detail &detail);

/// The index of the net named `name` in a verified bmodel, or an error
/// listing the names there are.
std::string netIndexOf(const std::vector<uint8_t> &file, const std::string &name,
                       uint32_t &index);
/// The selected stage's input shapes, "x [1, 3, 48, 640]".
std::string inputShapes(const kiln_net *net);
/// Each stage's input shapes, "0: x [1, 3, 48, 320]; 1: x [1, 3, 48, 640]".
/// It selects each stage in turn (which forgets what LMEM held) and then the
/// one selected before: for messages, not between runs.
std::string stageList(kiln_net *net);
/// Selects the stage whose inputs have the arrays' shapes and sets every
/// input from the array of its name (as f32). Returns "" or an error naming
/// `source` (and, for shapes no stage has, the stages there are).
std::string setInputs(kiln_net *net, const std::vector<host::Array> &inputs,
                      const std::string &source);

/// The net's outputs as f32 (INT8 dequantized).
std::vector<host::Array> readOutputs(const kiln_net *net);

/// Runs the net once. With `tensors`, also appends every tensor as
/// "tensor:NAME" (several chip tensors of one ONNX name: the last in net
/// order), each read right after the group that computes it, since a
/// planned net reuses DDR.
kiln_status runNet(kiln_net *net, uint32_t timeoutUs, kiln_run_stats *stats,
                   std::vector<host::Array> *tensors, kiln_error_detail *detail = nullptr);
} // namespace kiln::cli

#endif
