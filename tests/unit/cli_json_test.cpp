// The kiln CLI's JSON (tools/kiln/Json.h): names holding quotes,
// backslashes, control characters and non-ASCII UTF-8 come back unchanged
// through `kiln inspect --json` and the trace writer, parsed by
// llvm::json::parse; bytes that are not UTF-8 come back as U+FFFD.
#include "Json.h"
#include "Trace.h"
#include "bmodel_builder.h"

#include "kiln/abi/cost.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace kiln;
using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

namespace {

const std::string kNames[] = {
    std::string("quote\"back\\slash"),
    "ctl\x01\x1f\x7f end",
    "newline\ntab\tcr\r",
    "utf8 \xc3\xa9t\xc3\xa9 \xe5\x90\x8d\xe5\x89\x8d \xf0\x9f\x94\xa5",
    "/stem/conv.0/Conv_output_0",
};
const std::string kNotUtf8 = "bad \xff\xfe byte";

std::string tempPath(const char *suffix) {
  llvm::SmallString<128> path;
  EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("cli_json_test", suffix, path));
  return std::string(path.str());
}

/// The bmodel: every name the JSON carries is one of kNames (the net's is
/// kNotUtf8), one group with a TIU and a GDMA command.
std::vector<uint8_t> weirdBmodel() {
  auto tensor = [](const std::string &name) {
    test::TensorSpec t;
    t.name = name;
    t.shape = {1, 4};
    return t;
  };
  test::NetSpec net;
  net.name = kNotUtf8;
  for (const std::string &n : kNames)
    net.tensors.push_back(tensor(n));
  net.inputs.push_back(tensor(kNames[0]));
  net.outputs.push_back(tensor(kNames[1]));
  test::GroupSpec g;
  g.tiu.push_back(kiln_tiu_cmd{});
  g.tiu[0].op = KILN_TIU_CONV;
  g.gdma.push_back(kiln_gdma_cmd{});
  g.gdma[0].dir = KILN_GDMA_DDR_TO_LMEM;
  g.ops = {kNames[2], kNames[3]};
  g.tiu_ops = {1};
  g.slices = {kNames[4], kNames[0]};
  g.gdma_tensors = {1};
  g.lmem = std::vector<test::LmemSpec>{{kNames[3], 0, 64}};
  net.groups.push_back(g);
  net.residency.push_back({kNames[2]});
  test::ModelSpec model;
  model.nets.push_back(net);
  return test::buildBmodel(model);
}

Value parseFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  EXPECT_TRUE(bool(buffer)) << path;
  if (!buffer)
    return nullptr;
  llvm::Expected<Value> value = llvm::json::parse((*buffer)->getBuffer());
  if (!value) {
    ADD_FAILURE() << path << ": " << llvm::toString(value.takeError());
    return nullptr;
  }
  return std::move(*value);
}

std::string str(const Value *v) {
  EXPECT_TRUE(v && v->getAsString());
  return v && v->getAsString() ? v->getAsString()->str() : "";
}

TEST(CliJson, StringsRoundTrip) {
  for (const std::string &n : kNames) {
    std::string path = tempPath("json");
    ASSERT_EQ(cli::writeJsonFile(path, 0,
                                 [&](llvm::json::OStream &j) {
                                   j.object([&] { j.attribute("name", cli::jsonString(n)); });
                                 }),
              "");
    Value v = parseFile(path);
    EXPECT_EQ(str(v.getAsObject()->get("name")), n);
    llvm::sys::fs::remove(path);
  }
  EXPECT_EQ(cli::jsonString(kNotUtf8), llvm::json::fixUTF8(kNotUtf8));
  EXPECT_TRUE(llvm::json::isUTF8(cli::jsonString(kNotUtf8)));
}

TEST(CliJson, InspectJsonRoundTrips) {
  std::string bmodel = tempPath("bmodel"), json = tempPath("json");
  std::vector<uint8_t> file = weirdBmodel();
  std::ofstream(bmodel, std::ios::binary).write(reinterpret_cast<const char *>(file.data()),
                                                std::streamsize(file.size()));
  std::string cmd = std::string(KILN_EXE) + " inspect '" + bmodel + "' --json > '" + json + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  Value doc = parseFile(json);
  ASSERT_TRUE(doc.getAsObject());
  const Object &net = *(*doc.getAsObject()->getArray("nets"))[0].getAsObject();
  EXPECT_EQ(str(net.get("name")), llvm::json::fixUTF8(kNotUtf8));
  const Array &tensors = *net.getArray("tensors");
  ASSERT_EQ(tensors.size(), std::size(kNames));
  for (size_t i = 0; i < tensors.size(); ++i)
    EXPECT_EQ(str(tensors[i].getAsObject()->get("name")), kNames[i]);
  EXPECT_EQ(str((*net.getArray("inputs"))[0].getAsObject()->get("name")), kNames[0]);
  EXPECT_EQ(str((*net.getArray("outputs"))[0].getAsObject()->get("name")), kNames[1]);
  const Object &group = *(*net.getArray("groups"))[0].getAsObject();
  EXPECT_EQ(str(&(*group.getArray("ops"))[0]), kNames[2]);
  EXPECT_EQ(str(&(*group.getArray("ops"))[1]), kNames[3]);
  EXPECT_EQ(str((*group.getArray("slices"))[0].getAsObject()->get("tensor")), kNames[4]);
  EXPECT_EQ(str((*group.getArray("lmem"))[0].getAsObject()->get("tensor")), kNames[3]);
  EXPECT_EQ(str((*net.getArray("residency"))[0].getAsObject()->get("tensor")), kNames[2]);
  llvm::sys::fs::remove(bmodel);
  llvm::sys::fs::remove(json);
}

TEST(CliJson, TraceRoundTrips) {
  std::vector<uint8_t> file = weirdBmodel();
  std::vector<cmodel::TraceEvent> events = {{0, KILN_ENGINE_TIU, 0, 0, 100},
                                            {0, KILN_ENGINE_GDMA, 0, 0, 50}};
  std::string path = tempPath("json");
  ASSERT_EQ(cli::writeTrace(path, file, 0, 0, events, 0), "");
  Value doc = parseFile(path);
  ASSERT_TRUE(doc.getAsObject());
  std::vector<std::string> names;
  for (const Value &e : *doc.getAsObject()->getArray("traceEvents"))
    names.push_back(str(e.getAsObject()->get("ph")) == "M"
                        ? str(e.getAsObject()->getObject("args")->get("name"))
                        : str(e.getAsObject()->get("name")));
  EXPECT_EQ(names, (std::vector<std::string>{"kiln cmodel: " + llvm::json::fixUTF8(kNotUtf8),
                                             "TIU", "GDMA", kNames[3],
                                             "load " + kNames[0]}));
  llvm::sys::fs::remove(path);
}

} // namespace
