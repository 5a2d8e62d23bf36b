// The gloo backend's life cycle and its C entry points: every exception Gloo
// throws stops here and becomes a coll_status with Gloo's own message.
#include <gloo/alltoall.h>
#include <gloo/common/error.h>
#include <gloo/common/logging.h>
#include <gloo/transport/tcp/device.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "backend/gloo/gloo_impl.h"
#include "backend/gloo/gloo_store.h"

namespace collgloo {

std::chrono::milliseconds to_ms(double seconds) {
  // Gloo rejects a zero timeout; a spent deadline still gets a millisecond.
  double ms = std::ceil(seconds * 1e3);
  if (!(ms >= 1)) ms = 1;
  if (ms > 1e12) ms = 1e12;
  return std::chrono::milliseconds(static_cast<long long>(ms));
}

char* scratch(coll__gloo* g, size_t bytes) {
  if (g->scratch.size() < bytes) g->scratch.resize(bytes);
  return g->scratch.data();
}

} // namespace collgloo

static void say(coll__err* err, const std::string& msg) {
  coll__err_set(err, 0, "%s", msg.c_str());
}

// Gloo's exceptions: IoException for a closed connection, a timeout or a store
// failure (Gloo does not tell them apart by type, only by text).
static int status_of(const gloo::IoException& e) {
  std::string w = e.what();
  if (w.find("Timed out") != std::string::npos || w.find("timed out") != std::string::npos ||
      w.find("timeout") != std::string::npos)
    return COLL_ETIMEDOUT;
  return COLL_EPEER;
}

extern "C" int coll__gloo_create(coll__store* store, const char* prefix, const char* host, int rank,
                                 int size, double timeout_s, coll__gloo** out, coll__err* err) {
  *out = nullptr;
  try {
    std::unique_ptr<coll__gloo> g(new coll__gloo);
    const char* check = std::getenv("COLL_GLOO_CHECK"); // 0: Gloo alone, as torch runs it
    g->check = !(check && std::strcmp(check, "0") == 0);
    gloo::transport::tcp::attr attr;
    attr.hostname = host && *host ? host : "127.0.0.1";
    g->device = gloo::transport::tcp::CreateDevice(attr);
    g->context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    g->context->setTimeout(collgloo::to_ms(timeout_s));
    collgloo::StoreAdapter adapter(store, prefix ? prefix : "");
    g->context->connectFullMesh(adapter, g->device);
    // One byte to and from every rank: a pair's accepting side may finish after
    // connectFullMesh returns, and gloo_peers.c must see every socket.
    std::vector<char> ping((size_t)size), pong((size_t)size);
    gloo::AlltoallOptions opts(g->context);
    opts.setInput(ping.data(), ping.size());
    opts.setOutput(pong.data(), pong.size());
    opts.setTag(collgloo::kInitTag);
    opts.setTimeout(collgloo::to_ms(timeout_s));
    gloo::alltoall(opts);
    *out = g.release();
    return COLL_OK;
  } catch (const gloo::IoException& e) {
    say(err, std::string("gloo: connecting the ranks failed: ") + e.what());
    return status_of(e);
  } catch (const std::bad_alloc&) {
    say(err, "gloo: out of memory while connecting the ranks");
    return COLL_ENOMEM;
  } catch (const std::exception& e) {
    say(err, std::string("gloo: connecting the ranks failed: ") + e.what());
    return COLL_EPEER;
  }
}

extern "C" int coll__gloo_run(coll__gloo* g, const coll__gloo_call* c, coll__err* err) {
  try {
    collgloo::run_collective(g, c);
    return COLL_OK;
  } catch (const gloo::IoException& e) {
    say(err, std::string("gloo: ") + e.what());
    return status_of(e);
  } catch (const collgloo::Mismatch& e) {
    say(err, e.what());
    return COLL_EMISMATCH;
  } catch (const gloo::EnforceNotMet& e) {
    say(err, std::string("gloo refused the call: ") + e.what());
    return COLL_EINVAL;
  } catch (const std::bad_alloc&) {
    say(err, "gloo: out of memory");
    return COLL_ENOMEM;
  } catch (const std::exception& e) {
    say(err, std::string("gloo: ") + e.what());
    return COLL_EPEER;
  }
}

extern "C" int coll__gloo_has_dtype(coll_dtype dt) {
  return dt != COLL_BFLOAT16 && dt < COLL_DTYPE_COUNT;
}

extern "C" void coll__gloo_destroy(coll__gloo* g) {
  try {
    delete g;
  } catch (...) {
    // a destructor that throws on a broken connection must not end the process
  }
}
