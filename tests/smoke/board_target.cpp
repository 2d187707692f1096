#include "board_target.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "kiln/abi/regs.h"
#include "kiln/cmodel/device.h"
#include "kiln/rt/kiln_board.h"

namespace kiln::smoke {
namespace {

std::string statusText(const char *what, kiln_status st) {
  return std::string(what) + ": " + kiln_status_str(st);
}

class CmodelTarget : public Target {
public:
  explicit CmodelTarget(uint64_t ddr_bytes) : dev_(ddr_bytes) {}
  kiln_status init() {
    kiln_board_io io = dev_.boardIo();
    return kiln_board_init(&board_, &io, &hal_);
  }
  cmodel::Device *device() override { return &dev_; }
  std::string describe() const override { return "cmodel through the board driver"; }

private:
  cmodel::Device dev_;
};

uint64_t monotonicMicros(void *) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000u + uint64_t(ts.tv_nsec) / 1000u;
}

// A physical range of the device file, mapped page-aligned.
struct Mapping {
  void *base = MAP_FAILED;
  size_t length = 0;
  uint8_t *at = nullptr; // the requested offset inside the mapping

  bool map(int fd, uint64_t offset, uint64_t size) {
    uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
    uint64_t start = offset / page * page;
    length = size_t(offset - start + size);
    base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(start));
    if (base == MAP_FAILED)
      return false;
    at = static_cast<uint8_t *>(base) + (offset - start);
    return true;
  }
  ~Mapping() {
    if (base != MAP_FAILED)
      munmap(base, length);
  }
};

class BoardTarget : public Target {
public:
  ~BoardTarget() override {
    if (fd_ >= 0)
      close(fd_);
  }
  bool open(const std::map<std::string, std::string> &conf, std::string *error) {
    auto number = [&](const char *key, uint64_t *out) {
      auto it = conf.find(key);
      if (it == conf.end())
        return false;
      *out = std::strtoull(it->second.c_str(), nullptr, 0);
      return true;
    };
    uint64_t regs, ddr, ddr_size, ddr_device;
    auto dev = conf.find("device");
    if (dev == conf.end() || !number("regs", &regs) || !number("ddr", &ddr) ||
        !number("ddr_size", &ddr_size)) {
      *error = "board file needs device, regs, ddr and ddr_size";
      return false;
    }
    if (!number("ddr_device", &ddr_device))
      ddr_device = ddr;
    describe_ = "board " + dev->second;
    fd_ = ::open(dev->second.c_str(), O_RDWR | O_SYNC);
    if (fd_ < 0 || !regs_.map(fd_, regs, KILN_REG_SPACE_BYTES) || !ddr_.map(fd_, ddr, ddr_size)) {
      *error = "cannot map " + dev->second;
      return false;
    }
    kiln_board_io io;
    kiln_board_mmio_io(reinterpret_cast<volatile uint32_t *>(regs_.at), ddr_.at, ddr_device,
                       ddr_size, monotonicMicros, nullptr, &io);
    kiln_status st = kiln_board_init(&board_, &io, &hal_);
    if (st != KILN_OK) {
      *error = statusText("kiln_board_init", st);
      return false;
    }
    return true;
  }
  std::string describe() const override { return describe_; }

private:
  int fd_ = -1;
  Mapping regs_, ddr_;
  std::string describe_;
};

} // namespace

std::unique_ptr<Target> makeCmodelTarget(uint64_t ddr_bytes, std::string *error) {
  auto target = std::make_unique<CmodelTarget>(ddr_bytes);
  if (kiln_status st = target->init(); st != KILN_OK) {
    *error = statusText("kiln_board_init on the cmodel", st);
    return nullptr;
  }
  return target;
}

std::unique_ptr<Target> makeBoardTarget(const std::string &path, std::string *error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read board file " + path;
    return nullptr;
  }
  std::map<std::string, std::string> conf;
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    size_t eq = line.find('=');
    if (eq == std::string::npos)
      continue;
    std::string key, value;
    std::istringstream(line.substr(0, eq)) >> key;
    std::istringstream(line.substr(eq + 1)) >> value;
    conf[key] = value;
  }
  auto target = std::make_unique<BoardTarget>();
  if (!target->open(conf, error))
    return nullptr;
  return target;
}

std::unique_ptr<Target> makeTarget(uint64_t ddr_bytes, std::string *error) {
  const char *board = std::getenv("KILN_SMOKE_BOARD");
  if (board && *board)
    return makeBoardTarget(board, error);
  return makeCmodelTarget(ddr_bytes, error);
}

} // namespace kiln::smoke
