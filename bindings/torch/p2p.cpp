// collbench_torch: point-to-point: send/recv (P2PEngine: queued, run in pairs),
// gather and scatter.
// ProcessGroupColl.hpp has the declarations the files share; docs/TORCH.md.
#include "ProcessGroupColl.hpp"

namespace collbench {

void P2PEngine::post(bool send, int peer, int64_t tag, Staged st, c10::intrusive_ptr<WorkColl> w) {
    std::lock_guard<std::mutex> g(q_mu_);
    TORCH_CHECK(!closed_, "coll: ", send ? "send" : "recv", ": the group is destroyed");
    pending_.push_back(Op{send, peer, tag, std::move(st), std::move(w), nullptr});
}

// Runs every queued send and receive; each Work completes (an error stays in it).
void P2PEngine::run() {
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
void P2PEngine::close() {
    {
        std::lock_guard<std::mutex> g(q_mu_);
        closed_ = true;
    }
    run();
    std::lock_guard<std::mutex> r(run_mu_);
    comm_ = nullptr;
}

void P2PEngine::run_locked(std::vector<Op>& ops) {
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

void P2PEngine::check(int rc, const char* what) {
    if (rc != COLL_OK) throw std::runtime_error(coll_failure(comm_, what, rc));
}

std::string P2PEngine::mismatch(const Op& r, int64_t bytes, int64_t dtype) {
    return c10::str("coll: recv: rank ", r.peer, " sent ", bytes, " bytes of ",
                    static_cast<at::ScalarType>(dtype), " with tag ", r.tag,
                    " where this rank receives ", r.bytes(), " bytes of ", r.st.buf.scalar_type());
}

// Sends s whole to its peer while taking the next message from r's peer;
// true when that message was r's (else it is kept for a later receive).
bool P2PEngine::exchange(Op* s, Op* r) {
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
        check(coll_sendrecv(comm_, s ? ho : nullptr, s ? 4 : 0, s ? s->peer : -1, r ? hi : nullptr,
                            r ? 4 : 0, r ? r->peer : -1, COLL_INT64),
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
bool P2PEngine::take_kept(Op& r) {
    std::deque<Msg>* q = nullptr;
    std::deque<Msg>::iterator it{};
    int from = -1, lo = r.peer < 0 ? 0 : r.peer;
    int hi = r.peer < 0 ? (int)unexpected_.size() : r.peer + 1;
    for (int p = lo; p < hi; p++) {
        auto& pq = unexpected_[(size_t)p];
        auto m = std::find_if(pq.begin(), pq.end(), [&](const Msg& k) { return k.tag == r.tag; });
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

// Queued, not run: see P2PEngine (ProcessGroupColl.hpp). Any dtype (the bytes travel as they are).
WorkPtr ProcessGroupColl::send(std::vector<at::Tensor>& tensors, int dst, int tag) {
    const int64_t t0 = trace_clock();
    check_single(tensors, "send");
    check_peer(dst, "send");
    COLL_PARAM_COMMS_AT(dst, "send", tensors, tensors, tensors[0].numel(), tensors[0].numel(),
                        tensors[0].scalar_type(), kNoSplits, kNoSplits);
    Staged s = stage(tensors[0]); // a copy now if not contiguous: the data as of the call
    s.copy_back = false;
    return post_p2p(true, dst, tag, s, c10d::OpType::SEND, tensors, -1, t0);
}

WorkPtr ProcessGroupColl::recv(std::vector<at::Tensor>& tensors, int src, int tag) {
    const int64_t t0 = trace_clock();
    check_single(tensors, "recv");
    check_peer(src, "recv");
    COLL_PARAM_COMMS_AT(src, "recv", tensors, tensors, tensors[0].numel(), tensors[0].numel(),
                        tensors[0].scalar_type(), kNoSplits, kNoSplits);
    return post_p2p(false, src, tag, stage(tensors[0]), c10d::OpType::RECV, tensors, src, t0);
}

// recv(src=None): queued as a receive from peer -1; the Work's
// sourceRank() says who sent once it ran (P2PEngine).
WorkPtr ProcessGroupColl::recvAnysource(std::vector<at::Tensor>& tensors, int tag) {
    const int64_t t0 = trace_clock();
    check_single(tensors, "recvAnySource");
    COLL_PARAM_COMMS("recvAnySource", tensors, tensors, tensors[0].numel(), tensors[0].numel(),
                     tensors[0].scalar_type(), kNoSplits, kNoSplits);
    return post_p2p(false, -1, tag, stage(tensors[0]), c10d::OpType::RECVANYSOURCE, tensors, -1,
                    t0);
}

// gather and scatter: the root exchanges with each rank in turn (blocking
// coll_send / coll_recv; libcoll has no rooted gather or scatter).
WorkPtr ProcessGroupColl::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                 std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) {
    const int64_t t0 = trace_clock();
    check_single(inputs, "gather");
    check_root(opts.rootRank, "gather");
    p2p_->run(); // queued sends and receives first: they share the pairs' streams
    const at::Tensor& in = inputs[0];
    coll_dtype dt = move_dtype(in, "gather");
    int root = (int)opts.rootRank;
    int64_t n = in.numel(), out_n = rank_ == root ? n * size_ : 0;
    COLL_PARAM_COMMS_AT(root, "gather", inputs, inputs, n, out_n, in.scalar_type(), kNoSplits,
                        kNoSplits);
    if (rank_ != root) {
        TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                    "coll: gather: only the root (rank ", root, ") passes a gather list");
        at::Tensor src = in.contiguous();
        int rc = coll_send(comm_, src.data_ptr(), (size_t)src.numel(), dt, root);
        return make(c10d::OpType::GATHER, "gather", rc, nullptr, nullptr, inputs, ::kNoTimeout,
                    traced(t0, "gather", coll_dtype_name(dt), "", n, n, out_n, root));
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
    return make(c10d::OpType::GATHER, "gather", rc, nullptr, nullptr, outs, ::kNoTimeout,
                traced(t0, "gather", coll_dtype_name(dt), "", n, n, out_n, root));
}

WorkPtr ProcessGroupColl::scatter(std::vector<at::Tensor>& outputs,
                                  std::vector<std::vector<at::Tensor>>& inputs,
                                  const c10d::ScatterOptions& opts) {
    const int64_t t0 = trace_clock();
    check_single(outputs, "scatter");
    check_root(opts.rootRank, "scatter");
    p2p_->run();
    at::Tensor& out = outputs[0];
    coll_dtype dt = move_dtype(out, "scatter");
    int root = (int)opts.rootRank;
    int64_t n = out.numel(), in_n = rank_ == root ? n * size_ : 0;
    COLL_PARAM_COMMS_AT(root, "scatter", outputs, outputs, in_n, n, out.scalar_type(), kNoSplits,
                        kNoSplits);
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
    return make(c10d::OpType::SCATTER, "scatter", rc, nullptr, copy_back_fn({st}), outputs,
                ::kNoTimeout, traced(t0, "scatter", coll_dtype_name(dt), "", n, in_n, n, root));
}

// Every tensor of a gather/scatter list: CPU, ref's element count and dtype.
void ProcessGroupColl::check_same(const std::vector<at::Tensor>& list, const at::Tensor& ref,
                                  const char* what, const char* kind) {
    for (auto& t : list) {
        check_cpu(t, what);
        TORCH_CHECK(t.numel() == ref.numel() && t.scalar_type() == ref.scalar_type(),
                    "coll: ", what, ": every ", kind, " tensor must have ", ref.numel(),
                    " elements of dtype ", ref.scalar_type());
    }
}

void ProcessGroupColl::check_peer(int peer, const char* what) {
    TORCH_CHECK(peer >= 0 && peer < size_ && peer != rank_, "coll: ", what, ": peer rank ", peer,
                " is out of range or this rank itself (world size ", size_, ")");
}

// The dtype a send or receive is traced in, and *n its count: libcoll's
// (bool as uint8), else uint8 and bytes (complex and the like).
static const char* traced_dtype(const at::Tensor& t, int64_t* n) {
    switch (t.scalar_type()) {
    case at::kFloat:
    case at::kDouble:
    case at::kHalf:
    case at::kBFloat16:
    case at::kChar:
    case at::kByte:
    case at::kInt:
    case at::kLong:
    case at::kBool: *n = t.numel(); return coll_dtype_name(move_dtype(t, "send/recv"));
    default: *n = (int64_t)t.nbytes(); return "uint8";
    }
}

// A receive from any source gets its peer in the trace when it completes.
WorkPtr ProcessGroupColl::post_p2p(bool send, int peer, int tag, Staged st, c10d::OpType type,
                                   std::vector<at::Tensor> tensors, int source, int64_t t0) {
    const char* what = send ? "send" : peer < 0 ? "recvAnySource" : "recv";
    int64_t seq = -1;
    if (!trace_id_.empty()) {
        int64_t n = 0;
        const char* dt = traced_dtype(st.buf, &n);
        seq = traced(t0, send ? "send" : "recv", dt, "", n, send ? n : 0, send ? 0 : n, -1, peer);
    }
    auto w = c10::make_intrusive<WorkColl>(
        type, what, comm_, nullptr, COLL_OK, nullptr, std::move(tensors), ::kNoTimeout,
        std::vector<c10::intrusive_ptr<WorkColl>>{}, p2p_, source, seq);
    try {
        p2p_->post(send, peer, tag, std::move(st), w);
    } catch (...) {
        TraceRecorder::get().end(seq); // never made: its line must not hold the file back
        throw;
    }
    return w;
}

} // namespace collbench
