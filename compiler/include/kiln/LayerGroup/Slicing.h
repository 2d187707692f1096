//===- Slicing.h - Layer-group slicing and LMEM sizing ----------*- C++ -*-===//
//
// A layer group runs its ops slice by slice in LMEM. Slices split N, C, H and
// W. Working backwards from what each slice must produce, every value gets
// the part it holds in that slice (with halo rows and columns for windowed
// consumers); values whose part never changes (filters, biases, broadcast
// operands) are held once for the whole group.
//
// C slices split channels in whole lane groups (multiples of 64), so a part
// starts on lane 0 like the whole tensor. A conv's output channels slice its
// filter and bias with them while it reads every input channel; a depthwise
// conv, pooling and elementwise ops read the channels they write. Deconvs and
// grouped convs (other than depthwise) keep channels whole.
//
// W slices give each part its own columns, laid out in LMEM as a narrower
// tensor (rows of the part's width). Convs and pooling read halo columns
// with per-slice left and right pads; pointwise ops read their own columns.
// Deconvs, resizes and values moved through their own DMA patterns (folded
// or unfolded rows, strided views and scatters) keep W whole (isWidthSliceable,
// maxWidthSlices). TIU operands and the LMEM side of a GDMA command have no
// row stride of their own, so every reader and the store of a value must use
// exactly the columns it holds (GroupSlicing::columnsMatch).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LAYERGROUP_SLICING_H
#define KILN_LAYERGROUP_SLICING_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <optional>
#include <vector>

namespace kiln::lg {

/// A half-open index range [idx, idx + len).
struct Range {
  int64_t idx = 0, len = 0;
  bool empty() const { return len <= 0; }
  int64_t end() const { return idx + len; }
  Range hull(Range o) const;
  bool operator==(const Range &o) const { return idx == o.idx && len == o.len; }
};

/// The part of an [n, c, h, w] tensor one slice touches.
struct Slice {
  Range n, c, h, w;
  bool empty() const { return n.empty() || c.empty() || h.empty() || w.empty(); }
  bool operator==(const Slice &o) const {
    return n == o.n && c == o.c && h == o.h && w == o.w;
  }
};

/// Element f (row-major) of a tensor read at offset + sum_k digit_k(f) *
/// strides[k], the digits of f in the mixed radix `sizes` (outermost first).
struct StridedReading {
  int64_t offset = 0;
  llvm::SmallVector<int64_t, 6> sizes, strides;

  /// The plain row-major reading of `elements` elements.
  static StridedReading dense(int64_t elements);
  /// Fits a reading to the element addresses of a tensor, or nullopt when
  /// no (non-negative) strides describe them.
  static std::optional<StridedReading> fit(llvm::ArrayRef<int64_t> addresses);
};

/// The group as slicing sees it: values and the compute ops between them.
struct GroupGraph {
  struct Val {
    mlir::Value value;
    std::array<int64_t, 4> lmemShape; ///< [n, c, h, w] as laid out in LMEM
    bool external = false;            ///< loaded from DDR
    bool escaping = false;            ///< stored to DDR
    bool wholeOnly = false;           ///< filter/bias/table: always loaded whole
    /// A conv filter the chip reads in its IC-parallel layout (isa:
    /// bm1684x): its LMEM holds ic padded to a multiple of this (1: none).
    uint32_t icAlign = 1;
    uint32_t dsize = 4;               ///< bytes per element (its dtype)
    /// A tpu.fold_rows result: loaded from its input, a lane block per kernel row.
    mlir::Operation *foldRows = nullptr;
    /// Escaping into a tpu.unfold_rows: stored a lane block per folded row.
    mlir::Operation *unfoldRows = nullptr;

    /// A tpu.strided_view result: loaded through its strides from its input.
    mlir::Operation *stridedView = nullptr;
    /// Stored through these strides into an in-place tpu.dma's result
    /// (a transpose its producer writes).
    std::optional<StridedReading> scatter;
  };
  struct Node {
    mlir::Operation *op;
    llvm::SmallVector<int> operands; ///< indices into vals (-1: none)
    int result;
  };
  std::vector<Val> vals;
  std::vector<Node> nodes;
  llvm::DenseMap<mlir::Value, int> index;

  /// From a list of compute ops in program order; operands defined elsewhere
  /// are external, results used elsewhere escape.
  static GroupGraph fromOps(llvm::ArrayRef<mlir::Operation *> ops);
  int valOf(mlir::Value v) const { return index.lookup(v); }
};

/// Per-slice rows of every value, and what each slice stores. Slice index
/// ((n * cSlices + c) * hSlices + h) * wSlices + w: W varies fastest, then H.
struct GroupSlicing {
  int64_t nSlices = 1, cSlices = 1, hSlices = 1, wSlices = 1;
  /// [val][slice]: rows the value holds in LMEM in that slice.
  std::vector<std::vector<Slice>> hold;
  /// [val][slice]: rows an escaping value stores in that slice.
  std::vector<std::vector<Slice>> store;
  /// [node][slice][operand]: rows of the operand the node reads, and for
  /// windowed ops the pads at the slice's four edges.
  struct Read {
    Slice rows;
    int64_t padTop = 0, padBottom = 0, padLeft = 0, padRight = 0;
  };
  std::vector<std::vector<llvm::SmallVector<Read, 3>>> reads;

  /// [val]: the value is the same in every slice: a held load, or computed
  /// from such values only (a filter formed in LMEM). One buffer, filled
  /// once: by the prologue's load or by its op in the first slice using it.
  std::vector<bool> invariant;

  /// The slices the schedule runs, in order: those some value is stored in.
  std::vector<int> order;

  /// False when a value is read or stored at other columns than it holds in
  /// some slice (a residual's skip read by a conv with halo columns and by an
  /// add without): this W slicing cannot run the group.
  bool columnsMatch = true;

  int64_t sliceCount() const { return nSlices * cSlices * hSlices * wSlices; }
  /// A value is held when its rows are the same in every slice.
  bool isHeld(int val) const;
  /// Bytes per lane of the value's largest slice.
  uint64_t laneBytes(const GroupGraph &g, int val) const;
  /// [val]: laneBytes, computed once by computeSlicing.
  std::vector<uint64_t> lane;
  /// True when no value has rows in the slice.
  bool sliceEmpty(int slice) const;
};

/// Slices every value by working backwards from what each slice stores.
GroupSlicing computeSlicing(const GroupGraph &g, int64_t nSlices, int64_t cSlices,
                            int64_t hSlices, int64_t wSlices, bool taperedH = false);

/// Part i of `parts` of [0, extent): equal parts, or with `tapered` (and at
/// least three parts) a first and a last part half the others. Nothing hides
/// a group's first loads or its last stores, so smaller end slices shorten
/// the pipeline's fill and drain, for larger middle slices.
Range rowPart(int64_t i, int64_t extent, int64_t parts, bool tapered);

/// The rows of each operand node `node` reads to compute rows `out` of its
/// result, with a windowed op's pads: a function of the op's window alone,
/// so code generation derives a slice's reads from the rows its result
/// holds there (GroupSlicing::reads).
llvm::SmallVector<GroupSlicing::Read, 3> readsOf(const GroupGraph &g, const GroupGraph::Node &node,
                                                 Slice out);

/// Whether the op can run on a part of its output channels (see above;
/// tpu::SliceableOp::isChannelSliceable).
bool isChannelSliceable(mlir::Operation *op);

/// Lane groups (64 channels each) of the widest escaping value when every op
/// of the group can be sliced along C, else 1: the most C slices worth trying.
int64_t maxChannelSlices(const GroupGraph &g);

/// Whether the op can run on a part of its output columns
/// (tpu::SliceableOp::isWidthSliceable).
bool isWidthSliceable(mlir::Operation *op);

/// Columns of the widest escaping value when every op of the group can be
/// sliced along W and no value moves through a DMA pattern of its own
/// (folded or unfolded rows, strided views, scatters), else 1: the most W
/// slices worth trying.
int64_t maxWidthSlices(const GroupGraph &g);

/// Whether the op reads this operand whole, in a layout of its own, in every
/// slice (tpu::SliceableOp::readsWholeOperand): conv/deconv filters and
/// biases (INT8: requant tables), the INT8 lookup table of tpu.active.
bool isWholeOperand(mlir::Operation *op, unsigned operandNumber);

/// A tpu.reshape that only feeds conv/deconv filters and whose input's LMEM
/// layout is already theirs ([1, O, I, kh*kw] viewed as [O, I, kh, kw]). In
/// a group that also computes its input it moves no bytes: the filter is
/// formed in LMEM where the conv reads it (a modulated conv's filter).
bool isFilterView(mlir::Operation *op);

/// The [n, c, h, w] shape an operand (or result, operandNumber = -1) of a TIU
/// op has in LMEM: filters [1, oc, ic/group, kh*kw], biases [1, oc, 1, 1],
/// INT8 requant tables [1, oc, 1, 3], anything else its shape right-aligned
/// to 4 dimensions (a tpu.active table [1, 1, 1, 256]).
std::array<int64_t, 4> lmemShapeOf(mlir::Operation *op, int operandNumber);

/// The attribute that says the bmodel carries BM1684X's own commands (`isa:
/// bm1684x`), set by `kiln compile` before lowering on the module and each
/// of its functions.
constexpr llvm::StringLiteral kIsaAttr = "kiln.isa";
/// Whether op sits in a module that carries BM1684X's own commands.
bool emitsChipCommands(mlir::Operation *op);
/// For a filter operand (operand 1) of a tpu.conv2d: the input-channel block
/// the chip reads it in when the module carries BM1684X's commands (convs
/// that are not grouped: 32 for f16 and bf16, 64 for INT8, the "alignIC"
/// layout of kiln/abi/bm1684x.h), else 1. Its LMEM then holds ic padded to
/// a multiple of it, per output channel.
uint32_t chipFilterIcAlign(mlir::Operation *op, int operandNumber);
/// On a top.weight whose every reader is such a filter: [DDR offset, block]
/// of a second copy in the chip's IC-parallel layout, [oc][ic padded to the
/// block][kh*kw] with the block's channels innermost (tpu-address-assign
/// places it, codegen writes it, the BM1684X lowering loads it whole).
constexpr llvm::StringLiteral kChipFilterAttr = "kiln.chip_filter";
/// Per-lane LMEM that BM1684X's commands for `producer` need beside a slice
/// [n, c, h, w] of its result, when the module carries them: the int32
/// intermediates of INT8 ops (a conv's accumulators and requant table, an
/// eltwise op's two scaled operands, an average pool's sums, a quantizing
/// cast's scaled floats, an activation's widened input). The lowering
/// puts them right after the slice's own bytes; 0 for other ops.
uint64_t chipScratchBytes(mlir::Operation *producer, int64_t n, int64_t c, int64_t h, int64_t w);
/// The shape right-aligned to [n, c, h, w]; above 4-D the leading
/// dimensions fold into n.
std::array<int64_t, 4> nchwOf(mlir::Value v);

/// Per-lane LMEM use of a plan with `buffers` copies of every sliced value.
uint64_t lmemLaneBytes(const GroupGraph &g, const GroupSlicing &s,
                       int64_t buffers);

struct Plan {
  int64_t nSlices = 1, cSlices = 1, hSlices = 1, wSlices = 1, buffers = 1;
  /// LMEM may be laid out by lifetime (LmemAlloc.h), dead values' bytes reused.
  bool reuse = false;
  /// Half-size first and last H slices (rowPart).
  bool taperedH = false;
};

/// Aligns LMEM allocations so each starts on an EU boundary.
uint64_t alignLmem(uint64_t bytes);

} // namespace kiln::lg

#endif
