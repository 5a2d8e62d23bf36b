// What the gloo backend's C++ files share: the communicator's Gloo state.
#pragma once

#include <gloo/algorithm.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/device.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "backend/gloo/gloo_capi.h"

struct coll__gloo {
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
  uint32_t tag = 0; // one per collective: every rank counts the same calls
  bool check = true; // compare every collective's arguments first (COLL_GLOO_CHECK)
  std::vector<char> scratch; // reduce's non-root output, alltoall/reducescatter copies
  // The pair-buffer allreduce algorithms are set up per buffer: keep the last
  // one so that repeated calls on the same buffer (a benchmark) reuse it.
  struct {
    std::unique_ptr<gloo::Algorithm> algo;
    int kind = -1, which = -1, dt = -1, op = -1;
    void* ptr = nullptr;
    size_t count = 0;
  } cached;
};

namespace collgloo {

// Tags of collbench's own Gloo calls, apart from the collectives' counter.
constexpr uint32_t kInitTag = 0xfffffff0u;
constexpr uint32_t kCheckBit = 0x80000000u;

// Ranks called a collective with different arguments (what() names them).
struct Mismatch : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::chrono::milliseconds to_ms(double seconds);
char* scratch(coll__gloo* g, size_t bytes);
// Runs c; throws what Gloo throws. The world size is at least 2.
void run_collective(coll__gloo* g, const coll__gloo_call* c);

} // namespace collgloo
