// collbench_torch: WorkColl, one operation: its completion, wait() and future.
// ProcessGroupColl.hpp has the declarations the files share; docs/TORCH.md.
#include "ProcessGroupColl.hpp"

namespace collbench {

// A profiler name that lives as long as the process (RecordFunction keeps the pointer).
static const char* profiling_title(const char* what) {
    static std::mutex mu;
    static std::set<std::string>* titles = new std::set<std::string>();
    std::lock_guard<std::mutex> g(mu);
    return titles->insert(std::string("coll:") + what).first->c_str();
}

// libcoll's failure of a call, as the RuntimeError's text: its one-line
// message, the failed rank, the status.
std::string coll_failure(coll_comm* comm, const std::string& what, int rc) {
    const char* em = comm ? coll_comm_errmsg(comm) : "";
    std::string why = (em && *em) ? em : coll_strerror(rc);
    // " Timed out ", as torch's own backends say it (torch's tests look for it)
    if (rc == COLL_ETIMEDOUT) why = "Timed out (" + why + ")";
    std::string msg = "coll: " + what + " failed: " + why;
    int failed = comm ? coll_comm_failed_rank(comm) : -1;
    if (failed >= 0) msg += " (failed rank " + std::to_string(failed) + ")";
    return msg + " [" + coll_status_name(rc) + "]";
}

thread_local const ProcessGroupColl* t_completer_of = nullptr;

WorkColl::WorkColl(c10d::OpType type, std::string what, coll_comm* comm, coll_request* req, int rc,
                   std::function<void()> finish, std::vector<at::Tensor> outputs,
                   std::chrono::milliseconds timeout,
                   std::vector<c10::intrusive_ptr<WorkColl>> deps, std::shared_ptr<P2PEngine> p2p,
                   int source, int64_t trace_seq)
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
      trace_seq_(trace_seq),
      fut_(
          c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {
    if (!req_ && deps_.empty() && !p2p_) complete(rc);
}

WorkColl::~WorkColl() {
    if (req_) coll_wait(req_); // buffers must outlive the request
}

bool WorkColl::isCompleted() {
    std::lock_guard<std::mutex> g(lk_);
    return done_;
}

bool WorkColl::isSuccess() const {
    std::lock_guard<std::mutex> g(lk_);
    return done_ && !err_;
}

std::exception_ptr WorkColl::exception() const {
    std::lock_guard<std::mutex> g(lk_);
    return err_;
}

int WorkColl::sourceRank() const {
    std::lock_guard<std::mutex> g(lk_);
    TORCH_CHECK(source_ >= 0, "coll: ", what_,
                ": sourceRank() is a receive's only (from any source: once it completed)");
    return source_;
}

// timeout: Work.wait's, else the operation's (opts.timeout), else none.
// Running out raises; the operation stays in flight (as with gloo, the
// group should not be used again).
bool WorkColl::wait(std::chrono::milliseconds timeout) {
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
c10::intrusive_ptr<c10::ivalue::Future> WorkColl::getFuture() {
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
void WorkColl::complete_request() {
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
void WorkColl::complete_p2p(std::exception_ptr e, int source) {
    {
        std::lock_guard<std::mutex> g(lk_);
        if (source >= 0) source_ = source; // before complete_locked: the trace's peer
        complete_locked(COLL_OK);
        err_ = e;
    }
    done_cv_.notify_all();
    settle_future();
}

// Marks the future once (outside lk_: its callbacks may run inline).
void WorkColl::settle_future() {
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

void WorkColl::complete(int rc) {
    std::lock_guard<std::mutex> g(lk_);
    complete_locked(rc);
}

void WorkColl::complete_locked(int rc) {
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
    TraceRecorder::get().end(trace_seq_, source_); // COLL_TRACE's line gets its end
    trace_seq_ = -1;
}

void WorkColl::run_p2p() {
    if (p2p_) p2p_->run();
}

void WorkColl::complete_here() {
    if (owner_ && t_completer_of == owner_ && !isCompleted())
        const_cast<ProcessGroupColl*>(owner_)->complete_through(this);
}

} // namespace collbench
