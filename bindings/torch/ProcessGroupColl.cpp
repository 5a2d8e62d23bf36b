// collbench_torch: a torch.distributed process-group backend named "coll",
// one thin layer over libcoll's public API (include/coll.h). See docs/TORCH.md.
//
// Builds against torch 1.13 (Debian 12) and torch 2.x (Debian 13): the one
// version switch is the block below.
#include <torch/extension.h>
#include <torch/version.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <pybind11/chrono.h>
#include <pybind11/eval.h>
#include <torch/csrc/Dtype.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

extern "C" {
#include "coll.h"
#include "coll_tool.h"
}

// torch 2 moved a backend's collectives from c10d::ProcessGroup (now a
// dispatcher over per-device backends) to c10d::Backend; torch 2.3 made
// Allocator::allocate non-const and added copy_data.
#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#define COLL_TORCH2 1
using CollBase = c10d::Backend;
#else
#define COLL_TORCH2 0
using CollBase = c10d::ProcessGroup;
#endif
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define COLL_ALLOCATE_CONST
#define COLL_ALLOCATOR_COPY_DATA 1
#else
#define COLL_ALLOCATE_CONST const
#define COLL_ALLOCATOR_COPY_DATA 0
#endif

namespace collbench {

using WorkPtr = c10::intrusive_ptr<c10d::Work>;

class ProcessGroupColl;

// use_coll_allocator's default: below it, coll_alloc's page rounding and a
// registry entry cost more than a collective on the block could save.
static constexpr size_t kDefaultMinBytes = 64 * 1024;

// A whole decimal byte count (an environment variable's value) into *out.
static bool byte_count(const char* s, size_t* out) {
    char* end = nullptr;
    if (*s < '0' || *s > '9') return false; // strtoull takes "-1" as ULLONG_MAX
    errno = 0;
    unsigned long long x = std::strtoull(s, &end, 10);
    if (errno || !end || *end != '\0') return false;
    *out = (size_t)x;
    return true;
}

// Set in a fork()ed child (DataLoader workers, os.fork): the child's copy of
// a communicator has no threads, and its shared heap is the parent's memory,
// so it must neither hand out nor free coll memory nor destroy the comm.
static std::atomic<bool> g_forked_child{false};

// Every live block of coll_alloc memory (pg.empty() and the allocator), with
// the group it came from: the block holds the group, so coll_free never runs
// on a destroyed communicator. Keyed by address (a block's DataPtr context is
// its data) so that c10's raw interface, which frees by pointer alone (oneDNN
// allocates its scratch memory through it), can give a block back. Never
// destroyed: tensors may be freed during static destruction.
//
// While the allocator is on, freed blocks of its group are kept for reuse by
// byte size (as torch's CUDA caching allocator does), up to cache_cap bytes:
// a training step frees and allocates the same gradient-sized tensors every
// step, and coll_free gives pages back to the system (shm: out of every
// peer's page tables), so each step would fault them all in again.
struct BlockTable {
    struct Block {
        c10::intrusive_ptr<ProcessGroupColl> group;
        size_t bytes;
    };
    std::mutex mu;
    std::unordered_map<void*, Block> live;
    std::unordered_multimap<size_t, std::pair<void*, Block>> cached; // by bytes
    const ProcessGroupColl* caching_for = nullptr; // the allocator's group, or none
    size_t cached_bytes = 0, cache_cap = 0;
};
static BlockTable& blocks() {
    static BlockTable* t = new BlockTable();
    return *t;
}
static bool release_block(void* p);
static void allocator_from_env(const c10::intrusive_ptr<ProcessGroupColl>& pg);
// The deleter of every coll DataPtr; is_coll_memory() looks for it.
static void coll_block_delete(void* p) { release_block(p); }

static coll_dtype to_coll_dtype(const at::Tensor& t, const char* what) {
    switch (t.scalar_type()) {
    case at::kFloat: return COLL_FLOAT32;
    case at::kDouble: return COLL_FLOAT64;
    case at::kHalf: return COLL_FLOAT16;
    case at::kBFloat16: return COLL_BFLOAT16;
    case at::kChar: return COLL_INT8;
    case at::kByte: return COLL_UINT8;
    case at::kInt: return COLL_INT32;
    case at::kLong: return COLL_INT64;
    default:
        TORCH_CHECK(false, "coll: ", what, ": dtype ", t.scalar_type(),
                    " is not supported (libcoll has float32, float64, float16, bfloat16, "
                    "int8, uint8, int32, int64)");
    }
    return COLL_FLOAT32; // unreachable
}

// The dtype of a tensor that is only moved, not reduced: bool travels as uint8.
static coll_dtype move_dtype(const at::Tensor& t, const char* what) {
    return t.scalar_type() == at::kBool ? COLL_UINT8 : to_coll_dtype(t, what);
}

static coll_op to_coll_op(const c10d::ReduceOp& op, coll_dtype dt, const char* what) {
    coll_op out;
    switch (op.op_) {
    case c10d::ReduceOp::SUM: out = COLL_SUM; break;
    case c10d::ReduceOp::PRODUCT: out = COLL_PROD; break;
    case c10d::ReduceOp::MIN: out = COLL_MIN; break;
    case c10d::ReduceOp::MAX: out = COLL_MAX; break;
    case c10d::ReduceOp::AVG: out = COLL_AVG; break;
    default:
        TORCH_CHECK(false, "coll: ", what, ": reduce op ", static_cast<int>(op.op_),
                    " is not supported (sum, product, min, max, avg)");
    }
    TORCH_CHECK(coll_op_valid(dt, out) == COLL_OK, "coll: ", what, ": op ", coll_op_name(out),
                " is not defined for dtype ", coll_dtype_name(dt), " (avg is floating-point only)");
    return out;
}

static void check_on_cpu(const at::Tensor& t, const char* what) {
    TORCH_CHECK(t.device().is_cpu(), "coll: ", what, ": only CPU tensors are supported, got a ",
                t.device(), " tensor (move it to CPU, or use the nccl backend)");
}

static void check_cpu(const at::Tensor& t, const char* what) {
    check_on_cpu(t, what);
    TORCH_CHECK(!t.is_sparse(), "coll: ", what, ": sparse tensors are not supported");
}

static void check_single(const std::vector<at::Tensor>& v, const char* what) {
    TORCH_CHECK(v.size() == 1, "coll: ", what, ": expects exactly one tensor per call, got ",
                v.size());
    check_cpu(v[0], what);
}

// A contiguous view of t, and whether it must be copied back afterwards.
struct Staged {
    at::Tensor user;
    at::Tensor buf;
    bool copy_back;
};

static Staged stage(const at::Tensor& t) {
    if (t.is_contiguous()) return {t, t, false};
    return {t, t.contiguous(), true};
}

// A profiler name that lives as long as the process (RecordFunction keeps the pointer).
static const char* profiling_title(const char* what) {
    static std::mutex mu;
    static std::set<std::string>* titles = new std::set<std::string>();
    std::lock_guard<std::mutex> g(mu);
    return titles->insert(std::string("coll:") + what).first->c_str();
}

// libcoll's failure of a call, as the RuntimeError's text: its one-line
// message, the failed rank, the status.
static std::string coll_failure(coll_comm* comm, const std::string& what, int rc) {
    const char* em = comm ? coll_comm_errmsg(comm) : "";
    std::string why = (em && *em) ? em : coll_strerror(rc);
    // " Timed out ", as torch's own backends say it (torch's tests look for it)
    if (rc == COLL_ETIMEDOUT) why = "Timed out (" + why + ")";
    std::string msg = "coll: " + what + " failed: " + why;
    int failed = comm ? coll_comm_failed_rank(comm) : -1;
    if (failed >= 0) msg += " (failed rank " + std::to_string(failed) + ")";
    return msg + " [" + coll_status_name(rc) + "]";
}

class P2PEngine;

class ProcessGroupColl;
// The group whose completion thread this is (complete_loop), else null.
static thread_local const ProcessGroupColl* t_completer_of = nullptr;

// One operation. A blocking one is complete when made; a libcoll request, or
// a Work standing for earlier ones (deps: allreduce_coalesced), is completed
// by its group's completion thread, the only thread that waits on requests,
// so that wait(timeout), exception() and is_success() never block behind it.
// A send or recv (p2p) is completed by the group's P2PEngine when it runs.
class WorkColl : public c10d::Work {
  public:
    WorkColl(c10d::OpType type, std::string what, coll_comm* comm, coll_request* req, int rc,
             std::function<void()> finish, std::vector<at::Tensor> outputs,
             std::chrono::milliseconds timeout, std::vector<c10::intrusive_ptr<WorkColl>> deps = {},
             std::shared_ptr<P2PEngine> p2p = nullptr, int source = -1)
        : c10d::Work(-1, type, profiling_title(what.c_str()), outputs),
          what_(std::move(what)),
          comm_(comm),
          req_(req),
          finish_(std::move(finish)),
          outputs_(std::move(outputs)),
          deps_(std::move(deps)),
          timeout_(timeout),
          p2p_(std::move(p2p)),
          source_(source),
          fut_(c10::make_intrusive<c10::ivalue::Future>(
              c10::ListType::create(c10::TensorType::get()))) {
        if (!req_ && deps_.empty() && !p2p_) complete(rc);
    }
    ~WorkColl() override {
        if (req_) coll_wait(req_); // buffers must outlive the request
    }

    bool isCompleted() override {
        std::lock_guard<std::mutex> g(lk_);
        return done_;
    }
    bool isSuccess() const override {
        std::lock_guard<std::mutex> g(lk_);
        return done_ && !err_;
    }
    std::exception_ptr exception() const override {
        std::lock_guard<std::mutex> g(lk_);
        return err_;
    }
    std::vector<at::Tensor> result() override { return outputs_; }
    void synchronize() override {}
    int sourceRank() const override {
        std::lock_guard<std::mutex> g(lk_);
        TORCH_CHECK(source_ >= 0, "coll: ", what_,
                    ": sourceRank() is a receive's only (from any source: once it completed)");
        return source_;
    }

    // timeout: Work.wait's, else the operation's (opts.timeout), else none.
    // Running out raises; the operation stays in flight (as with gloo, the
    // group should not be used again).
    bool wait(std::chrono::milliseconds timeout) override {
        run_p2p();
        complete_here();
        std::exception_ptr e;
        {
            std::unique_lock<std::mutex> g(lk_);
            auto t = timeout != ::kNoTimeout ? timeout : timeout_;
            if (t.count() > 0) {
                TORCH_CHECK(done_cv_.wait_for(g, t, [this]() { return done_; }), "coll: ", what_,
                            ": timed out after ", t.count(),
                            " ms waiting for it (it is still in "
                            "flight; do not use the group again)");
            } else {
                done_cv_.wait(g, [this]() { return done_; });
            }
            e = err_;
        }
        settle_future();
        if (e) std::rethrow_exception(e);
        return true;
    }

    // DDP's reducer takes a Future of every allreduce. It completes when the
    // request does: the group's completion thread waits for the requests in
    // order (they finish in order) and settles their futures.
    // COLL_TORCH_SYNC_FUTURE=1: wait first (no overlap; for comparisons, and for
    // hosts where the progress thread and the backward pass share too few cores).
    c10::intrusive_ptr<c10::ivalue::Future> getFuture() override {
        complete_here();
        static const bool sync = [] {
            const char* v = std::getenv("COLL_TORCH_SYNC_FUTURE");
            return v && std::strcmp(v, "1") == 0;
        }();
        if (sync) {
            try {
                wait(::kNoTimeout);
            } catch (...) {
                // the future carries the error
            }
        }
        return fut_;
    }

    // The completion thread: waits for the request (or takes the first error
    // of the Works this one stands for, which finished before it), completes.
    void complete_request() {
        int rc = COLL_OK;
        if (req_) {
            rc = coll_wait(req_);
            req_ = nullptr;
        }
        std::exception_ptr dep_err;
        for (auto& d : deps_)
            if (!dep_err) dep_err = d->exception();
        deps_.clear();
        {
            std::lock_guard<std::mutex> g(lk_);
            complete_locked(rc);
            if (!err_ && dep_err) err_ = dep_err;
        }
        done_cv_.notify_all();
        settle_future();
    }

    // The P2PEngine ran this send or recv: done, with its error if any, and
    // the rank a receive took its message from (from any source: known now).
    void complete_p2p(std::exception_ptr e, int source) {
        {
            std::lock_guard<std::mutex> g(lk_);
            complete_locked(COLL_OK);
            err_ = e;
            if (source >= 0) source_ = source;
        }
        done_cv_.notify_all();
        settle_future();
    }

    // Marks the future once (outside lk_: its callbacks may run inline).
    void settle_future() {
        bool mark = false;
        {
            std::lock_guard<std::mutex> g(lk_);
            if (done_ && !settled_) mark = settled_ = true;
        }
        if (!mark) return;
        if (err_)
            fut_->setError(err_);
        else
            fut_->markCompleted(c10::IValue(outputs_));
    }

  private:
    void run_p2p();       // after P2PEngine
    void complete_here(); // after ProcessGroupColl
    void complete(int rc) {
        std::lock_guard<std::mutex> g(lk_);
        complete_locked(rc);
    }
    void complete_locked(int rc) {
        done_ = true;
        if (rc != COLL_OK) {
            err_ = std::make_exception_ptr(std::runtime_error(coll_failure(comm_, what_, rc)));
        } else if (finish_) {
            try {
                finish_();
            } catch (...) {
                err_ = std::current_exception();
            }
        }
        finish_ = nullptr;
        if (recordFunctionEndCallback_) { // the profiler's record of the operation ends
            recordFunctionEndCallback_();
            recordFunctionEndCallback_ = nullptr;
        }
    }

    std::string what_;
    coll_comm* comm_;
    coll_request* req_;
    std::function<void()> finish_;
    std::vector<at::Tensor> outputs_;
    std::vector<c10::intrusive_ptr<WorkColl>> deps_;
    std::chrono::milliseconds timeout_;
    std::shared_ptr<P2PEngine> p2p_;
    int source_;

  public:
    const ProcessGroupColl* owner_ = nullptr; // the group whose queue holds it (enqueue)

  private:
    c10::intrusive_ptr<c10::ivalue::Future> fut_;
    mutable std::mutex lk_;
    std::condition_variable done_cv_;
    bool done_ = false;
    bool settled_ = false;
    std::exception_ptr err_;
};

// send/recv (isend/irecv, batch_isend_irecv): libcoll runs one call at a time
// and its sends and receives block, so a send and a receive posted one after
// the other cannot both be in flight. Instead they are queued here and return
// at once; the group runs every queued one when it next waits for
// point-to-point traffic (Work.wait() of any of them, gather, scatter, uneven
// all_to_all, destruction): the k-th queued send together with the k-th
// queued receive in one coll_sendrecv, so irecv(p) then send(p), a symmetric
// isend + irecv or a ring of them never deadlocks, at any size.
//
// Each message is a header (magic, tag, bytes, dtype) and then its bytes.
// Tags: a receive takes the first message from its peer with its tag; a
// message that arrives for another tag is kept until a receive asks for it.
// A receive from any source (peer -1, recvAnysource) takes the first kept
// message with its tag from any peer, else the next header from whichever
// peer sends first (coll_sendrecv_any, its paired send going out meanwhile),
// then the bytes from that peer; from then on it is a receive from that peer.
class P2PEngine {
  public:
    explicit P2PEngine(int size) : unexpected_((size_t)size) {}

    void attach(coll_comm* comm) { comm_ = comm; }

    void post(bool send, int peer, int64_t tag, Staged st, c10::intrusive_ptr<WorkColl> w) {
        std::lock_guard<std::mutex> g(q_mu_);
        TORCH_CHECK(!closed_, "coll: ", send ? "send" : "recv", ": the group is destroyed");
        pending_.push_back(Op{send, peer, tag, std::move(st), std::move(w), nullptr});
    }

    // Runs every queued send and receive; each Work completes (an error stays in it).
    void run() {
        std::vector<Op> ops;
        {
            std::lock_guard<std::mutex> r(run_mu_);
            {
                std::lock_guard<std::mutex> g(q_mu_);
                for (auto& o : pending_) ops.push_back(std::move(o));
                pending_.clear();
            }
            if (ops.empty()) return;
            run_locked(ops);
        }
        for (auto& o : ops) { // outside run_mu_: a future's callback may post more
            if (!o.err && !o.send && o.st.copy_back) {
                try {
                    o.st.user.copy_(o.st.buf);
                } catch (...) {
                    o.err = std::current_exception();
                }
            }
            o.work->complete_p2p(o.err, o.send ? -1 : o.peer);
        }
    }

    // Before the communicator goes: runs what is queued, then refuses more.
    void close() {
        {
            std::lock_guard<std::mutex> g(q_mu_);
            closed_ = true;
        }
        run();
        std::lock_guard<std::mutex> r(run_mu_);
        comm_ = nullptr;
    }

  private:
    static constexpr int64_t kMagic = 0x636f6c6c70327031; // "collp2p1"
    struct Op {
        bool send;
        int peer;
        int64_t tag;
        Staged st;
        c10::intrusive_ptr<WorkColl> work;
        std::exception_ptr err;
        size_t bytes() const { return st.buf.nbytes(); }
    };
    struct Msg { // arrived for a tag no receive has asked for yet
        int64_t tag, dtype;
        std::vector<char> data;
        uint64_t seq; // order of arrival, across peers
    };

    void run_locked(std::vector<Op>& ops) {
        std::vector<Op*> sends, recvs;
        for (auto& o : ops) (o.send ? sends : recvs).push_back(&o);
        size_t i = 0, j = 0;
        std::exception_ptr fail;
        while (!fail && (i < sends.size() || j < recvs.size())) {
            while (j < recvs.size() && take_kept(*recvs[j])) j++;
            Op* s = i < sends.size() ? sends[i] : nullptr;
            Op* r = j < recvs.size() ? recvs[j] : nullptr;
            if (!s && !r) break;
            try {
                bool got = exchange(s, r);
                if (s) i++;
                if (got) j++;
            } catch (...) {
                fail = std::current_exception();
            }
        }
        for (; i < sends.size(); i++) sends[i]->err = fail;
        for (; j < recvs.size(); j++) recvs[j]->err = fail;
    }

    void check(int rc, const char* what) {
        if (rc != COLL_OK) throw std::runtime_error(coll_failure(comm_, what, rc));
    }

    static std::string mismatch(const Op& r, int64_t bytes, int64_t dtype) {
        return c10::str("coll: recv: rank ", r.peer, " sent ", bytes, " bytes of ",
                        static_cast<at::ScalarType>(dtype), " with tag ", r.tag,
                        " where this rank receives ", r.bytes(), " bytes of ",
                        r.st.buf.scalar_type());
    }

    // Sends s whole to its peer while taking the next message from r's peer;
    // true when that message was r's (else it is kept for a later receive).
    bool exchange(Op* s, Op* r) {
        TORCH_CHECK(comm_, "coll: send/recv: the group is destroyed");
        int64_t ho[4] = {0, 0, 0, 0}, hi[4] = {0, 0, 0, 0};
        if (s)
            ho[0] = kMagic, ho[1] = s->tag, ho[2] = (int64_t)s->bytes(),
            ho[3] = (int64_t)s->st.buf.scalar_type();
        bool any = r && r->peer < 0;
        if (any) // the header says who: r is a receive from that peer from here on
            check(coll_sendrecv_any(comm_, s ? ho : nullptr, s ? 4 : 0, s ? s->peer : -1, hi, 4,
                                    COLL_INT64, &r->peer),
                  "recvAnySource");
        else
            check(coll_sendrecv(comm_, s ? ho : nullptr, s ? 4 : 0, s ? s->peer : -1,
                                r ? hi : nullptr, r ? 4 : 0, r ? r->peer : -1, COLL_INT64),
                  "send/recv");
        TORCH_CHECK(!r || hi[0] == kMagic, "coll: recv: rank ", r ? r->peer : -1,
                    " sent something other than a coll send (a send/recv pair that does not "
                    "match, or a gather/scatter on one side)");
        size_t sn = s ? s->bytes() : 0, rn = r ? (size_t)hi[2] : 0;
        bool mine = r && hi[1] == r->tag;
        bool fits = mine && rn == r->bytes() && hi[3] == (int64_t)r->st.buf.scalar_type();
        std::vector<char> keep(fits ? 0 : rn);
        char* dst = fits ? static_cast<char*>(r->st.buf.data_ptr()) : keep.data();
        if (sn || rn)
            check(coll_sendrecv(comm_, sn ? s->st.buf.data_ptr() : nullptr, sn, sn ? s->peer : -1,
                                rn ? dst : nullptr, rn, rn ? r->peer : -1, COLL_UINT8),
                  "send/recv");
        if (!r) return false;
        if (!mine) {
            unexpected_[(size_t)r->peer].push_back(Msg{hi[1], hi[3], std::move(keep), kept_++});
            if (any) r->peer = -1; // still from any source
            return false;
        }
        if (!fits) r->err = std::make_exception_ptr(std::runtime_error(mismatch(*r, hi[2], hi[3])));
        return true;
    }

    // A kept message for r (the first from its peer with its tag; from any
    // source, the first kept with its tag) into r.
    bool take_kept(Op& r) {
        std::deque<Msg>* q = nullptr;
        std::deque<Msg>::iterator it{};
        int from = -1, lo = r.peer < 0 ? 0 : r.peer;
        int hi = r.peer < 0 ? (int)unexpected_.size() : r.peer + 1;
        for (int p = lo; p < hi; p++) {
            auto& pq = unexpected_[(size_t)p];
            auto m = std::find_if(pq.begin(), pq.end(),
                                  [&](const Msg& k) { return k.tag == r.tag; });
            if (m != pq.end() && (!q || m->seq < it->seq)) q = &pq, it = m, from = p;
        }
        if (!q) return false;
        r.peer = from;
        if (it->data.size() == r.bytes() && it->dtype == (int64_t)r.st.buf.scalar_type())
            std::memcpy(r.st.buf.data_ptr(), it->data.data(), it->data.size());
        else
            r.err = std::make_exception_ptr(
                std::runtime_error(mismatch(r, (int64_t)it->data.size(), it->dtype)));
        q->erase(it);
        return true;
    }

    std::mutex q_mu_; // pending_, closed_
    std::deque<Op> pending_;
    bool closed_ = false;
    std::mutex run_mu_; // one run at a time: comm_, unexpected_
    coll_comm* comm_ = nullptr;
    std::vector<std::deque<Msg>> unexpected_;
    uint64_t kept_ = 0; // messages kept so far: Msg::seq
};

void WorkColl::run_p2p() {
    if (p2p_) p2p_->run();
}

class ProcessGroupColl : public CollBase {
  public:
    ProcessGroupColl(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                     std::chrono::milliseconds timeout)
        : CollBase(rank, size), store_(store), p2p_(std::make_shared<P2PEngine>(size)) {
        rendezvous(store, timeout);
        p2p_->attach(comm_);
        completer_ = std::thread([this]() { complete_loop(); });
    }
    ~ProcessGroupColl() override {
        if (g_forked_child) {
            // The threads are the parent's and the comm's barrier would wait on
            // the parent's peers: leave both to the child's exit.
            if (completer_.joinable()) completer_.detach();
            return;
        }
        if (completer_.joinable() && completer_.get_id() == std::this_thread::get_id()) {
            // The completion thread dropped the last reference (complete_loop):
            // it cannot join itself; it finishes what is queued and destroys
            // the communicator here, then ends.
            t_destroyed_own_group = true;
            completer_.detach();
            for (auto& w : pending_) w->complete_request();
            pending_.clear();
            p2p_->close();
            coll_comm_destroy(comm_);
            return;
        }
        {
            std::lock_guard<std::mutex> g(qlk_);
            stop_ = true;
        }
        qcv_.notify_all();
        // Python drops the last reference with the GIL held, and the completion
        // thread may be releasing a Work whose tensors need the GIL to free
        // their Python objects: joining with the GIL held deadlocks. The closing
        // barrier in coll_comm_destroy waits for peers, so it runs without it too.
        if (Py_IsInitialized() && PyGILState_Check()) {
            py::gil_scoped_release nogil;
            shut_down();
        } else {
            shut_down();
        }
    }

    const std::string getBackendName() const override { return "coll"; }

    // One number the whole group agrees on, as gloo's: rank 0 draws it and
    // publishes it on torch's store. torch's ProcessGroupWrapper
    // (TORCH_DISTRIBUTED_DEBUG=DETAIL wraps plugins too) sets it when it wraps
    // the group and puts it in every collective's fingerprint.
    void setSequenceNumberForGroup() override {
        std::string key = "coll/seq/" + std::to_string(seq_sets_++);
        if (rank_ == 0) {
            std::random_device rd;
            seq_ = 1 + ((uint64_t)rd() << 16 ^ rd());
            store_->set(key, bytes(std::to_string(seq_)));
        } else {
            seq_ = std::stoull(str(store_->get(key)));
        }
    }
    uint64_t getSequenceNumberForGroup() override { return seq_; } // 0: never set

    // A tensor in this communicator's coll_alloc memory (shm: the shared heap,
    // which peers read directly: no copy through the segment). The tensor
    // keeps the group alive; the memory goes back with coll_free.
    at::Tensor empty(std::vector<int64_t> sizes, at::ScalarType dtype) {
        int64_t n = 1;
        for (auto d : sizes) {
            TORCH_CHECK(d >= 0, "coll: empty: negative dimension ", d);
            n *= d;
        }
        TORCH_CHECK(!g_forked_child,
                    "coll: empty: not in a forked child (its communicator "
                    "belongs to the parent process)");
        auto opts = at::TensorOptions().dtype(dtype).device(at::kCPU);
        size_t bytes = (size_t)std::max<int64_t>(n, 1) * c10::elementSize(dtype);
        c10::DataPtr d = alloc_block(bytes);
        TORCH_CHECK(d, "coll: empty: coll_alloc of ", bytes, " bytes failed");
        c10::Storage st(c10::Storage::use_byte_size_t(), bytes, std::move(d), nullptr, false);
        return at::empty({0}, opts).set_(st, 0, {n}, {1}).view(sizes);
    }

    // A block of coll_alloc memory registered in blocks(), or a null DataPtr
    // when coll_alloc fails. Thread-safe: libcoll's heaps lock (shm_heap.lock),
    // the other backends' coll_alloc is aligned_alloc.
    c10::DataPtr alloc_block(size_t bytes) {
        void* p = take_cached(bytes);
        if (p) return block_ptr(p);
        p = coll_alloc(comm_, bytes);
        if (!p) return c10::DataPtr();
        try {
            std::lock_guard<std::mutex> g(blocks().mu);
            blocks().live.emplace(
                p,
                BlockTable::Block{c10::intrusive_ptr<ProcessGroupColl>::reclaim_copy(this), bytes});
        } catch (...) { // out of memory for the entry: the caller falls back
            coll_free(comm_, p);
            return c10::DataPtr();
        }
        return block_ptr(p);
    }
    // A block's DataPtr: its context is its data, its deleter coll_block_delete.
    static c10::DataPtr block_ptr(void* p) {
        return c10::DataPtr(p, p, &coll_block_delete, c10::Device(c10::DeviceType::CPU));
    }
    // A cached block of this group of exactly bytes, back among the live ones; or null.
    void* take_cached(size_t bytes) {
        auto& t = blocks();
        std::lock_guard<std::mutex> g(t.mu);
        auto range = t.cached.equal_range(bytes);
        for (auto it = range.first; it != range.second; ++it) {
            if (it->second.second.group.get() != this) continue;
            void* p = it->second.first;
            t.live.emplace(p, std::move(it->second.second));
            t.cached.erase(it);
            t.cached_bytes -= bytes;
            return p;
        }
        return nullptr;
    }
    void free_block(void* p) { coll_free(comm_, p); }

    std::string libcollBackend() const { return coll_comm_backend(comm_); }

    // A group, with the allocator turned on when COLL_TORCH_ALLOCATOR asks
    // (torch's backend hook and the Python constructor both come here).
    static c10::intrusive_ptr<ProcessGroupColl> make(const c10::intrusive_ptr<c10d::Store>& store,
                                                     int rank, int size,
                                                     const std::chrono::duration<float>& timeout) {
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
        auto pg = c10::make_intrusive<ProcessGroupColl>(store, rank, size, ms);
        allocator_from_env(pg);
        return pg;
    }
    static c10::intrusive_ptr<CollBase> create(const c10::intrusive_ptr<c10d::Store>& store,
                                               int rank, int size,
                                               const std::chrono::duration<float>& timeout) {
        return make(store, rank, size, timeout);
    }

    WorkPtr allreduce(std::vector<at::Tensor>& tensors,
                      const c10d::AllreduceOptions& opts) override {
        if (tensors.size() == 1 && tensors[0].is_sparse())
            return allreduce_sparse_coo(tensors, opts);
        check_single(tensors, "all_reduce");
        if (reduced_here(tensors[0], opts.reduceOp)) return allreduce_gathered(tensors, opts);
        coll_dtype dt = to_coll_dtype(tensors[0], "all_reduce");
        coll_op op = to_coll_op(opts.reduceOp, dt, "all_reduce");
        Staged s = stage(tensors[0]);
        coll_request* req = nullptr;
        int rc = coll_iallreduce(comm_, s.buf.data_ptr(), s.buf.data_ptr(), (size_t)s.buf.numel(),
                                 dt, op, &req);
        return make(c10d::OpType::ALLREDUCE, "all_reduce", rc, req, copy_back_fn({s}), tensors,
                    opts.timeout);
    }

    WorkPtr allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                const c10d::AllreduceCoalescedOptions& opts) override {
        // One after the other, on the ordered queue; a Work queued behind them
        // completes when they all have (the first error is its error).
        for (auto& t : tensors) {
            check_cpu(t, "all_reduce_coalesced");
            to_coll_op(opts.reduceOp, to_coll_dtype(t, "all_reduce_coalesced"),
                       "all_reduce_coalesced");
        }
        std::vector<c10::intrusive_ptr<WorkColl>> works;
        for (auto& t : tensors) {
            std::vector<at::Tensor> one{t};
            c10d::AllreduceOptions o;
            o.reduceOp = opts.reduceOp;
            works.push_back(c10::static_intrusive_pointer_cast<WorkColl>(allreduce(one, o)));
        }
        return standing_for(c10d::OpType::ALLREDUCE_COALESCED, "all_reduce_coalesced",
                            std::move(works), tensors, opts.timeout);
    }

#if COLL_TORCH2
    // torch 2's coalescing manager (dist._coalescing_manager) on CPU: as
    // all_reduce_coalesced, one operation per pair on the ordered queue and a
    // Work standing for them. Every pair is checked before any is queued.
    WorkPtr allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                            std::vector<at::Tensor>& inputs,
                                            const c10d::AllgatherOptions& opts) override {
        const char* what = "all_gather_into_tensor_coalesced";
        check_pairs(outputs, inputs, size_, 1, "world_size x", what);
        std::vector<c10::intrusive_ptr<WorkColl>> works;
        for (size_t i = 0; i < inputs.size(); i++)
            works.push_back(c10::static_intrusive_pointer_cast<WorkColl>(
                _allgather_base(outputs[i], inputs[i], opts)));
        return standing_for(c10d::OpType::COALESCED, what, std::move(works), outputs, opts.timeout);
    }

    WorkPtr reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                            std::vector<at::Tensor>& inputs,
                                            const c10d::ReduceScatterOptions& opts) override {
        const char* what = "reduce_scatter_tensor_coalesced";
        check_pairs(outputs, inputs, 1, size_, "1/world_size of", what);
        for (auto& o : outputs) to_coll_op(opts.reduceOp, to_coll_dtype(o, what), what);
        std::vector<c10::intrusive_ptr<WorkColl>> works;
        for (size_t i = 0; i < inputs.size(); i++)
            works.push_back(c10::static_intrusive_pointer_cast<WorkColl>(
                _reduce_scatter_base(outputs[i], inputs[i], opts)));
        return standing_for(c10d::OpType::COALESCED, what, std::move(works), outputs, opts.timeout);
    }
#endif

    WorkPtr broadcast(std::vector<at::Tensor>& tensors,
                      const c10d::BroadcastOptions& opts) override {
        check_single(tensors, "broadcast");
        check_root(opts.rootRank, "broadcast");
        coll_dtype dt = move_dtype(tensors[0], "broadcast");
        Staged s = stage(tensors[0]);
        coll_request* req = nullptr;
        int rc = coll_ibroadcast(comm_, s.buf.data_ptr(), s.buf.data_ptr(), (size_t)s.buf.numel(),
                                 dt, (int)opts.rootRank, &req);
        return make(c10d::OpType::BROADCAST, "broadcast", rc, req, copy_back_fn({s}), tensors,
                    opts.timeout);
    }

    WorkPtr reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override {
        check_single(tensors, "reduce");
        check_root(opts.rootRank, "reduce");
        coll_dtype dt = to_coll_dtype(tensors[0], "reduce");
        coll_op op = to_coll_op(opts.reduceOp, dt, "reduce");
        Staged s = stage(tensors[0]);
        int rc = coll_reduce(comm_, s.buf.data_ptr(), s.buf.data_ptr(), (size_t)s.buf.numel(), dt,
                             op, (int)opts.rootRank);
        return make(c10d::OpType::REDUCE, "reduce", rc, nullptr, copy_back_fn({s}), tensors);
    }

    WorkPtr allgather(std::vector<std::vector<at::Tensor>>& outputs,
                      std::vector<at::Tensor>& inputs,
                      const c10d::AllgatherOptions& opts) override {
        check_single(inputs, "all_gather");
        TORCH_CHECK(outputs.size() == 1 && (int)outputs[0].size() == size_,
                    "coll: all_gather: expects one output list of ", size_, " tensors");
        const at::Tensor& in = inputs[0];
        for (auto& o : outputs[0]) {
            check_cpu(o, "all_gather");
            TORCH_CHECK(o.numel() == in.numel() && o.scalar_type() == in.scalar_type(),
                        "coll: all_gather: every output tensor must have the input's size and "
                        "dtype");
        }
        coll_dtype dt = move_dtype(in, "all_gather");
        at::Tensor src = in.contiguous();
        auto outs = outputs[0];
        auto n = in.numel();
        coll_request* req = nullptr;
        if (back_to_back(outs)) { // e.g. out.chunk(world_size): straight into them
            int rc = coll_iallgather(comm_, src.data_ptr(), outs[0].data_ptr(), (size_t)n, dt,
                                     &req);
            return make(
                c10d::OpType::ALLGATHER, "all_gather", rc, req, [src]() {}, outs, opts.timeout);
        }
        at::Tensor flat = at::empty({(int64_t)size_ * n}, in.options());
        int rc = coll_iallgather(comm_, src.data_ptr(), flat.data_ptr(), (size_t)n, dt, &req);
        auto finish = [outs, flat, src, n]() mutable {
            for (size_t r = 0; r < outs.size(); r++)
                outs[r].copy_(flat.narrow(0, (int64_t)r * n, n).view(outs[r].sizes()));
        };
        return make(c10d::OpType::ALLGATHER, "all_gather", rc, req, finish, outs, opts.timeout);
    }

    // outputs[r][i] gets rank r's inputs[i]: every input as bytes in one
    // buffer, one all_gather (any dtypes, bool included), copied out at the end.
    WorkPtr allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                std::vector<at::Tensor>& inputs,
                                const c10d::AllgatherOptions& opts) override {
        const char* what = "all_gather_coalesced";
        TORCH_CHECK((int)outputs.size() == size_, "coll: ", what, ": expects ", size_,
                    " output lists (one per rank), got ", outputs.size());
        std::vector<at::Tensor> bytes;
        for (auto& t : inputs) {
            check_cpu(t, what);
            bytes.push_back(t.contiguous().view({-1}).view(at::kByte));
        }
        for (auto& list : outputs) {
            TORCH_CHECK(list.size() == inputs.size(), "coll: ", what,
                        ": every output list must have one tensor per input (", inputs.size(),
                        "), got ", list.size());
            for (size_t i = 0; i < list.size(); i++) {
                check_cpu(list[i], what);
                TORCH_CHECK(list[i].numel() == inputs[i].numel() &&
                                list[i].scalar_type() == inputs[i].scalar_type(),
                            "coll: ", what, ": output ", i,
                            " must have its input's element count and dtype");
            }
        }
        at::Tensor src = bytes.empty() ? at::empty({0}, at::kByte) : at::cat(bytes);
        int64_t n = src.numel();
        at::Tensor all = at::empty({(int64_t)size_ * n}, src.options());
        coll_request* req = nullptr;
        int rc = coll_iallgather(comm_, src.data_ptr(), all.data_ptr(), (size_t)n, COLL_UINT8,
                                 &req);
        auto outs = outputs;
        auto finish = [outs, all, src, n]() mutable {
            for (size_t r = 0; r < outs.size(); r++) {
                int64_t off = (int64_t)r * n;
                for (auto& o : outs[r]) {
                    int64_t b = o.numel() * (int64_t)o.element_size();
                    // byte-wise: an offset need not suit the dtype's alignment
                    at::Tensor c = o.is_contiguous() ? o : at::empty(o.sizes(), o.options());
                    c.view({-1}).view(at::kByte).copy_(all.narrow(0, off, b));
                    if (!o.is_contiguous()) o.copy_(c);
                    off += b;
                }
            }
        };
        std::vector<at::Tensor> flat_outs;
        for (auto& list : outputs) flat_outs.insert(flat_outs.end(), list.begin(), list.end());
        return make(c10d::OpType::ALLGATHER_COALESCED, what, rc, req, finish, flat_outs,
                    opts.timeout);
    }

    WorkPtr _allgather_base(at::Tensor& output, at::Tensor& input,
                            const c10d::AllgatherOptions& opts) override {
        check_cpu(input, "all_gather_into_tensor");
        check_cpu(output, "all_gather_into_tensor");
        TORCH_CHECK(
            output.numel() == input.numel() * size_ && output.scalar_type() == input.scalar_type(),
            "coll: all_gather_into_tensor: output must hold world_size x input elements "
            "of the input's dtype");
        coll_dtype dt = move_dtype(input, "all_gather_into_tensor");
        at::Tensor src = input.contiguous();
        Staged s = stage(output);
        coll_request* req = nullptr;
        int rc = coll_iallgather(comm_, src.data_ptr(), s.buf.data_ptr(), (size_t)input.numel(), dt,
                                 &req);
        auto keep = src;
        auto cb = copy_back_fn({s});
        auto finish = [keep, cb]() {
            if (cb) cb();
        };
        return make(c10d::OpType::_ALLGATHER_BASE, "all_gather_into_tensor", rc, req, finish,
                    {output}, opts.timeout);
    }

    WorkPtr reduce_scatter(std::vector<at::Tensor>& outputs,
                           std::vector<std::vector<at::Tensor>>& inputs,
                           const c10d::ReduceScatterOptions& opts) override {
        check_single(outputs, "reduce_scatter");
        TORCH_CHECK(inputs.size() == 1 && (int)inputs[0].size() == size_,
                    "coll: reduce_scatter: expects one input list of ", size_, " tensors");
        at::Tensor& out = outputs[0];
        for (auto& i : inputs[0]) {
            check_cpu(i, "reduce_scatter");
            TORCH_CHECK(i.numel() == out.numel() && i.scalar_type() == out.scalar_type(),
                        "coll: reduce_scatter: every input tensor must have the output's size "
                        "and dtype");
        }
        coll_dtype dt = to_coll_dtype(out, "reduce_scatter");
        coll_op op = to_coll_op(opts.reduceOp, dt, "reduce_scatter");
        std::vector<at::Tensor> flats;
        for (auto& i : inputs[0]) flats.push_back(i.reshape({-1}));
        at::Tensor flat = at::cat(flats);
        Staged s = stage(out);
        coll_request* req = nullptr;
        int rc = coll_ireducescatter(comm_, flat.data_ptr(), s.buf.data_ptr(), (size_t)out.numel(),
                                     dt, op, &req);
        auto cb = copy_back_fn({s});
        auto finish = [flat, cb]() {
            if (cb) cb();
        };
        return make(c10d::OpType::REDUCE_SCATTER, "reduce_scatter", rc, req, finish, outputs,
                    opts.timeout);
    }

    WorkPtr _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                 const c10d::ReduceScatterOptions& opts) override {
        check_cpu(input, "reduce_scatter_tensor");
        check_cpu(output, "reduce_scatter_tensor");
        TORCH_CHECK(
            input.numel() == output.numel() * size_ && output.scalar_type() == input.scalar_type(),
            "coll: reduce_scatter_tensor: input must hold world_size x output elements "
            "of the output's dtype");
        coll_dtype dt = to_coll_dtype(output, "reduce_scatter_tensor");
        coll_op op = to_coll_op(opts.reduceOp, dt, "reduce_scatter_tensor");
        at::Tensor src = input.contiguous();
        Staged s = stage(output);
        coll_request* req = nullptr;
        int rc = coll_ireducescatter(comm_, src.data_ptr(), s.buf.data_ptr(),
                                     (size_t)output.numel(), dt, op, &req);
        auto cb = copy_back_fn({s});
        auto finish = [src, cb]() {
            if (cb) cb();
        };
        return make(c10d::OpType::_REDUCE_SCATTER_BASE, "reduce_scatter_tensor", rc, req, finish,
                    {output}, opts.timeout);
    }

    WorkPtr alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& outSplits,
                          std::vector<int64_t>& inSplits,
                          const c10d::AllToAllOptions& /*opts*/) override {
        const char* what = "all_to_all_single";
        check_cpu(input, what);
        check_cpu(output, what);
        TORCH_CHECK(input.scalar_type() == output.scalar_type(), "coll: ", what,
                    ": input and output dtypes differ");
        coll_dtype dt = move_dtype(input, what);
        at::Tensor src = input.contiguous();
        Staged s = stage(output);
        int64_t row_in = input.dim() ? input.numel() / std::max<int64_t>(input.size(0), 1) : 1;
        int64_t row_out = output.dim() ? output.numel() / std::max<int64_t>(output.size(0), 1) : 1;
        int rc;
        if (inSplits.empty() && outSplits.empty()) {
            // torch splits dimension 0 (rows), as gloo does
            int64_t rows = input.dim() ? input.size(0) : 1;
            TORCH_CHECK(input.numel() == output.numel() && rows % size_ == 0, "coll: ", what,
                        ": input and output must have the same size, the first dimension (", rows,
                        ") divisible by the world size ", size_);
            rc = coll_alltoall(comm_, src.data_ptr(), s.buf.data_ptr(),
                               (size_t)(input.numel() / size_), dt);
        } else {
            // Uneven splits: pairwise exchanges (sendrecv), rank+k / rank-k.
            p2p_->run();
            std::vector<int64_t> is = splits_or_even(inSplits, input, what);
            std::vector<int64_t> os = splits_or_even(outSplits, output, what);
            TORCH_CHECK(row_in == row_out, "coll: ", what, ": rows of input and output differ");
            std::vector<int64_t> ioff(size_ + 1, 0), ooff(size_ + 1, 0);
            for (int r = 0; r < size_; r++) {
                ioff[r + 1] = ioff[r] + is[r] * row_in;
                ooff[r + 1] = ooff[r] + os[r] * row_out;
            }
            TORCH_CHECK(ioff[size_] == input.numel() && ooff[size_] == output.numel(),
                        "coll: ", what,
                        ": split sizes do not add up to the tensors' first dimension");
            size_t es = input.element_size();
            char* ib = static_cast<char*>(src.data_ptr());
            char* ob = static_cast<char*>(s.buf.data_ptr());
            std::memcpy(ob + ooff[rank_] * es, ib + ioff[rank_] * es,
                        (size_t)(is[rank_] * row_in) * es);
            rc = COLL_OK;
            for (int k = 1; k < size_ && rc == COLL_OK; k++) {
                int dst = (rank_ + k) % size_, from = (rank_ - k + size_) % size_;
                rc = coll_sendrecv(comm_, ib + ioff[dst] * es, (size_t)(is[dst] * row_in), dst,
                                   ob + ooff[from] * es, (size_t)(os[from] * row_out), from, dt);
            }
        }
        return make(c10d::OpType::ALLTOALL_BASE, what, rc, nullptr, copy_back_fn({s}), {output});
    }

    // Queued, not run: see P2PEngine. Any dtype (the bytes travel as they are).
    WorkPtr send(std::vector<at::Tensor>& tensors, int dst, int tag) override {
        check_single(tensors, "send");
        check_peer(dst, "send");
        Staged s = stage(tensors[0]); // a copy now if not contiguous: the data as of the call
        s.copy_back = false;
        return post_p2p(true, dst, tag, s, c10d::OpType::SEND, tensors, -1);
    }

    WorkPtr recv(std::vector<at::Tensor>& tensors, int src, int tag) override {
        check_single(tensors, "recv");
        check_peer(src, "recv");
        return post_p2p(false, src, tag, stage(tensors[0]), c10d::OpType::RECV, tensors, src);
    }

    // recv(src=None): queued as a receive from peer -1; the Work's
    // sourceRank() says who sent once it ran (P2PEngine).
    WorkPtr recvAnysource(std::vector<at::Tensor>& tensors, int tag) override {
        check_single(tensors, "recvAnySource");
        return post_p2p(false, -1, tag, stage(tensors[0]), c10d::OpType::RECVANYSOURCE, tensors,
                        -1);
    }

    // gather and scatter: the root exchanges with each rank in turn (blocking
    // coll_send / coll_recv; libcoll has no rooted gather or scatter).
    WorkPtr gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                   const c10d::GatherOptions& opts) override {
        check_single(inputs, "gather");
        check_root(opts.rootRank, "gather");
        p2p_->run(); // queued sends and receives first: they share the pairs' streams
        const at::Tensor& in = inputs[0];
        coll_dtype dt = move_dtype(in, "gather");
        int root = (int)opts.rootRank;
        if (rank_ != root) {
            TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                        "coll: gather: only the root (rank ", root, ") passes a gather list");
            at::Tensor src = in.contiguous();
            int rc = coll_send(comm_, src.data_ptr(), (size_t)src.numel(), dt, root);
            return make(c10d::OpType::GATHER, "gather", rc, nullptr, nullptr, inputs);
        }
        TORCH_CHECK(outputs.size() == 1 && (int)outputs[0].size() == size_,
                    "coll: gather: the root expects one gather list of ", size_, " tensors");
        auto& outs = outputs[0];
        check_same(outs, in, "gather", "output");
        int rc = COLL_OK;
        for (int r = 0; r < size_ && rc == COLL_OK; r++) {
            if (r == rank_) {
                outs[r].copy_(in.view(outs[r].sizes()));
                continue;
            }
            Staged st = stage(outs[r]);
            rc = coll_recv(comm_, st.buf.data_ptr(), (size_t)st.buf.numel(), dt, r);
            if (rc == COLL_OK && st.copy_back) st.user.copy_(st.buf);
        }
        return make(c10d::OpType::GATHER, "gather", rc, nullptr, nullptr, outs);
    }

    WorkPtr scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                    const c10d::ScatterOptions& opts) override {
        check_single(outputs, "scatter");
        check_root(opts.rootRank, "scatter");
        p2p_->run();
        at::Tensor& out = outputs[0];
        coll_dtype dt = move_dtype(out, "scatter");
        int root = (int)opts.rootRank;
        Staged st = stage(out);
        int rc = COLL_OK;
        if (rank_ != root) {
            TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                        "coll: scatter: only the root (rank ", root, ") passes a scatter list");
            rc = coll_recv(comm_, st.buf.data_ptr(), (size_t)st.buf.numel(), dt, root);
        } else {
            TORCH_CHECK(inputs.size() == 1 && (int)inputs[0].size() == size_,
                        "coll: scatter: the root expects one scatter list of ", size_, " tensors");
            check_same(inputs[0], out, "scatter", "input");
            for (int r = 0; r < size_ && rc == COLL_OK; r++) {
                if (r == rank_) {
                    st.buf.copy_(inputs[0][r].view(st.buf.sizes()));
                    continue;
                }
                at::Tensor src = inputs[0][r].contiguous();
                rc = coll_send(comm_, src.data_ptr(), (size_t)src.numel(), dt, r);
            }
        }
        return make(c10d::OpType::SCATTER, "scatter", rc, nullptr, copy_back_fn({st}), outputs);
    }

    WorkPtr barrier(const c10d::BarrierOptions& /*opts*/) override {
        int rc = coll_barrier(comm_);
        return make(c10d::OpType::BARRIER, "barrier", rc, nullptr, nullptr, {});
    }

  private:
    // True when the tensors are contiguous and follow each other in memory.
    static bool back_to_back(const std::vector<at::Tensor>& ts) {
        const char* next = nullptr;
        for (auto& t : ts) {
            if (!t.is_contiguous()) return false;
            const char* p = static_cast<const char*>(t.data_ptr());
            if (next && p != next) return false;
            next = p + t.nbytes();
        }
        return true;
    }

    // bool, and the bitwise ops, which libcoll does not reduce: all-gathered,
    // then reduced here (as gloo: sum and max of bools are or, product and min and).
    static bool reduced_here(const at::Tensor& t, const c10d::ReduceOp& op) {
        return t.scalar_type() == at::kBool || op.op_ == c10d::ReduceOp::BAND ||
               op.op_ == c10d::ReduceOp::BOR || op.op_ == c10d::ReduceOp::BXOR;
    }
    WorkPtr allreduce_gathered(std::vector<at::Tensor>& tensors,
                               const c10d::AllreduceOptions& opts) {
        at::Tensor t = tensors[0];
        auto op = opts.reduceOp.op_;
        bool is_bool = t.scalar_type() == at::kBool;
        TORCH_CHECK(is_bool || at::isIntegralType(t.scalar_type(), /*includeBool=*/false),
                    "coll: all_reduce: the bitwise ops need an integer or bool dtype, got ",
                    t.scalar_type());
        TORCH_CHECK(op == c10d::ReduceOp::BAND || op == c10d::ReduceOp::BOR ||
                        op == c10d::ReduceOp::BXOR || op == c10d::ReduceOp::SUM ||
                        op == c10d::ReduceOp::PRODUCT || op == c10d::ReduceOp::MIN ||
                        op == c10d::ReduceOp::MAX,
                    "coll: all_reduce: reduce op ", static_cast<int>(op),
                    " is not defined for dtype bool (sum, product, min, max, band, bor, bxor)");
        coll_dtype dt = move_dtype(t, "all_reduce");
        at::Tensor src = t.contiguous();
        at::Tensor all = at::empty({(int64_t)size_, src.numel()}, src.options());
        coll_request* req = nullptr;
        int rc = coll_iallgather(comm_, src.data_ptr(), all.data_ptr(), (size_t)src.numel(), dt,
                                 &req);
        int n = size_;
        auto finish = [t, src, all, op, n]() mutable {
            at::Tensor r = all[0].clone();
            for (int i = 1; i < n; i++) {
                if (op == c10d::ReduceOp::BXOR)
                    r.bitwise_xor_(all[i]);
                else if (op == c10d::ReduceOp::BAND || op == c10d::ReduceOp::PRODUCT ||
                         op == c10d::ReduceOp::MIN)
                    r.bitwise_and_(all[i]); // bool only, for the last two
                else
                    r.bitwise_or_(all[i]);
            }
            t.copy_(r.view(t.sizes()));
        };
        return make(c10d::OpType::ALLREDUCE, "all_reduce", rc, req, finish, tensors, opts.timeout);
    }

    // A sparse (COO) tensor, summed as torch's gloo sums it: every rank's
    // indices and values all-gathered (the counts first, then each padded to
    // the largest), added here and coalesced into the caller's tensor. Blocking
    // (two all_gathers whose sizes depend on each other); the Work is complete.
    WorkPtr allreduce_sparse_coo(std::vector<at::Tensor>& tensors,
                                 const c10d::AllreduceOptions& opts) {
        const char* what = "all_reduce (sparse)";
        at::Tensor t = tensors[0];
        check_on_cpu(t, what);
        TORCH_CHECK(opts.reduceOp.op_ == c10d::ReduceOp::SUM, "coll: ", what,
                    ": sparse tensors are summed only (as gloo), got reduce op ",
                    static_cast<int>(opts.reduceOp.op_));
        // An entry as a row of bytes: its index in each sparse dimension (int64),
        // then its dense values. Made before any exchange: an error here must
        // not leave the other ranks waiting in one.
        at::Tensor in = t.coalesce();
        int64_t nnz = in._nnz(), sdims = in.sparse_dim(), ibytes = sdims * (int64_t)sizeof(int64_t),
                vbytes = (int64_t)in.element_size();
        for (int64_t d = sdims; d < in.dim(); d++) vbytes *= in.size(d);
        // Reinterpreting a tensor's bytes needs fresh row-major memory: a view's
        // strides (a [n, 1] transpose) or offset (a row of mixed fields) may not allow it.
        auto fresh = [](const at::Tensor& x) { return at::empty(x.sizes(), x.options()).copy_(x); };
        at::Tensor mine = at::empty({nnz, ibytes + vbytes}, at::kByte);
        at::Tensor idx = fresh(in._indices().t()), val = fresh(in._values());
        mine.narrow(1, 0, ibytes).copy_(idx.view(at::kByte).view({nnz, ibytes}));
        mine.narrow(1, ibytes, vbytes).copy_(val.view(at::kByte).view({nnz, vbytes}));
        std::vector<int64_t> counts((size_t)size_);
        int rc = coll_allgather(comm_, &nnz, counts.data(), 1, COLL_INT64);
        int64_t most = rc == COLL_OK ? *std::max_element(counts.begin(), counts.end()) : 0;
        at::Tensor rows = at::zeros({most, ibytes + vbytes}, at::kByte);
        if (rc == COLL_OK) rows.narrow(0, 0, nnz).copy_(mine);
        at::Tensor all = at::empty({(int64_t)size_ * most, ibytes + vbytes}, at::kByte);
        if (rc == COLL_OK && most)
            rc = coll_allgather(comm_, rows.data_ptr(), all.data_ptr(), (size_t)rows.numel(),
                                COLL_UINT8);
        if (rc == COLL_OK) {
            std::vector<at::Tensor> is, vs;
            for (int r = 0; r < size_; r++) {
                at::Tensor theirs = all.narrow(0, (int64_t)r * most, counts[(size_t)r]);
                is.push_back(fresh(theirs.narrow(1, 0, ibytes)).view(at::kLong));
                vs.push_back(fresh(theirs.narrow(1, ibytes, vbytes)).view(val.scalar_type()));
            }
            std::vector<int64_t> vshape(val.sizes().begin(), val.sizes().end());
            vshape[0] = -1;
            at::Tensor sum = at::sparse_coo_tensor(at::cat(is).t(), at::cat(vs).view(vshape),
                                                   t.sizes(), val.options().layout(at::kSparse));
            t.copy_(sum.coalesce());
        }
        return make(c10d::OpType::ALLREDUCE, what, rc, nullptr, nullptr, tensors, opts.timeout);
    }

    // A Work queued behind works, complete when they all are (the first error is its error).
    WorkPtr standing_for(c10d::OpType type, const char* what,
                         std::vector<c10::intrusive_ptr<WorkColl>> works,
                         std::vector<at::Tensor> outputs, std::chrono::milliseconds timeout) {
        auto w = c10::make_intrusive<WorkColl>(type, what, comm_, nullptr, COLL_OK, nullptr,
                                               std::move(outputs), timeout, std::move(works));
        enqueue(w);
        return w;
    }

    // Coalesced pairs: as many outputs as inputs, each pair CPU tensors of one
    // dtype with output elements x in_per = input elements x out_per.
    static void check_pairs(const std::vector<at::Tensor>& outputs,
                            const std::vector<at::Tensor>& inputs, int64_t out_per, int64_t in_per,
                            const char* relation, const char* what) {
        TORCH_CHECK(outputs.size() == inputs.size(), "coll: ", what, ": ", outputs.size(),
                    " outputs for ", inputs.size(), " inputs");
        for (size_t i = 0; i < inputs.size(); i++) {
            check_cpu(inputs[i], what);
            check_cpu(outputs[i], what);
            TORCH_CHECK(outputs[i].numel() * in_per == inputs[i].numel() * out_per &&
                            outputs[i].scalar_type() == inputs[i].scalar_type(),
                        "coll: ", what, ": pair ", i, ": the output must hold ", relation,
                        " the input's elements, of its dtype");
        }
    }

    // Every tensor of a gather/scatter list: CPU, ref's element count and dtype.
    static void check_same(const std::vector<at::Tensor>& list, const at::Tensor& ref,
                           const char* what, const char* kind) {
        for (auto& t : list) {
            check_cpu(t, what);
            TORCH_CHECK(t.numel() == ref.numel() && t.scalar_type() == ref.scalar_type(),
                        "coll: ", what, ": every ", kind, " tensor must have ", ref.numel(),
                        " elements of dtype ", ref.scalar_type());
        }
    }
    void check_root(int64_t root, const char* what) {
        TORCH_CHECK(root >= 0 && root < size_, "coll: ", what, ": root rank ", root,
                    " is out of range [0, ", size_, ")");
    }
    void check_peer(int peer, const char* what) {
        TORCH_CHECK(peer >= 0 && peer < size_ && peer != rank_, "coll: ", what, ": peer rank ",
                    peer, " is out of range or this rank itself (world size ", size_, ")");
    }
    std::vector<int64_t> splits_or_even(const std::vector<int64_t>& sp, const at::Tensor& t,
                                        const char* what) {
        if (!sp.empty()) {
            TORCH_CHECK((int)sp.size() == size_, "coll: ", what, ": ", sp.size(),
                        " split sizes for a world of ", size_);
            for (auto v : sp) TORCH_CHECK(v >= 0, "coll: ", what, ": negative split size");
            return sp;
        }
        int64_t n0 = t.dim() ? t.size(0) : 1;
        TORCH_CHECK(n0 % size_ == 0, "coll: ", what, ": first dimension ", n0,
                    " is not divisible by the world size");
        return std::vector<int64_t>(size_, n0 / size_);
    }
    static std::function<void()> copy_back_fn(std::vector<Staged> st) {
        bool any = false;
        for (auto& s : st) any = any || s.copy_back;
        if (!any) {
            // keep the buffers alive until completion
            return [st]() {};
        }
        return [st]() {
            for (auto s : st)
                if (s.copy_back) s.user.copy_(s.buf);
        };
    }
    WorkPtr make(c10d::OpType type, const char* what, int rc, coll_request* req,
                 std::function<void()> finish, std::vector<at::Tensor> outputs,
                 std::chrono::milliseconds timeout = ::kNoTimeout) {
        if (rc != COLL_OK) req = nullptr;
        auto w = c10::make_intrusive<WorkColl>(type, what, comm_, req, rc, std::move(finish),
                                               std::move(outputs), timeout);
        if (!req && rc != COLL_OK) w->wait(::kNoTimeout); // blocking error: raise now
        if (req)
            enqueue(w);
        else
            w->settle_future();
        return w;
    }
    WorkPtr post_p2p(bool send, int peer, int tag, Staged st, c10d::OpType type,
                     std::vector<at::Tensor> tensors, int source) {
        const char* what = send ? "send" : peer < 0 ? "recvAnySource" : "recv";
        auto w = c10::make_intrusive<WorkColl>(
            type, what, comm_, nullptr, COLL_OK, nullptr, std::move(tensors), ::kNoTimeout,
            std::vector<c10::intrusive_ptr<WorkColl>>{}, p2p_, source);
        p2p_->post(send, peer, tag, std::move(st), w);
        return w;
    }

  public:
    // Futures' callbacks (DDP comm hooks' then()) run on the completion thread,
    // and one that runs another collective of the group and waits for it
    // (PowerSGD's hook) would wait for itself: the completion thread, asked
    // for a Work's future or to wait for it, completes the queue up to it here.
    void complete_through(const WorkColl* target) {
        for (;;) {
            c10::intrusive_ptr<WorkColl> w;
            {
                std::lock_guard<std::mutex> g(qlk_);
                if (pending_.empty()) return;
                w = pending_.front();
                pending_.pop_front();
            }
            w->complete_request();
            if (w.get() == target) return;
        }
    }

  private:
    void enqueue(const c10::intrusive_ptr<WorkColl>& w) {
        w->owner_ = this;
        std::lock_guard<std::mutex> g(qlk_);
        pending_.push_back(w);
        qcv_.notify_one();
    }

    // Rank 0 picks a free port and (without a user token) a random job token and
    // publishes both on torch's store; every rank then joins libcoll's tcp://
    // rendezvous on that port. Rank 0 publishes its own address (listen_address).
    void rendezvous(const c10::intrusive_ptr<c10d::Store>& store,
                    std::chrono::milliseconds timeout) {
        std::string host;
        if (rank_ == 0) {
            host = listen_address(store);
            int port = free_port();
            TORCH_CHECK(port > 0, "coll: could not find a free TCP port for libcoll's store");
            std::string tok;
            const char* t = std::getenv("COLL_JOB_TOKEN");
            const char* tf = std::getenv("COLL_JOB_TOKEN_FILE");
            if (!(t && *t) && !(tf && *tf)) tok = random_token();
            store->set("coll/host", bytes(host));
            store->set("coll/token", bytes(tok));
            store->set("coll/port", bytes(std::to_string(port)));
        }
        std::string port = str(store->get("coll/port"));
        host = str(store->get("coll/host"));
        // A published token goes in the config, not the environment: this runs
        // without the GIL, beside Python threads that may read os.environ.
        std::string tok = str(store->get("coll/token"));

        std::string method = "tcp://" + host + ":" + port;
        const char* be = std::getenv("COLL_BACKEND");
        std::string backend = be && *be ? be : "auto";
        const char* algo = std::getenv("COLL_ALGO");
        coll_config cfg;
        coll_config_init(&cfg);
        cfg.backend = backend.c_str();
        cfg.init_method = method.c_str();
        cfg.rank = rank_;
        cfg.world_size = size_;
        cfg.timeout_s = timeout.count() > 0 ? timeout.count() / 1000.0 : 300.0;
        cfg.algo = algo && *algo ? algo : nullptr;
        cfg.job_token = tok.empty() ? nullptr : tok.c_str();
        int rc = coll_comm_create(&cfg, &comm_);
        TORCH_CHECK(rc == COLL_OK, "coll: cannot create the libcoll communicator (backend ",
                    backend, ", ", method, ", rank ", rank_, "/", size_,
                    "): ", coll_last_create_error(), " [", coll_status_name(rc), "]");
        // Everyone is in: rank 0 may drop its keys (ignore stores without delete).
    }

    // The address this rank listens on, as libcoll picks it for its own
    // transports (COLL_LISTEN_ADDR, COLL_SOCKET_IFNAME, else the interface that
    // routes to the store's host): a subgroup's rank 0 may be on another host
    // than MASTER_ADDR. The store's host is torch's TCPStore's, under its
    // PrefixStores (tcp:// sets no MASTER_ADDR); else the environment's.
    static std::string listen_address(c10::intrusive_ptr<c10d::Store> s) {
        std::string store_host;
        while (s) {
            if (auto* p = dynamic_cast<c10d::PrefixStore*>(s.get())) {
                s = p->getUnderlyingStore();
                continue;
            }
            if (auto* t = dynamic_cast<c10d::TCPStore*>(s.get())) store_host = t->getHost();
            break;
        }
        coll_listen_pick pick;
        char err[512] = "";
        TORCH_CHECK(
            coll_listen_addr_for_store(store_host.c_str(), &pick, err, sizeof err) == COLL_OK,
            "coll: no address for this group's peers to reach: ", err);
        std::string a = pick.addr;
        return a.find(':') != std::string::npos ? "[" + a + "]" : a; // IPv6 in tcp://
    }

    static int free_port() {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) return -1;
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        a.sin_port = 0;
        socklen_t len = sizeof a;
        int port = -1;
        if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
            getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
            port = ntohs(a.sin_port);
        close(fd);
        return port;
    }
    static std::string random_token() {
        std::random_device rd;
        static const char hex[] = "0123456789abcdef";
        std::string s;
        for (int i = 0; i < 32; i++) s += hex[rd() & 15];
        return s;
    }
    static std::vector<uint8_t> bytes(const std::string& s) {
        return std::vector<uint8_t>(s.begin(), s.end());
    }
    static std::string str(const std::vector<uint8_t>& v) {
        return std::string(v.begin(), v.end());
    }

    // Waits for the in-flight requests in call order and settles their futures.
    void shut_down() {
        if (completer_.joinable()) completer_.join();
        p2p_->close();
        if (comm_) coll_comm_destroy(comm_);
        comm_ = nullptr;
    }

    void complete_loop() {
        t_completer_of = this;
        for (;;) {
            c10::intrusive_ptr<WorkColl> w;
            {
                std::unique_lock<std::mutex> g(qlk_);
                qcv_.wait(g, [this]() { return stop_ || !pending_.empty(); });
                if (pending_.empty()) return; // stop_ and drained
                w = pending_.front();
                pending_.pop_front();
            }
            w->complete_request(); // an error stays in the Work and its future
            // The Work's tensors may hold the group's last reference (coll
            // blocks hold their group): then the destructor ran right here,
            // on this thread, and `this` is gone.
            w.reset();
            if (t_destroyed_own_group) return;
        }
    }
    static thread_local bool t_destroyed_own_group;

    coll_comm* comm_ = nullptr;
    c10::intrusive_ptr<c10d::Store> store_; // the sequence number's
    uint64_t seq_ = 0;
    int seq_sets_ = 0;
    std::shared_ptr<P2PEngine> p2p_;
    std::thread completer_;
    std::mutex qlk_;
    std::condition_variable qcv_;
    std::deque<c10::intrusive_ptr<WorkColl>> pending_;
    bool stop_ = false;
};

thread_local bool ProcessGroupColl::t_destroyed_own_group = false;

void WorkColl::complete_here() {
    if (owner_ && t_completer_of == owner_ && !isCompleted())
        const_cast<ProcessGroupColl*>(owner_)->complete_through(this);
}

static bool release_block(void* p) {
    BlockTable& t = blocks();
    BlockTable::Block b;
    {
        std::lock_guard<std::mutex> l(t.mu);
        auto it = t.live.find(p);
        if (it == t.live.end()) return false;
        b = std::move(it->second);
        t.live.erase(it);
        // A forked child's free would punch the range out of the parent's heap.
        if (g_forked_child) return true;
        if (b.group.get() == t.caching_for && t.cached_bytes + b.bytes <= t.cache_cap) {
            t.cached_bytes += b.bytes;
            t.cached.emplace(b.bytes, std::make_pair(p, std::move(b)));
            return true;
        }
    }
    b.group->free_block(p);
    return true; // b goes here, outside the lock: it may hold the group's last reference
}

// Every cached block back to its communicator; caching stops until the next install.
static void flush_cache() {
    std::vector<std::pair<void*, BlockTable::Block>> out;
    {
        BlockTable& t = blocks();
        std::lock_guard<std::mutex> l(t.mu);
        t.caching_for = nullptr;
        t.cached_bytes = 0;
        for (auto& e : t.cached) out.push_back(std::move(e.second));
        t.cached.clear();
    }
    if (!g_forked_child)
        for (auto& e : out) e.second.group->free_block(e.first);
    // out goes here, outside the lock: a group's last reference destroys it
}

// The opt-in CPU allocator (use_coll_allocator): allocations of at least
// min_bytes come from coll_alloc on one group's communicator, everything else
// (and whatever coll_alloc cannot serve) from the allocator it replaced.
//
// Registered with c10::SetAllocator once, at the first opt-in, and left
// registered: "switching back" makes it pass everything to the previous
// allocator. Restoring the previous one instead would send the raw frees of
// blocks handed out earlier (oneDNN's raw_allocate/raw_deallocate look up the
// CPU allocator at each call) to free(); and every storage torch made while it
// was on keeps a pointer to it for resize_. It also keeps SetAllocator, which
// c10 says is not thread-safe, to a single call.
class CollAllocator final : public c10::Allocator {
  public:
    c10::DataPtr allocate(size_t n) COLL_ALLOCATE_CONST override {
        if (n >= min_bytes_.load(std::memory_order_acquire) && !g_forked_child) {
            c10::intrusive_ptr<ProcessGroupColl> g;
            {
                std::lock_guard<std::mutex> l(mu_);
                g = group_;
            }
            if (g) {
                c10::DataPtr d = g->alloc_block(n);
                if (d) return d;
            }
        }
        return prev_->allocate(n);
    }
#if COLL_ALLOCATOR_COPY_DATA
    void copy_data(void* dest, const void* src, std::size_t count) const override {
        default_copy_data(dest, src, count);
    }
#endif
    // Fixed at registration (c10 wants the same answer every time): coll blocks
    // are found by address, the rest goes to the previous allocator's deleter.
    c10::DeleterFnPtr raw_deleter() const override { return prev_raw_ ? &raw_delete : nullptr; }

    void install(c10::intrusive_ptr<ProcessGroupColl> g, size_t min_bytes) {
        size_t cap = cache_cap(); // before any state changes: it may throw
        std::lock_guard<std::mutex> l(mu_);
        TORCH_CHECK(!group_,
                    "coll: use_coll_allocator: the coll allocator is already on (for "
                    "another or the same group); call collbench_torch.use_default_allocator() "
                    "first");
        TORCH_CHECK(!g_forked_child, "coll: use_coll_allocator: not in a forked child");
        c10::Allocator* cur = c10::GetAllocator(c10::DeviceType::CPU);
        if (!registered_) {
            prev_ = cur;
            prev_raw_ = cur->raw_deleter();
            c10::SetAllocator(c10::DeviceType::CPU, this, kPriority);
            TORCH_CHECK(c10::GetAllocator(c10::DeviceType::CPU) == this,
                        "coll: use_coll_allocator: torch kept its CPU allocator (another one is "
                        "installed with a priority above ",
                        (int)kPriority, ")");
            registered_ = true;
        } else {
            TORCH_CHECK(cur == this,
                        "coll: use_coll_allocator: torch's CPU allocator was "
                        "replaced after the coll allocator was first installed; it cannot be "
                        "installed again");
        }
        {
            std::lock_guard<std::mutex> b(blocks().mu);
            blocks().caching_for = g.get();
            blocks().cache_cap = cap;
        }
        group_ = std::move(g);
        min_bytes_.store(std::max<size_t>(min_bytes, 1), std::memory_order_release);
    }

    // Back to the previous allocator for new allocations; blocks already handed
    // out stay valid (each holds its group). Idempotent.
    void uninstall() {
        c10::intrusive_ptr<ProcessGroupColl> g;
        {
            std::lock_guard<std::mutex> l(mu_);
            min_bytes_.store(SIZE_MAX, std::memory_order_release);
            g = std::move(group_);
        }
        flush_cache();
        // g goes here, outside mu_: as the last reference it destroys the
        // communicator, whose closing barrier waits for the peers.
    }

    bool on(const ProcessGroupColl* pg = nullptr) const {
        std::lock_guard<std::mutex> l(mu_);
        return group_ && (!pg || group_.get() == pg);
    }

    static CollAllocator& get() {
        static CollAllocator* a = new CollAllocator(); // never destroyed: storages point to it
        return *a;
    }

  private:
    // Above the default allocator's 0.
    static constexpr uint8_t kPriority = 16;

    // COLL_TORCH_ALLOCATOR_CACHE: bytes of freed blocks kept for reuse (1 GiB;
    // 0: none). Read at each install.
    static size_t cache_cap() {
        const char* v = std::getenv("COLL_TORCH_ALLOCATOR_CACHE");
        size_t cap = (size_t)1 << 30;
        TORCH_CHECK(!v || !*v || byte_count(v, &cap), "coll: COLL_TORCH_ALLOCATOR_CACHE='", v,
                    "' is not a byte count");
        return cap;
    }

    static void raw_delete(void* p) {
        if (!release_block(p)) get().prev_raw_(p);
    }

    mutable std::mutex mu_;
    c10::intrusive_ptr<ProcessGroupColl> group_;
    std::atomic<size_t> min_bytes_{SIZE_MAX}; // SIZE_MAX: off
    c10::Allocator* prev_ = nullptr;
    c10::DeleterFnPtr prev_raw_ = nullptr;
    bool registered_ = false;
};

static bool is_coll_memory(const at::Tensor& t) {
    return t.defined() && t.has_storage() &&
           t.storage().data_ptr().get_deleter() == &coll_block_delete;
}

// COLL_TORCH_ALLOCATOR=1: the first coll group created turns the allocator on
// (COLL_TORCH_ALLOCATOR_MIN: min_bytes, default 64 KiB), so that a script
// opts in without code changes. A failure is a warning, not a failed group.
static void allocator_from_env(const c10::intrusive_ptr<ProcessGroupColl>& pg) {
    const char* v = std::getenv("COLL_TORCH_ALLOCATOR");
    if (!v || std::strcmp(v, "1") != 0 || CollAllocator::get().on()) return;
    size_t min_bytes = kDefaultMinBytes;
    if (const char* m = std::getenv("COLL_TORCH_ALLOCATOR_MIN")) {
        if (!byte_count(m, &min_bytes))
            TORCH_WARN("coll: COLL_TORCH_ALLOCATOR_MIN='", m, "' is not a byte count; using ",
                       kDefaultMinBytes);
    }
    try {
        CollAllocator::get().install(pg, min_bytes);
    } catch (const std::exception& e) {
        TORCH_WARN("coll: COLL_TORCH_ALLOCATOR=1 but the allocator stays off: ", e.what());
    }
}

// The coll backend of a torch group (None: the default group), or None when
// it has none: on torch 1.13 the group is the backend; on torch 2 the group
// dispatches to per-device backends, and coll is its CPU one.
static py::object coll_backend_of(py::object group) {
    if (group.is_none())
        group =
            py::module::import("torch.distributed.distributed_c10d").attr("_get_default_group")();
    if (py::isinstance<ProcessGroupColl>(group)) return group;
    if (py::hasattr(group, "_get_backend")) {
        try {
            py::object b = group.attr("_get_backend")(
                py::module::import("torch").attr("device")("cpu"));
            if (py::isinstance<ProcessGroupColl>(b)) return b;
        } catch (py::error_already_set&) {
            // no CPU backend
        }
    }
    return py::none();
}

} // namespace collbench

PYBIND11_MODULE(collbench_torch, m) {
    m.doc() = "torch.distributed backend 'coll' over libcoll (collbench); see docs/TORCH.md";
    py::object dist = py::module::import("torch.distributed");
    py::class_<collbench::ProcessGroupColl, CollBase,
               c10::intrusive_ptr<collbench::ProcessGroupColl>>(m, "ProcessGroupColl")
        .def(py::init([](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                         const std::chrono::duration<float>& timeout) {
                 return collbench::ProcessGroupColl::make(store, rank, size, timeout);
             }),
             py::call_guard<py::gil_scoped_release>())
        .def_property_readonly("libcoll_backend", &collbench::ProcessGroupColl::libcollBackend)
        .def(
            "empty",
            [](collbench::ProcessGroupColl& pg, std::vector<int64_t> sizes, py::object dtype) {
                TORCH_CHECK(THPDtype_Check(dtype.ptr()),
                            "coll: empty: dtype must be a torch.dtype");
                return pg.empty(sizes, reinterpret_cast<THPDtype*>(dtype.ptr())->scalar_type);
            },
            py::arg("sizes"), py::arg("dtype"),
            "a tensor in libcoll's memory for this group (zero-copy shm collectives)");
    m.def("create_process_group", &collbench::ProcessGroupColl::create,
          py::call_guard<py::gil_scoped_release>());
    m.def("backend", &collbench::coll_backend_of, py::arg("group") = py::none(),
          "the group's coll backend (ProcessGroupColl: empty(), libcoll_backend), or None");

    m.def(
        "use_coll_allocator",
        [](py::object group, int64_t min_bytes) {
            py::object b = collbench::coll_backend_of(group);
            TORCH_CHECK(!b.is_none(), "coll: use_coll_allocator: the group is a ",
                        std::string(py::str(py::type::of(group).attr("__name__"))),
                        " without a coll backend, not a coll group (dist.new_group("
                        "backend=\"coll\"), or init_process_group(\"coll\"))");
            TORCH_CHECK(min_bytes >= 0, "coll: use_coll_allocator: min_bytes ", min_bytes,
                        " is negative");
            auto pg = b.cast<c10::intrusive_ptr<collbench::ProcessGroupColl>>();
            collbench::CollAllocator::get().install(pg, (size_t)min_bytes);
        },
        py::arg("group") = py::none(), py::arg("min_bytes") = (int64_t)collbench::kDefaultMinBytes,
        "torch's CPU allocations of at least min_bytes come from the group's libcoll memory "
        "(zero-copy collectives; docs/TORCH.md)");
    // The group may be dropped here for the last time: its destructor releases the GIL.
    m.def(
        "use_default_allocator", []() { collbench::CollAllocator::get().uninstall(); },
        "new CPU allocations come from torch's allocator again (coll memory already handed "
        "out stays valid)");
    m.def(
        "coll_allocator_enabled",
        [](py::object group) {
            if (group.is_none()) return collbench::CollAllocator::get().on();
            py::object b = collbench::coll_backend_of(group);
            if (b.is_none()) return false;
            return collbench::CollAllocator::get().on(b.cast<collbench::ProcessGroupColl*>());
        },
        py::arg("group") = py::none(), "whether the coll allocator is on (for that group)");
    m.def("is_coll_memory", &collbench::is_coll_memory, py::arg("tensor"),
          "whether the tensor's storage is coll_alloc memory (empty() or the coll allocator)");
    // Tests: a round trip through c10's raw interface, which oneDNN uses.
    m.def("_raw_allocate", [](int64_t n) {
        return reinterpret_cast<uintptr_t>(
            c10::GetAllocator(c10::DeviceType::CPU)->raw_allocate((size_t)n));
    });
    m.def("_raw_deallocate", [](uintptr_t p) {
        c10::GetAllocator(c10::DeviceType::CPU)->raw_deallocate(reinterpret_cast<void*>(p));
    });
    m.def("_is_coll_block", [](uintptr_t p) {
        std::lock_guard<std::mutex> l(collbench::blocks().mu);
        return collbench::blocks().live.count(reinterpret_cast<void*>(p)) > 0;
    });

    // A forked child must leave the parent's shared heap alone.
    pthread_atfork(nullptr, nullptr, []() { collbench::g_forked_child = true; });
    // Destroying the allocator's group (or all groups) switches back first, so
    // that no new memory comes from a communicator torch has let go of; at
    // exit, likewise before the interpreter frees its objects.
    py::dict scope;
    scope["before"] = py::cpp_function([](py::object group, bool all) {
        auto& a = collbench::CollAllocator::get();
        if (all) {
            a.uninstall();
            return;
        }
        py::object b = collbench::coll_backend_of(group);
        if (!b.is_none() && a.on(b.cast<collbench::ProcessGroupColl*>())) a.uninstall();
    });
    scope["uninstall"] = m.attr("use_default_allocator");
    py::exec(R"(
import atexit, functools
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d
atexit.register(uninstall)
_orig = c10d.destroy_process_group
@functools.wraps(_orig)
def destroy_process_group(group=None):
    before(group, group is None or group is c10d.GroupMember.WORLD)
    return _orig(group)
c10d.destroy_process_group = destroy_process_group
dist.destroy_process_group = destroy_process_group
)",
             scope);

    // torch 2 asks which devices a backend serves (else it assumes CPU and CUDA).
    py::object backend = dist.attr("Backend");
    if (!py::hasattr(backend, "COLL")) {
#if COLL_TORCH2
        std::vector<std::string> devices{"cpu"};
        backend.attr("register_backend")("coll", m.attr("create_process_group"),
                                         py::arg("devices") = devices);
#else
        backend.attr("register_backend")("coll", m.attr("create_process_group"));
#endif
    }
}
