// collbench_torch: the reducing collectives (all_reduce, its coalesced
// and torch 2 coalescing forms, reduce), broadcast, barrier, and what every
// collective shares: dtype and op conversion, checks, staging, making a Work.
// ProcessGroupColl.hpp has the declarations the files share; docs/TORCH.md.
#include "ProcessGroupColl.hpp"

namespace collbench {

coll_dtype to_coll_dtype(const at::Tensor& t, const char* what) {
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
coll_dtype move_dtype(const at::Tensor& t, const char* what) {
    return t.scalar_type() == at::kBool ? COLL_UINT8 : to_coll_dtype(t, what);
}

coll_op to_coll_op(const c10d::ReduceOp& op, coll_dtype dt, const char* what) {
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

void check_on_cpu(const at::Tensor& t, const char* what) {
    TORCH_CHECK(t.device().is_cpu(), "coll: ", what, ": only CPU tensors are supported, got a ",
                t.device(), " tensor (move it to CPU, or use the nccl backend)");
}

void check_cpu(const at::Tensor& t, const char* what) {
    check_on_cpu(t, what);
    TORCH_CHECK(!t.is_sparse(), "coll: ", what, ": sparse tensors are not supported");
}

void check_single(const std::vector<at::Tensor>& v, const char* what) {
    TORCH_CHECK(v.size() == 1, "coll: ", what, ": expects exactly one tensor per call, got ",
                v.size());
    check_cpu(v[0], what);
}

Staged stage(const at::Tensor& t) {
    if (t.is_contiguous()) return {t, t, false};
    return {t, t.contiguous(), true};
}

WorkPtr ProcessGroupColl::allreduce(std::vector<at::Tensor>& tensors,
                                    const c10d::AllreduceOptions& opts) {
    return allreduce_one(tensors, opts, true);
}

// may_inline: false for the parts of a coalesced call, whose Work must return
// before they complete (async_op=True overlaps; runs_inline would block).
WorkPtr ProcessGroupColl::allreduce_one(std::vector<at::Tensor>& tensors,
                                        const c10d::AllreduceOptions& opts, bool may_inline) {
    const int64_t t0 = trace_clock();
    if (tensors.size() == 1 && tensors[0].is_sparse())
        return allreduce_sparse_coo(tensors, opts, t0);
    check_single(tensors, "all_reduce");
    if (reduced_here(tensors[0], opts.reduceOp)) return allreduce_gathered(tensors, opts, t0);
    coll_dtype dt = to_coll_dtype(tensors[0], "all_reduce");
    coll_op op = to_coll_op(opts.reduceOp, dt, "all_reduce");
    int64_t n = tensors[0].numel();
    COLL_PARAM_COMMS("allreduce", tensors, tensors, n, n, tensors[0].scalar_type(), kNoSplits,
                     kNoSplits);
    Staged s = stage(tensors[0]);
    if (may_inline && runs_inline(s.buf.nbytes(), opts.timeout)) {
        int rc = coll_allreduce(comm_, s.buf.data_ptr(), s.buf.data_ptr(), (size_t)n, dt, op);
        return done(c10d::OpType::ALLREDUCE, "all_reduce", rc, copy_back_fn({s}), tensors,
                    traced(t0, "allreduce", coll_dtype_name(dt), coll_op_name(op), n, n, n));
    }
    coll_request* req = nullptr;
    int rc = coll_iallreduce(comm_, s.buf.data_ptr(), s.buf.data_ptr(), (size_t)n, dt, op, &req);
    return make(c10d::OpType::ALLREDUCE, "all_reduce", rc, req, copy_back_fn({s}), tensors,
                opts.timeout,
                traced(t0, "allreduce", coll_dtype_name(dt), coll_op_name(op), n, n, n));
}

WorkPtr ProcessGroupColl::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                              const c10d::AllreduceCoalescedOptions& opts) {
    // One after the other, on the ordered queue; a Work queued behind them
    // completes when they all have (the first error is its error).
    for (auto& t : tensors) {
        check_cpu(t, "all_reduce_coalesced");
        to_coll_op(opts.reduceOp, to_coll_dtype(t, "all_reduce_coalesced"), "all_reduce_coalesced");
    }
    std::vector<c10::intrusive_ptr<WorkColl>> works;
    for (auto& t : tensors) {
        std::vector<at::Tensor> one{t};
        c10d::AllreduceOptions o;
        o.reduceOp = opts.reduceOp;
        works.push_back(c10::static_intrusive_pointer_cast<WorkColl>(allreduce_one(one, o, false)));
    }
    return standing_for(c10d::OpType::ALLREDUCE_COALESCED, "all_reduce_coalesced", std::move(works),
                        tensors, opts.timeout);
}

#if COLL_TORCH2
// torch 2's coalescing manager (dist._coalescing_manager) on CPU: as
// all_reduce_coalesced, one operation per pair on the ordered queue and a
// Work standing for them. Every pair is checked before any is queued.
WorkPtr ProcessGroupColl::allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::AllgatherOptions& opts) {
    const char* what = "all_gather_into_tensor_coalesced";
    check_pairs(outputs, inputs, size_, 1, "world_size x", what);
    std::vector<c10::intrusive_ptr<WorkColl>> works;
    for (size_t i = 0; i < inputs.size(); i++)
        works.push_back(c10::static_intrusive_pointer_cast<WorkColl>(
            _allgather_base(outputs[i], inputs[i], opts)));
    return standing_for(c10d::OpType::COALESCED, what, std::move(works), outputs, opts.timeout);
}

WorkPtr ProcessGroupColl::reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::ReduceScatterOptions& opts) {
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

WorkPtr ProcessGroupColl::broadcast(std::vector<at::Tensor>& tensors,
                                    const c10d::BroadcastOptions& opts) {
    check_single(tensors, "broadcast");
    const int64_t t0 = trace_clock();
    check_root(opts.rootRank, "broadcast");
    coll_dtype dt = move_dtype(tensors[0], "broadcast");
    int64_t n = tensors[0].numel();
    COLL_PARAM_COMMS_AT(opts.rootRank, "broadcast", tensors, tensors, n, n,
                        tensors[0].scalar_type(), kNoSplits, kNoSplits);
    Staged s = stage(tensors[0]);
    if (runs_inline(s.buf.nbytes(), opts.timeout)) {
        int rc = coll_broadcast(comm_, s.buf.data_ptr(), s.buf.data_ptr(), (size_t)n, dt,
                                (int)opts.rootRank);
        return done(c10d::OpType::BROADCAST, "broadcast", rc, copy_back_fn({s}), tensors,
                    traced(t0, "broadcast", coll_dtype_name(dt), "", n, n, n, (int)opts.rootRank));
    }
    coll_request* req = nullptr;
    int rc = coll_ibroadcast(comm_, s.buf.data_ptr(), s.buf.data_ptr(), (size_t)n, dt,
                             (int)opts.rootRank, &req);
    return make(c10d::OpType::BROADCAST, "broadcast", rc, req, copy_back_fn({s}), tensors,
                opts.timeout,
                traced(t0, "broadcast", coll_dtype_name(dt), "", n, n, n, (int)opts.rootRank));
}

WorkPtr ProcessGroupColl::reduce(std::vector<at::Tensor>& tensors,
                                 const c10d::ReduceOptions& opts) {
    check_single(tensors, "reduce");
    const int64_t t0 = trace_clock();
    check_root(opts.rootRank, "reduce");
    coll_dtype dt = to_coll_dtype(tensors[0], "reduce");
    coll_op op = to_coll_op(opts.reduceOp, dt, "reduce");
    int64_t n = tensors[0].numel();
    COLL_PARAM_COMMS_AT(opts.rootRank, "reduce", tensors, tensors, n, n, tensors[0].scalar_type(),
                        kNoSplits, kNoSplits);
    Staged s = stage(tensors[0]);
    int rc = coll_reduce(comm_, s.buf.data_ptr(), s.buf.data_ptr(), (size_t)n, dt, op,
                         (int)opts.rootRank);
    return make(
        c10d::OpType::REDUCE, "reduce", rc, nullptr, copy_back_fn({s}), tensors, ::kNoTimeout,
        traced(t0, "reduce", coll_dtype_name(dt), coll_op_name(op), n, n, n, (int)opts.rootRank));
}

WorkPtr ProcessGroupColl::barrier(const c10d::BarrierOptions& /*opts*/) {
    const int64_t t0 = trace_clock();
    COLL_PARAM_COMMS("barrier", std::vector<at::Tensor>{}, std::vector<at::Tensor>{}, 0, 0,
                     at::kByte, kNoSplits, kNoSplits);
    int rc = coll_barrier(comm_);
    return make(c10d::OpType::BARRIER, "barrier", rc, nullptr, nullptr, {}, ::kNoTimeout,
                traced(t0, "barrier", "uint8", "", 0, 0, 0));
}

// bool, and the bitwise ops, which libcoll does not reduce: all-gathered,
// then reduced here (as gloo: sum and max of bools are or, product and min and).
bool ProcessGroupColl::reduced_here(const at::Tensor& t, const c10d::ReduceOp& op) {
    return t.scalar_type() == at::kBool || op.op_ == c10d::ReduceOp::BAND ||
           op.op_ == c10d::ReduceOp::BOR || op.op_ == c10d::ReduceOp::BXOR;
}

// Traced as what travels: an all_gather (of uint8 for bool).
WorkPtr ProcessGroupColl::allreduce_gathered(std::vector<at::Tensor>& tensors,
                                             const c10d::AllreduceOptions& opts, int64_t t0) {
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
    int64_t count = t.numel();
    COLL_PARAM_COMMS("allreduce", tensors, tensors, count, count, t.scalar_type(), kNoSplits,
                     kNoSplits);
    at::Tensor src = t.contiguous();
    at::Tensor all = at::empty({(int64_t)size_, src.numel()}, src.options());
    coll_request* req = nullptr;
    int rc = coll_iallgather(comm_, src.data_ptr(), all.data_ptr(), (size_t)src.numel(), dt, &req);
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
    return make(c10d::OpType::ALLREDUCE, "all_reduce", rc, req, finish, tensors, opts.timeout,
                traced(t0, "allgather", coll_dtype_name(dt), "", count, count, count * size_));
}

// A sparse (COO) tensor, summed as torch's gloo sums it: every rank's
// indices and values all-gathered (the counts first, then each padded to
// the largest), added here and coalesced into the caller's tensor. Blocking
// (two all_gathers whose sizes depend on each other); the Work is complete.
// Traced as the second, larger all_gather (bytes).
WorkPtr ProcessGroupColl::allreduce_sparse_coo(std::vector<at::Tensor>& tensors,
                                               const c10d::AllreduceOptions& opts, int64_t t0) {
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
        at::Tensor sum = at::sparse_coo_tensor(at::cat(is).t(), at::cat(vs).view(vshape), t.sizes(),
                                               val.options().layout(at::kSparse));
        t.copy_(sum.coalesce());
    }
    int64_t row_bytes = most * (ibytes + vbytes);
    return make(c10d::OpType::ALLREDUCE, what, rc, nullptr, nullptr, tensors, opts.timeout,
                traced(t0, "allgather", "uint8", "", row_bytes, row_bytes, row_bytes * size_));
}

// A Work queued behind works, complete when they all are (the first error is its error).
WorkPtr ProcessGroupColl::standing_for(c10d::OpType type, const char* what,
                                       std::vector<c10::intrusive_ptr<WorkColl>> works,
                                       std::vector<at::Tensor> outputs,
                                       std::chrono::milliseconds timeout) {
    auto w = c10::make_intrusive<WorkColl>(type, what, comm_, nullptr, COLL_OK, nullptr,
                                           std::move(outputs), timeout, std::move(works));
    enqueue(w);
    return w;
}

// Coalesced pairs: as many outputs as inputs, each pair CPU tensors of one
// dtype with output elements x in_per = input elements x out_per.
void ProcessGroupColl::check_pairs(const std::vector<at::Tensor>& outputs,
                                   const std::vector<at::Tensor>& inputs, int64_t out_per,
                                   int64_t in_per, const char* relation, const char* what) {
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

void ProcessGroupColl::check_root(int64_t root, const char* what) {
    TORCH_CHECK(root >= 0 && root < size_, "coll: ", what, ": root rank ", root,
                " is out of range [0, ", size_, ")");
}

std::function<void()> ProcessGroupColl::copy_back_fn(std::vector<Staged> st) {
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

WorkPtr ProcessGroupColl::make(c10d::OpType type, const char* what, int rc, coll_request* req,
                               std::function<void()> finish, std::vector<at::Tensor> outputs,
                               std::chrono::milliseconds timeout, int64_t trace_seq) {
    if (rc != COLL_OK) req = nullptr;
    auto w = c10::make_intrusive<WorkColl>(
        type, what, comm_, req, rc, std::move(finish), std::move(outputs), timeout,
        std::vector<c10::intrusive_ptr<WorkColl>>{}, nullptr, -1, trace_seq);
    if (!req && rc != COLL_OK) w->wait(::kNoTimeout); // blocking error: raise now
    if (req)
        enqueue(w);
    else
        w->settle_future();
    return w;
}

// A call that ran inline (runs_inline): complete, its future set; a failure
// raises at wait() and is the future's error, as a queued call's.
WorkPtr ProcessGroupColl::done(c10d::OpType type, const char* what, int rc,
                               std::function<void()> finish, std::vector<at::Tensor> outputs,
                               int64_t trace_seq) {
    auto w = c10::make_intrusive<WorkColl>(
        type, what, comm_, nullptr, rc, std::move(finish), std::move(outputs), ::kNoTimeout,
        std::vector<c10::intrusive_ptr<WorkColl>>{}, nullptr, -1, trace_seq);
    w->settle_future();
    return w;
}

} // namespace collbench
