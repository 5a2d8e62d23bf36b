// collbench_torch: the gathering collectives: all_gather (and
// coalesced, into one tensor), reduce_scatter (and from one tensor),
// all_to_all_single.
// ProcessGroupColl.hpp has the declarations the files share; docs/TORCH.md.
#include "ProcessGroupColl.hpp"

namespace collbench {

WorkPtr ProcessGroupColl::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                    std::vector<at::Tensor>& inputs,
                                    const c10d::AllgatherOptions& opts) {
    const int64_t t0 = trace_clock();
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
    COLL_PARAM_COMMS("all_gather", inputs, outs, n, n * size_, in.scalar_type(), kNoSplits,
                     kNoSplits);
    int64_t seq = traced(t0, "allgather", coll_dtype_name(dt), "", n, n, n * size_);
    coll_request* req = nullptr;
    if (back_to_back(outs)) { // e.g. out.chunk(world_size): straight into them
        int rc = coll_iallgather(comm_, src.data_ptr(), outs[0].data_ptr(), (size_t)n, dt, &req);
        return make(
            c10d::OpType::ALLGATHER, "all_gather", rc, req, [src]() {}, outs, opts.timeout, seq);
    }
    at::Tensor flat = at::empty({(int64_t)size_ * n}, in.options());
    int rc = coll_iallgather(comm_, src.data_ptr(), flat.data_ptr(), (size_t)n, dt, &req);
    auto finish = [outs, flat, src, n]() mutable {
        for (size_t r = 0; r < outs.size(); r++)
            outs[r].copy_(flat.narrow(0, (int64_t)r * n, n).view(outs[r].sizes()));
    };
    return make(c10d::OpType::ALLGATHER, "all_gather", rc, req, finish, outs, opts.timeout, seq);
}

// outputs[r][i] gets rank r's inputs[i]: every input as bytes in one
// buffer, one all_gather (any dtypes, bool included), copied out at the end.
WorkPtr ProcessGroupColl::allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                              std::vector<at::Tensor>& inputs,
                                              const c10d::AllgatherOptions& opts) {
    const int64_t t0 = trace_clock();
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
    COLL_PARAM_COMMS("all_gather_coalesced", inputs, inputs, n, n * size_, at::kByte, kNoSplits,
                     kNoSplits);
    at::Tensor all = at::empty({(int64_t)size_ * n}, src.options());
    coll_request* req = nullptr;
    int rc = coll_iallgather(comm_, src.data_ptr(), all.data_ptr(), (size_t)n, COLL_UINT8, &req);
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
    return make(c10d::OpType::ALLGATHER_COALESCED, what, rc, req, finish, flat_outs, opts.timeout,
                traced(t0, "allgather", "uint8", "", n, n, n * size_));
}

WorkPtr ProcessGroupColl::_allgather_base(at::Tensor& output, at::Tensor& input,
                                          const c10d::AllgatherOptions& opts) {
    const int64_t t0 = trace_clock();
    check_cpu(input, "all_gather_into_tensor");
    check_cpu(output, "all_gather_into_tensor");
    TORCH_CHECK(
        output.numel() == input.numel() * size_ && output.scalar_type() == input.scalar_type(),
        "coll: all_gather_into_tensor: output must hold world_size x input elements "
        "of the input's dtype");
    coll_dtype dt = move_dtype(input, "all_gather_into_tensor");
    int64_t n = input.numel();
    COLL_PARAM_COMMS("_allgather_base", input, output, n, n * size_, input.scalar_type(), kNoSplits,
                     kNoSplits);
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
    return make(c10d::OpType::_ALLGATHER_BASE, "all_gather_into_tensor", rc, req, finish, {output},
                opts.timeout, traced(t0, "allgather", coll_dtype_name(dt), "", n, n, n * size_));
}

WorkPtr ProcessGroupColl::reduce_scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ReduceScatterOptions& opts) {
    const int64_t t0 = trace_clock();
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
    int64_t n = out.numel();
    COLL_PARAM_COMMS("reduce_scatter", inputs[0], outputs, n * size_, n, out.scalar_type(),
                     kNoSplits, kNoSplits);
    std::vector<at::Tensor> flats;
    for (auto& i : inputs[0]) flats.push_back(i.reshape({-1}));
    at::Tensor flat = at::cat(flats);
    Staged s = stage(out);
    coll_request* req = nullptr;
    int rc = coll_ireducescatter(comm_, flat.data_ptr(), s.buf.data_ptr(), (size_t)out.numel(), dt,
                                 op, &req);
    auto cb = copy_back_fn({s});
    auto finish = [flat, cb]() {
        if (cb) cb();
    };
    return make(
        c10d::OpType::REDUCE_SCATTER, "reduce_scatter", rc, req, finish, outputs, opts.timeout,
        traced(t0, "reducescatter", coll_dtype_name(dt), coll_op_name(op), n, n * size_, n));
}

WorkPtr ProcessGroupColl::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                               const c10d::ReduceScatterOptions& opts) {
    const int64_t t0 = trace_clock();
    check_cpu(input, "reduce_scatter_tensor");
    check_cpu(output, "reduce_scatter_tensor");
    TORCH_CHECK(
        input.numel() == output.numel() * size_ && output.scalar_type() == input.scalar_type(),
        "coll: reduce_scatter_tensor: input must hold world_size x output elements "
        "of the output's dtype");
    coll_dtype dt = to_coll_dtype(output, "reduce_scatter_tensor");
    coll_op op = to_coll_op(opts.reduceOp, dt, "reduce_scatter_tensor");
    int64_t n = output.numel();
    COLL_PARAM_COMMS("_reduce_scatter_base", input, output, n * size_, n, output.scalar_type(),
                     kNoSplits, kNoSplits);
    at::Tensor src = input.contiguous();
    Staged s = stage(output);
    coll_request* req = nullptr;
    int rc = coll_ireducescatter(comm_, src.data_ptr(), s.buf.data_ptr(), (size_t)output.numel(),
                                 dt, op, &req);
    auto cb = copy_back_fn({s});
    auto finish = [src, cb]() {
        if (cb) cb();
    };
    return make(
        c10d::OpType::_REDUCE_SCATTER_BASE, "reduce_scatter_tensor", rc, req, finish, {output},
        opts.timeout,
        traced(t0, "reducescatter", coll_dtype_name(dt), coll_op_name(op), n, n * size_, n));
}

WorkPtr ProcessGroupColl::alltoall_base(at::Tensor& output, at::Tensor& input,
                                        std::vector<int64_t>& outSplits,
                                        std::vector<int64_t>& inSplits,
                                        const c10d::AllToAllOptions& /*opts*/) {
    const int64_t t0 = trace_clock();
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
    // The profiler's splits are torch's (rows), the trace's elements.
    COLL_PARAM_COMMS("all_to_all", input, output, input.numel(), output.numel(),
                     input.scalar_type(), inSplits, outSplits);
    std::vector<int64_t> in_el, out_el;
    int rc;
    if (inSplits.empty() && outSplits.empty()) {
        // torch splits dimension 0 (rows), as gloo does
        int64_t rows = input.dim() ? input.size(0) : 1;
        TORCH_CHECK(input.numel() == output.numel() && rows % size_ == 0, "coll: ", what,
                    ": input and output must have the same size, the first dimension (", rows,
                    ") divisible by the world size ", size_);
        rc = coll_alltoall(comm_, src.data_ptr(), s.buf.data_ptr(), (size_t)(input.numel() / size_),
                           dt);
    } else {
        // Uneven splits: libcoll's pairwise exchanges (coll_alltoallv), in elements
        p2p_->run();
        std::vector<int64_t> is = splits_or_even(inSplits, input, what);
        std::vector<int64_t> os = splits_or_even(outSplits, output, what);
        TORCH_CHECK(row_in == row_out, "coll: ", what, ": rows of input and output differ");
        std::vector<size_t> sc(size_), rcnt(size_);
        int64_t in_sum = 0, out_sum = 0;
        for (int r = 0; r < size_; r++) {
            in_el.push_back(is[r] * row_in);
            out_el.push_back(os[r] * row_out);
            sc[r] = (size_t)in_el.back();
            rcnt[r] = (size_t)out_el.back();
            in_sum += in_el.back();
            out_sum += out_el.back();
        }
        TORCH_CHECK(in_sum == input.numel() && out_sum == output.numel(), "coll: ", what,
                    ": split sizes do not add up to the tensors' first dimension");
        rc = coll_alltoallv(comm_, src.data_ptr(), sc.data(), s.buf.data_ptr(), rcnt.data(), dt);
    }
    // uneven: count is the even share, the splits say what each peer got
    return make(c10d::OpType::ALLTOALL_BASE, what, rc, nullptr, copy_back_fn({s}), {output},
                ::kNoTimeout,
                traced(t0, "alltoall", coll_dtype_name(dt), "", input.numel() / size_,
                       input.numel(), output.numel(), -1, -1, in_el, out_el));
}

// True when the tensors are contiguous and follow each other in memory.
bool ProcessGroupColl::back_to_back(const std::vector<at::Tensor>& ts) {
    const char* next = nullptr;
    for (auto& t : ts) {
        if (!t.is_contiguous()) return false;
        const char* p = static_cast<const char*>(t.data_ptr());
        if (next && p != next) return false;
        next = p + t.nbytes();
    }
    return true;
}

std::vector<int64_t> ProcessGroupColl::splits_or_even(const std::vector<int64_t>& sp,
                                                      const at::Tensor& t, const char* what) {
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

} // namespace collbench
