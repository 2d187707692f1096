// kiln compare A.npz B.npz [--tolerance COS,EUCLID]
#include "Commands.h"

#include "kiln/host/compare.h"
#include "kiln/host/npz.h"

#include <cstdio>

using namespace kiln;

llvm::cl::SubCommand kiln::cli::compareCommand(
    "compare", "Compare two npz files tensor by tensor (cosine and euclidean similarity)");

namespace {
namespace cl = llvm::cl;
cl::list<std::string> files(cl::Positional, cl::OneOrMore, cl::desc("<A.npz> <B.npz>"),
                            cl::sub(cli::compareCommand), cl::cat(cli::options()));
cl::list<double> tolerance("tolerance", cl::CommaSeparated,
                           cl::desc("The least cosine and euclidean similarity that pass "
                                    "(default 0.99,0.90)"),
                           cl::value_desc("COS,EUCLID"), cl::sub(cli::compareCommand),
                           cl::cat(cli::options()));
} // namespace

int kiln::cli::compareMain() {
  if (files.size() != 2)
    return fail("compare expects two npz files");
  double minCos = 0.99, minEuclid = 0.90;
  if (!tolerance.empty()) {
    if (tolerance.size() != 2)
      return fail("--tolerance expects COS,EUCLID");
    minCos = tolerance[0];
    minEuclid = tolerance[1];
  }
  std::vector<host::Array> a, b;
  if (auto err = host::readNpz(files[0], a); !err.empty())
    return fail(err);
  if (auto err = host::readNpz(files[1], b); !err.empty())
    return fail(err);
  auto rows = host::compareArrays(a, b, minCos, minEuclid);
  bool ok = !rows.empty();
  std::printf("%-32s %12s %12s %12s  %s\n", "tensor", "cosine", "euclidean",
              "max_abs", "result");
  for (const auto &r : rows) {
    std::printf("%-32s %12.8f %12.8f %12.4g  %s%s%s\n", r.name.c_str(),
                r.sim.cosine, r.sim.euclidean, r.sim.max_abs,
                r.pass ? "PASS" : "FAIL", r.problem.empty() ? "" : ": ",
                r.problem.c_str());
    ok = ok && r.pass;
  }
  std::printf("%s (tolerance cosine >= %g, euclidean >= %g)\n",
              ok ? "PASS" : "FAIL", minCos, minEuclid);
  return ok ? 0 : 1;
}
