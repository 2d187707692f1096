// kiln compare A.npz B.npz [--tolerance COS,EUCLID]
#include "Commands.h"

#include "kiln/host/compare.h"
#include "kiln/host/npz.h"

#include <cstdio>
#include <cstdlib>

int kiln::cli::compareMain(const Args &args) {
  std::vector<std::string> files;
  double minCos = 0.99, minEuclid = 0.90;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--tolerance" && i + 1 < args.size()) {
      const std::string &t = args[++i];
      char *end = nullptr;
      minCos = std::strtod(t.c_str(), &end);
      if (*end != ',')
        return fail("--tolerance expects COS,EUCLID, got '" + t + "'");
      minEuclid = std::strtod(end + 1, &end);
      if (*end)
        return fail("--tolerance expects COS,EUCLID, got '" + t + "'");
    } else {
      files.push_back(args[i]);
    }
  }
  if (files.size() != 2)
    return fail("compare expects two npz files");
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
