// The generated bmodel reader, configured for freestanding use: without a
// FLATBUFFERS_ASSERT of our own, flatbuffers/base.h pulls in <assert.h> and
// libc's assert handler. The verifier reports every problem by return value.
#ifndef KILN_RT_CORE_BMODEL_FB_H
#define KILN_RT_CORE_BMODEL_FB_H

#define FLATBUFFERS_ASSERT(x) ((void)0)
#include "kiln/bmodel_generated.h"

#endif
