// A small pool for the cmodel's large TIU commands.
//
// parallelFor(jobs, f) runs f(0) .. f(jobs - 1), each job on one thread, and
// returns when all are done. Kernels give every output element to exactly one
// job and keep its arithmetic inside that job, so results never depend on the
// thread count. KILN_CMODEL_THREADS sets the threads (default: the machine's
// cores; 1 runs everything on the caller).
#ifndef KILN_CMODEL_PARALLEL_H
#define KILN_CMODEL_PARALLEL_H

#include <cstddef>
#include <functional>

#include "kiln/cmodel/tiu_kernels.h"

namespace kiln::cmodel {

// cmodelThreads() and setCmodelThreads() are in kiln/cmodel/tiu_kernels.h.

void parallelFor(size_t jobs, const std::function<void(size_t)> &f);

} // namespace kiln::cmodel

#endif
