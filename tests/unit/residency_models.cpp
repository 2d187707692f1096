#include "residency_models.h"

#include <cstring>

namespace kiln::test {
namespace {

NetSpec baseNet(const char *name) {
  NetSpec net;
  net.name = name;
  net.coeff_size = kCoeffSize;
  net.neuron_size = kNeuronSize;
  net.coeff.resize(kK2 + kBytes);
  std::memcpy(net.coeff.data() + kK1, k1().data(), kBytes);
  std::memcpy(net.coeff.data() + kK2, k2().data(), kBytes);
  net.inputs = {tensor("x", kX)};
  return net;
}

} // namespace

const std::vector<float> &k1() {
  static const std::vector<float> v = randomFloats(kShape.count(), 11);
  return v;
}
const std::vector<float> &k2() {
  static const std::vector<float> v = randomFloats(kShape.count(), 12);
  return v;
}

TensorSpec tensor(const char *name, uint64_t offset) {
  TensorSpec t;
  t.name = name;
  t.shape = {1, 3, 4, 5};
  t.ddr_offset = offset;
  return t;
}

LmemSpec alloc(const char *name, uint32_t addr, bool held) {
  LmemSpec a;
  a.tensor = name;
  a.addr = addr;
  a.size = kLane;
  a.last_step = 1;
  a.held = held;
  return a;
}

ResidencySpec resident(const char *name, uint32_t addr, uint32_t group) {
  ResidencySpec r;
  r.tensor = name;
  r.group = group;
  r.lmem_addr = addr;
  r.lmem_size = kLane;
  r.last_step = 1;
  return r;
}

// z = relu((x + k1) * k2) in one group: a prologue loading the held k1 and
// k2, then one slice loading x, computing and storing z.
GroupSpec mulAddGroup() {
  GroupSpec g;
  g.gdma = {gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, kShape, kK1, kLK1),
            gdmaCmd(2, 0, KILN_GDMA_DDR_TO_LMEM, kShape, kK2, kLK2),
            gdmaCmd(3, 0, KILN_GDMA_DDR_TO_LMEM, kShape, kX, kLX),
            gdmaCmd(4, 2, KILN_GDMA_LMEM_TO_DDR, kShape, kLZ, kZ)};
  kiln_tiu_cmd add = tiuCmd(1, 3, KILN_TIU_ELTWISE, KILN_ELT_ADD);
  add.out = lmemOperand(kLT, kShape);
  add.in0 = lmemOperand(kLX, kShape);
  add.in1 = lmemOperand(kLK1, kShape);
  kiln_tiu_cmd mul = tiuCmd(2, 0, KILN_TIU_ELTWISE, KILN_ELT_MUL);
  mul.flags = KILN_TIU_FLAG_RELU;
  mul.out = lmemOperand(kLZ, kShape);
  mul.in0 = lmemOperand(kLT, kShape);
  mul.in1 = lmemOperand(kLK2, kShape);
  g.tiu = {add, mul};
  g.timesteps = {TimestepSpec{-1, 0, 0, 0, 2}, TimestepSpec{0, 0, 2, 2, 4}};
  g.lmem = std::vector<LmemSpec>{alloc("k1", kLK1, true), alloc("k2", kLK2, true),
                                 alloc("x", kLX), alloc("t", kLT), alloc("z", kLZ)};
  return g;
}

// out = relu(in) with its two LMEM buffers at base and base + 128.
GroupSpec reluGroup(uint64_t from, uint64_t to, uint32_t base) {
  GroupSpec g;
  g.gdma = {gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, kShape, from, base),
            gdmaCmd(2, 1, KILN_GDMA_LMEM_TO_DDR, kShape, base + kLane, to)};
  kiln_tiu_cmd relu = tiuCmd(1, 1, KILN_TIU_ACTIVE, KILN_ACT_RELU);
  relu.out = lmemOperand(base + kLane, kShape);
  relu.in0 = lmemOperand(base, kShape);
  g.tiu = {relu};
  g.timesteps = {TimestepSpec{-1, 0, 0, 0, 0}, TimestepSpec{0, 0, 1, 0, 2}};
  g.lmem = std::vector<LmemSpec>{alloc("in", base), alloc("out", base + kLane)};
  return g;
}

ModelSpec model(const NetSpec &net) {
  ModelSpec m;
  m.nets = {net};
  return m;
}

// One group: z = relu((x + k1) * k2), k1 and k2 resident.
NetSpec mulAddNet() {
  NetSpec net = baseNet("mul_add");
  net.outputs = {tensor("z", kZ)};
  net.groups = {mulAddGroup()};
  net.residency = {resident("k1", kLK1), resident("k2", kLK2)};
  return net;
}

// Two groups: the mul-add, then out = relu(z) with its buffers at relu_base.
NetSpec twoGroupNet(uint32_t relu_base) {
  NetSpec net = mulAddNet();
  net.name = "two_groups";
  net.outputs = {tensor("out", kOut)};
  net.groups.push_back(reluGroup(kZ, kOut, relu_base));
  return net;
}

// A net of one relu group whose buffers sit at base.
NetSpec reluNet(uint32_t base) {
  NetSpec net = baseNet("relu");
  net.coeff.clear();
  net.outputs = {tensor("out", kOut)};
  net.groups = {reluGroup(kX, kOut, base)};
  return net;
}

} // namespace kiln::test
