//===- TestPasses.h - kiln-opt's test-only passes ---------------*- C++ -*-===//
#ifndef KILN_OPT_TESTPASSES_H
#define KILN_OPT_TESTPASSES_H

namespace kiln {
/// Registers -kiln-test-break-ir (kiln-opt only, never in kiln's pipelines).
void registerTestPasses();
} // namespace kiln

#endif
