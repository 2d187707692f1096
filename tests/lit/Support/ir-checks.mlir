// A pass that leaves invalid IR is a kiln internal error naming the pass and
// the op (kiln/Support/IRChecks.h, on every kiln and kiln-opt PassManager),
// not the verifier's diagnostic, which reads like a problem with the model.
// -kiln-test-break-ir (kiln-opt only) moves the second relu above the first.
// Two functions: the pass runs on them in parallel.
// RUN: not kiln-opt %s -kiln-test-break-ir 2>&1 | FileCheck %s --implicit-check-not=": error:"
// CHECK: kiln: internal error: pass 'kiln-test-break-ir' produced invalid IR: 'tpu.relu' at loc("second"): operand #0 does not dominate this use
// CHECK-NEXT: loc("second"): note: see current operation: {{.*}} = "tpu.relu"
// CHECK-NEXT: loc("first"): note: operand defined here
// CHECK-NEXT: kiln: this is a bug in kiln, not a problem with the model; please report it with the model and the IR the pass started from (KILN_DUMP_IR_ON_FAILURE=FILE writes it)

// KILN_DUMP_IR_ON_FAILURE writes the IR the pass started from, which
// reproduces the failure with the command it names.
// RUN: rm -f %t.before.mlir
// RUN: env KILN_DUMP_IR_ON_FAILURE=%t.before.mlir not kiln-opt %s -kiln-test-break-ir 2>&1 | FileCheck %s --check-prefix=DUMP
// DUMP: kiln: internal error: pass 'kiln-test-break-ir' produced invalid IR: 'tpu.relu' at loc("second")
// DUMP: kiln: this is a bug in kiln, not a problem with the model; please report it with the model{{$}}
// DUMP-NEXT: kiln: the IR pass 'kiln-test-break-ir' started from is in {{.*}}.before.mlir; rerun it with
// DUMP-NEXT: kiln-opt {{.*}}.before.mlir -pass-pipeline='builtin.module(func.func(kiln-test-break-ir{mode=dominance}))'
// RUN: FileCheck %s --check-prefix=SNAPSHOT < %t.before.mlir
// SNAPSHOT: // kiln: the IR pass 'kiln-test-break-ir' started from; rerun it with
// SNAPSHOT: func.func @broken
// SNAPSHOT-NEXT: %[[FIRST:.*]] = tpu.relu %arg0
// SNAPSHOT-NEXT: tpu.relu %[[FIRST]]
// RUN: not kiln-opt %t.before.mlir -pass-pipeline='builtin.module(func.func(kiln-test-break-ir{mode=dominance}))' 2>&1 | FileCheck %s --implicit-check-not=": error:"

// A pass that fails with its own error (a problem with the model) is
// reported as before; one that fails silently is a bug as well.
// RUN: not kiln-opt %s -kiln-test-break-ir=mode=fail 2>&1 | FileCheck %s --check-prefix=OWN --implicit-check-not="internal error"
// OWN: error: loc("second"): kiln-test-break-ir: this op is not supported
// RUN: not kiln-opt %s -kiln-test-break-ir=mode=silent 2>&1 | FileCheck %s --check-prefix=SILENT
// SILENT: kiln: internal error: pass 'kiln-test-break-ir' failed without a diagnostic

func.func @broken(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %0 = tpu.relu %arg0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("first")
  %1 = tpu.relu %0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("second")
  return %1 : tensor<1x2x4x4xf32>
}

func.func @untouched(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  return %arg0 : tensor<1x2x4x4xf32>
}
