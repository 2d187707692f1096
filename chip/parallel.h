// The cmodel's threads: a small pool that splits large records and runs the
// GDMA engine beside the TIU engine.
//
// parallelFor(jobs, f) runs f(0) .. f(jobs - 1), each job on one thread, and
// returns when all are done. Kernels give every output element to exactly one
// job and keep its arithmetic inside that job, so results never depend on the
// thread count. KILN_CMODEL_THREADS sets the threads (default: the machine's
// cores; 1 runs everything on the caller).
//
// Two batches can be open at once, one per engine: the pool's threads, and an
// engine waiting in waitUntil, take jobs from either. A third caller at the
// same time (or a job that calls parallelFor) runs its jobs itself.
//
// runBeside(main, side) runs side() on one pool thread while the caller runs
// main(), and returns when both are done; it returns false without running
// either when there is no pool thread (1 thread) or another side task is
// running. main and side synchronize through waitUntil and notifyProgress.
#ifndef KILN_CHIP_PARALLEL_H
#define KILN_CHIP_PARALLEL_H

#include <cstddef>
#include <functional>

#include "kiln/chip/tiu_kernels.h"

namespace kiln::chip {

// cmodelThreads() and setCmodelThreads() are in kiln/chip/tiu_kernels.h;
// the thread count must not change while the pool is in use.

void parallelFor(size_t jobs, const std::function<void(size_t)> &f);

bool runBeside(const std::function<void()> &main, const std::function<void()> &side);

// Returns once ready() holds, which notifyProgress() tells waiting threads to
// check again. Meanwhile the caller runs jobs of open parallelFor batches, so
// an engine waiting for the other one's sync id lends it its thread.
void waitUntil(const std::function<bool()> &ready);
void notifyProgress();

} // namespace kiln::chip

#endif
