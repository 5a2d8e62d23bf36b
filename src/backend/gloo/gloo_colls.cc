// Each collbench collective on Gloo's own: gloo::allreduce/allgather/broadcast/
// reduce/alltoall/barrier (unbound buffers), ReduceScatterHalvingDoubling and
// the pair-buffer allreduce algorithms (ring_chunked, halving_doubling), and
// unbound-buffer send/recv. No conversion: every dtype maps to a Gloo type
// (bfloat16, which Gloo lacks, only moves: the C side refuses its reductions).
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/logging.h>
#include <gloo/math.h>
#include <gloo/reduce.h>
#include <gloo/reduce_scatter.h>
#include <gloo/types.h>

#include <atomic>
#include <climits>
#include <cstring>
#include <string>
#include <thread>

#include "backend/gloo/gloo_impl.h"

extern "C" {
#include "core/reduce.h"
}

namespace collgloo {
namespace {

// Slot of every send/recv: p2p calls are not collective, so they cannot take
// a tag from the collective counter; per-pair order keeps them matched.
constexpr uint32_t kP2PTag = 0x636f;

using Fn = void (*)(void*, const void*, const void*, size_t);

template <typename T>
Fn reduce_fn(coll_op op) {
  switch (op) {
    case COLL_PROD: return static_cast<Fn>(&gloo::product<T>);
    case COLL_MIN: return static_cast<Fn>(&gloo::min<T>);
    case COLL_MAX: return static_cast<Fn>(&gloo::max<T>);
    default: return static_cast<Fn>(&gloo::sum<T>); // sum; avg is summed
  }
}

template <typename T>
const gloo::ReductionFunction<T>* reduction(coll_op op) {
  switch (op) {
    case COLL_PROD: return gloo::ReductionFunction<T>::product;
    case COLL_MIN: return gloo::ReductionFunction<T>::min;
    case COLL_MAX: return gloo::ReductionFunction<T>::max;
    default: return gloo::ReductionFunction<T>::sum;
  }
}

// float16 arithmetic is libcoll's (computed in float, rounded to nearest even
// once, as torch's c10::Half is): Debian's Gloo (git 2022-05-18) float16
// operator= compares through operator==(int) on the raw bits and skips stores
// whose old value happens to match, so gloo::sum<float16> loses contributions
// (tests/ranks saw 4 + -2 + 1 + 4 come out as -1 on 4 ranks).
template <>
Fn reduce_fn<gloo::float16>(coll_op op) {
  return coll__reduce_kernel(COLL_FLOAT16, op);
}

template <coll_op O>
void f16_into(gloo::float16* x, const gloo::float16* y, size_t n) {
  coll__reduce_kernel(COLL_FLOAT16, O)(x, x, y, n);
}

template <>
const gloo::ReductionFunction<gloo::float16>* reduction<gloo::float16>(coll_op op) {
  using R = gloo::ReductionFunction<gloo::float16>;
  static const R sum(gloo::SUM, &f16_into<COLL_SUM>), prod(gloo::PRODUCT, &f16_into<COLL_PROD>),
      min(gloo::MIN, &f16_into<COLL_MIN>), max(gloo::MAX, &f16_into<COLL_MAX>);
  switch (op) {
    case COLL_PROD: return &prod;
    case COLL_MIN: return &min;
    case COLL_MAX: return &max;
    default: return &sum;
  }
}

int to_int(size_t n, const char* what) {
  // Gloo's pair-buffer algorithms count elements in int.
  GLOO_ENFORCE(n <= (size_t)INT_MAX, what, " of more than ", INT_MAX,
               " elements: Gloo's algorithm counts in int");
  return static_cast<int>(n);
}

// The pair-buffer algorithm for (kind, which) on ptr, built once per buffer.
template <typename T, typename Make>
gloo::Algorithm* cached(coll__gloo* g, const coll__gloo_call* c, int which, T* ptr, Make make) {
  auto& k = g->cached;
  if (!k.algo || k.kind != c->kind || k.which != which || k.dt != c->dt || k.op != c->op ||
      k.ptr != ptr || k.count != c->count) {
    k.algo.reset();
    k.algo = make();
    k.kind = c->kind;
    k.which = which;
    k.dt = c->dt;
    k.op = c->op;
    k.ptr = ptr;
    k.count = c->count;
  }
  return k.algo.get();
}

template <typename T>
void allreduce(coll__gloo* g, const coll__gloo_call* c) {
  T* out = static_cast<T*>(c->recvbuf);
  const size_t bytes = c->count * sizeof(T);
  if (c->algo == COLL_GLOO_RING_CHUNKED || c->algo == COLL_GLOO_HALVING_DOUBLING) {
    // these algorithms run in place
    if (c->sendbuf != c->recvbuf) std::memcpy(static_cast<void*>(out), c->sendbuf, bytes);
    int n = to_int(c->count, "allreduce");
    std::vector<T*> ptrs{out};
    auto* a = cached(g, c, c->algo, out, [&]() -> std::unique_ptr<gloo::Algorithm> {
      if (c->algo == COLL_GLOO_RING_CHUNKED)
        return std::unique_ptr<gloo::Algorithm>(
            new gloo::AllreduceRingChunked<T>(g->context, ptrs, n, reduction<T>(c->op)));
      return std::unique_ptr<gloo::Algorithm>(
          new gloo::AllreduceHalvingDoubling<T>(g->context, ptrs, n, reduction<T>(c->op)));
    });
    a->run();
    return;
  }
  gloo::AllreduceOptions opts(g->context);
  if (c->sendbuf != c->recvbuf)
    opts.setInput(const_cast<T*>(static_cast<const T*>(c->sendbuf)), c->count);
  opts.setOutput(out, c->count);
  if (c->algo == COLL_GLOO_RING) opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
  if (c->algo == COLL_GLOO_BCUBE) opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::BCUBE);
  opts.setReduceFunction(reduce_fn<T>(c->op));
  opts.setTag(g->tag);
  opts.setTimeout(to_ms(c->timeout_s));
  gloo::allreduce(opts);
}

template <typename T>
void allgather(coll__gloo* g, const coll__gloo_call* c) {
  T* out = static_cast<T*>(c->recvbuf);
  const int rank = g->context->rank, size = g->context->size;
  gloo::AllgatherOptions opts(g->context);
  // in place: our block already sits at out + rank*count; Gloo then skips the copy
  if (c->sendbuf != out + (size_t)rank * c->count)
    opts.setInput(const_cast<T*>(static_cast<const T*>(c->sendbuf)), c->count);
  opts.setOutput(out, c->count * (size_t)size);
  opts.setTag(g->tag);
  opts.setTimeout(to_ms(c->timeout_s));
  gloo::allgather(opts);
}

template <typename T>
void reducescatter(coll__gloo* g, const coll__gloo_call* c) {
  const int rank = g->context->rank, size = g->context->size;
  const size_t total = c->count * (size_t)size, blk = c->count * sizeof(T);
  int n = to_int(total, "reduce-scatter");
  // Gloo reduces the whole buffer in place and leaves our block at its start:
  // work on a copy so that the caller's input (and other blocks) stay as given.
  T* work = reinterpret_cast<T*>(scratch(g, total * sizeof(T)));
  std::memcpy(static_cast<void*>(work), c->sendbuf, total * sizeof(T));
  std::vector<T*> ptrs{work};
  std::vector<int> counts((size_t)size, to_int(c->count, "reduce-scatter"));
  // Built per call: one object run twice in a row gave wrong blocks on 3 ranks
  // (non-power-of-two worlds), as if the next run's data met the last one's.
  gloo::ReduceScatterHalvingDoubling<T> a(g->context, ptrs, n, counts, reduction<T>(c->op));
  a.run();
  (void)rank;
  std::memmove(c->recvbuf, static_cast<const void*>(work), blk);
}

template <typename T>
void broadcast(coll__gloo* g, const coll__gloo_call* c) {
  gloo::BroadcastOptions opts(g->context);
  opts.setRoot(c->root);
  if (g->context->rank == c->root && c->sendbuf != c->recvbuf)
    opts.setInput(const_cast<T*>(static_cast<const T*>(c->sendbuf)), c->count);
  opts.setOutput(static_cast<T*>(c->recvbuf), c->count);
  opts.setTag(g->tag);
  opts.setTimeout(to_ms(c->timeout_s));
  gloo::broadcast(opts);
}

template <typename T>
void reduce(coll__gloo* g, const coll__gloo_call* c) {
  const bool root = g->context->rank == c->root;
  gloo::ReduceOptions opts(g->context);
  opts.setRoot(c->root);
  // Gloo writes partial results into every rank's output: non-roots get scratch.
  T* out = root ? static_cast<T*>(c->recvbuf)
                : reinterpret_cast<T*>(scratch(g, c->count * sizeof(T)));
  if (c->sendbuf != out) opts.setInput(const_cast<T*>(static_cast<const T*>(c->sendbuf)), c->count);
  opts.setOutput(out, c->count);
  opts.setReduceFunction(reduce_fn<T>(c->op));
  opts.setTag(g->tag);
  opts.setTimeout(to_ms(c->timeout_s));
  gloo::reduce(opts);
}

template <typename T>
void alltoall(coll__gloo* g, const coll__gloo_call* c) {
  const size_t total = c->count * (size_t)g->context->size;
  const T* in = static_cast<const T*>(c->sendbuf);
  if (c->sendbuf == c->recvbuf) { // Gloo would overwrite blocks it has yet to send
    T* copy = reinterpret_cast<T*>(scratch(g, total * sizeof(T)));
    std::memcpy(static_cast<void*>(copy), in, total * sizeof(T));
    in = copy;
  }
  gloo::AlltoallOptions opts(g->context);
  opts.setInput(const_cast<T*>(in), total);
  opts.setOutput(static_cast<T*>(c->recvbuf), total);
  opts.setTag(g->tag);
  opts.setTimeout(to_ms(c->timeout_s));
  gloo::alltoall(opts);
}

// Every rank but this one.
std::vector<int> peers_of(const coll__gloo* g) {
  std::vector<int> peers;
  for (int r = 0; r < g->context->size; r++)
    if (r != g->context->rank) peers.push_back(r);
  return peers;
}

// A receive from any rank: Gloo ties it to no pair, so a peer's death would
// not end it before the timeout (a receive from one peer fails when its pair
// closes). A watcher looks at the peers' sockets every 50 ms and aborts the
// wait once one has closed: any of them might have been the sender.
void wait_any(gloo::transport::UnboundBuffer* rb, const coll__gloo_call* c,
              std::chrono::milliseconds timeout) {
  std::atomic<bool> done{false}, gone{false};
  std::thread watcher([&] {
    for (; !done; std::this_thread::sleep_for(std::chrono::milliseconds(50)))
      if (c->any_gone(c->any_arg)) {
        gone = true;
        rb->abortWaitRecv();
        return;
      }
  });
  bool received;
  {
    struct Stop { // the watcher ends with the wait, returned or thrown
      std::atomic<bool>& done;
      std::thread& watcher;
      ~Stop() {
        done = true;
        watcher.join();
      }
    } stop{done, watcher};
    received = rb->waitRecv(c->recv_from, timeout);
  }
  if (!received && gone)
    throw gloo::IoException(
        "a peer's connection closed while this rank waited for a message "
        "from any rank");
}

template <typename T>
void p2p(coll__gloo* g, const coll__gloo_call* c) {
  auto timeout = to_ms(c->timeout_s);
  std::unique_ptr<gloo::transport::UnboundBuffer> sb, rb;
  if (c->peer_send >= 0 && c->count) {
    sb = g->context->createUnboundBuffer(const_cast<void*>(c->sendbuf), c->count * sizeof(T));
    sb->send(c->peer_send, kP2PTag);
  }
  if ((c->recv_any || c->peer_recv >= 0) && c->recvcount) {
    rb = g->context->createUnboundBuffer(c->recvbuf, c->recvcount * sizeof(T));
    if (c->recv_any)
      rb->recv(peers_of(g), kP2PTag); // Gloo's own receive from any of them
    else
      rb->recv(c->peer_recv, kP2PTag);
  }
  if (rb && c->recv_any)
    wait_any(rb.get(), c, timeout);
  else if (rb)
    rb->waitRecv(timeout);
  if (sb) sb->waitSend(timeout);
}

template <typename T>
void dispatch(coll__gloo* g, const coll__gloo_call* c) {
  switch (c->kind) {
    case COLL_GLOO_ALLREDUCE: return allreduce<T>(g, c);
    case COLL_GLOO_ALLGATHER: return allgather<T>(g, c);
    case COLL_GLOO_REDUCESCATTER: return reducescatter<T>(g, c);
    case COLL_GLOO_BROADCAST: return broadcast<T>(g, c);
    case COLL_GLOO_REDUCE: return reduce<T>(g, c);
    case COLL_GLOO_ALLTOALL: return alltoall<T>(g, c);
    default: return p2p<T>(g, c);
  }
}

// The arguments that must agree across ranks, as 6 words.
void call_words(const coll__gloo_call* c, uint64_t* w) {
  const bool reduces = c->kind == COLL_GLOO_ALLREDUCE || c->kind == COLL_GLOO_REDUCESCATTER ||
                       c->kind == COLL_GLOO_REDUCE;
  const bool rooted = c->kind == COLL_GLOO_BROADCAST || c->kind == COLL_GLOO_REDUCE;
  w[0] = (uint64_t)c->kind;
  w[1] = (uint64_t)c->count;
  w[2] = (uint64_t)c->dt;
  w[3] = reduces ? (uint64_t)c->op : 0;
  w[4] = rooted ? (uint64_t)c->root : 0;
  w[5] = c->kind == COLL_GLOO_ALLREDUCE ? (uint64_t)c->algo : 0;
}

std::string describe(const uint64_t* w) {
  static const char* const kinds[] = {"allreduce", "allgather", "reducescatter", "broadcast",
                                      "reduce",    "alltoall",  "barrier"};
  std::string s = w[0] < 7 ? kinds[w[0]] : "?";
  s += "(count=" + std::to_string(w[1]) + ", " + coll_dtype_name((coll_dtype)w[2]);
  if (w[0] == COLL_GLOO_ALLREDUCE || w[0] == COLL_GLOO_REDUCESCATTER || w[0] == COLL_GLOO_REDUCE)
    s += std::string(", ") + coll_op_name((coll_op)w[3]);
  if (w[0] == COLL_GLOO_BROADCAST || w[0] == COLL_GLOO_REDUCE)
    s += ", root " + std::to_string(w[4]);
  if (w[0] == COLL_GLOO_ALLREDUCE && w[5]) s += ", algorithm " + std::to_string(w[5]);
  return s + ")";
}

// Gloo trusts every rank to make the same call: a peer sending more than this
// rank posted ends the process from Gloo's event thread (EnforceNotMet, then
// abort). So the arguments are compared first, in one small allgather.
void check_same_call(coll__gloo* g, const coll__gloo_call* c) {
  const int rank = g->context->rank, size = g->context->size;
  std::vector<uint64_t> all((size_t)size * 6);
  call_words(c, &all[(size_t)rank * 6]);
  gloo::AllgatherOptions opts(g->context);
  opts.setOutput(all.data(), all.size());
  opts.setTag(g->tag | kCheckBit);
  opts.setTimeout(to_ms(c->timeout_s));
  gloo::allgather(opts);
  const uint64_t* mine = &all[(size_t)rank * 6];
  for (int r = 0; r < size; r++)
    if (std::memcmp(&all[(size_t)r * 6], mine, 6 * sizeof(uint64_t)) != 0)
      throw Mismatch("rank " + std::to_string(r) + " called " + describe(&all[(size_t)r * 6]) +
                     " where rank " + std::to_string(rank) + " called " + describe(mine));
}

} // namespace

void run_collective(coll__gloo* g, const coll__gloo_call* c) {
  const bool p2p_call = c->kind == COLL_GLOO_SEND || c->kind == COLL_GLOO_RECV ||
                        c->kind == COLL_GLOO_SENDRECV;
  if (!p2p_call) g->tag = (g->tag + 1) & ~kCheckBit; // every rank makes the same calls
  if (!p2p_call && c->kind != COLL_GLOO_BARRIER && g->check) check_same_call(g, c);
  if (c->kind == COLL_GLOO_BARRIER) {
    gloo::BarrierOptions opts(g->context);
    opts.setTag(g->tag);
    opts.setTimeout(to_ms(c->timeout_s));
    gloo::barrier(opts);
    return;
  }
  if (!p2p_call && c->count == 0) return; // Gloo refuses empty buffers; nothing moves
  switch (c->dt) {
    case COLL_FLOAT32: return dispatch<float>(g, c);
    case COLL_FLOAT64: return dispatch<double>(g, c);
    case COLL_FLOAT16: return dispatch<gloo::float16>(g, c);
    case COLL_INT8: return dispatch<int8_t>(g, c);
    case COLL_UINT8: return dispatch<uint8_t>(g, c);
    case COLL_INT32: return dispatch<int32_t>(g, c);
    case COLL_INT64: return dispatch<int64_t>(g, c);
    default: GLOO_ENFORCE(false, "Gloo has no type for dtype ", coll_dtype_name(c->dt));
  }
}

} // namespace collgloo
