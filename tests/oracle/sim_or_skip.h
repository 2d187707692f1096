// KILN_SIM_OR_SKIP(sim): binds `sim` to Sophgo's simulator, or skips the
// test saying why it is absent (never a silent pass).
#ifndef KILN_TESTS_ORACLE_SIM_OR_SKIP_H
#define KILN_TESTS_ORACLE_SIM_OR_SKIP_H

#include <gtest/gtest.h>

#include <string>

#include "kiln/sophgo_sim/simulator.h"

#define KILN_SIM_OR_SKIP(sim)                                        \
  std::string sim##_why;                                             \
  kiln::sophgo_sim::SophgoSim *sim = kiln::sophgo_sim::SophgoSim::get(&sim##_why); \
  if (!sim) GTEST_SKIP() << "Sophgo's simulator: " << sim##_why

#endif
