// collbench_torch: a torch.distributed process-group backend named "coll",
// one thin layer over libcoll's public API (include/coll.h). See docs/TORCH.md.
//
// The declarations its files share (private to bindings/torch):
//   module.cpp              the Python module, the backend's registration
//   ProcessGroupColl.cpp    a group's life: rendezvous on torch's store, the
//                           completion thread, destruction
//   work.cpp                WorkColl: an operation, its wait and its future
//   collectives.cpp         all_reduce (and coalesced), broadcast, reduce, barrier
//   collectives_gather.cpp  all_gather, reduce_scatter, all_to_all
//   p2p.cpp                 send/recv (P2PEngine), gather, scatter
//   allocator.cpp           coll_alloc blocks, empty(), the opt-in CPU allocator
//   trace.cpp               TraceRecorder: COLL_TRACE's file of every call
//
// Builds against torch 1.13 (Debian 12) and torch 2.x (Debian 13): the one
// version switch is the block below.
#pragma once

#include <torch/extension.h>
#include <torch/version.h>
#include <torch/csrc/distributed/c10d/ParamCommsUtils.hpp>
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
class P2PEngine;

// use_coll_allocator's default: below it, coll_alloc's page rounding and a
// registry entry cost more than a collective on the block could save.
static constexpr size_t kDefaultMinBytes = 64 * 1024;

// Set in a fork()ed child (DataLoader workers, os.fork): the child's copy of
// a communicator has no threads, and its shared heap is the parent's memory,
// so it must neither hand out nor free coll memory nor destroy the comm.
extern std::atomic<bool> g_forked_child; // allocator.cpp

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
// allocator.cpp
BlockTable& blocks();
bool release_block(void* p);
void allocator_from_env(const c10::intrusive_ptr<ProcessGroupColl>& pg);
// The deleter of every coll DataPtr; is_coll_memory() looks for it.
void coll_block_delete(void* p);
bool is_coll_memory(const at::Tensor& t);

// COLL_TRACE=DIR: every call of this process's coll groups, one JSON line
// each, in DIR/rank<R>.jsonl (R: the global rank; docs/DESIGN.md "Trace
// format"). One recorder per process; calls may come from any thread and
// complete on the completion thread or the P2PEngine's. (trace.cpp)
struct TraceGroup { // a group as a member sees it when it is made
    int global_rank = 0, world = 1;
    std::string name;           // torch's group name ("" when unknown)
    std::vector<int64_t> ranks; // global ranks in group-rank order
    std::string desc, torch_version;
};
struct TraceCall {
    std::string group;      // the group's id (TraceRecorder::join)
    const char* op;         // the format's op names
    const char* dtype;      // coll_dtype_name's
    const char* red;        // "" where the op has none
    int64_t count, in, out; // libcoll's count; this rank's input and output elements
    int root, peer;         // group ranks, -1 where the op has none
    std::vector<int64_t> in_splits, out_splits; // uneven all_to_all, elements per peer
    int64_t t0, t1 = 0;                         // CLOCK_MONOTONIC ns: made, completed
    int64_t cpu = -1;      // the calling thread's CPU ns since its previous call returned
    int64_t wait_cpu = -1; // the calling thread blocked when the call ended: its CPU ns since
                           // its latest call returned; -1: it was running (or unknown)
    pid_t tid = 0;         // the calling thread
    bool blocking = false; // completed on the calling thread (run inline)
    bool done = false;
};
class TraceRecorder {
  public:
    static TraceRecorder& get(); // never destroyed
    static int64_t now_ns();     // CLOCK_MONOTONIC
    // A call's entry on the calling thread: now_ns(); notes the thread's CPU
    // clock for begin() (the program's own work between calls).
    static int64_t enter_ns();
    bool on() const { return on_; }
    // A group made: the file opened at the first (TORCH_CHECK when DIR cannot
    // be written), the group's line; returns its id ("" when not recording).
    std::string join(const TraceGroup& g);
    // A group destroyed: its plan line where its communicator's probes
    // decided something (coll_comm_plan: the replay runs the same plan);
    // the last one completes the file.
    void leave(const std::string& id = "", const std::string& plan = "");
    // A call made, on the calling thread once it returns (c.t0: enter_ns's):
    // its sequence number, or -1 when not recording.
    int64_t begin(TraceCall c);
    // Its Work completed (peer: a receive from any source's sender).
    void end(int64_t seq, int peer = -1);
    void finish(); // the footer and the rename (also at exit)

  private:
    TraceRecorder();
    bool mine_locked() const;
    void open_locked(const TraceGroup& g);
    void reopen_locked();
    void write_done_locked(bool all);
    void put_locked(const std::string& s);
    void flush_locked();
    void finish_locked();

    // Whether the calling thread was blocked (waiting) when a call ended.
    int64_t caller_wait_cpu() const;

    std::atomic<bool> on_{false};
    // The thread that made the latest call, read by the completion threads:
    // its id, CPU clock, CPU time when that call returned, and whether it is
    // inside a call now (then blocked means in that call, not waiting).
    std::atomic<pid_t> caller_tid_{0};
    std::atomic<clockid_t> caller_clock_{0};
    std::atomic<int64_t> caller_return_cpu_{-1};
    std::atomic<bool> caller_inside_{false};
    std::string dir_, tmp_, final_;
    size_t cap_ = 0; // COLL_TRACE_MAX_BYTES
    std::mutex mu_;  // everything below
    int fd_ = -1;
    pid_t pid_ = 0; // the opener's: a fork()ed child leaves the file alone
    int rank_ = 0;
    int live_groups_ = 0;
    std::unordered_map<std::string, int> same_set_;             // groups made per rank set
    std::unordered_map<std::string, std::vector<int64_t>> ids_; // group ids written
    std::deque<TraceCall> calls_;                               // made, not yet written
    int64_t next_seq_ = 0, written_ = 0, lines_ = 0, last_t1_ = 0;
    std::string buf_;
    size_t bytes_ = 0, footer_at_ = 0;
    bool truncated_ = false, finished_ = false, write_failed_ = false;
};

// torch's profiler: a record_param_comms event around each call, as gloo's
// and NCCL's (ParamCommsUtils.hpp). torch 2.x: with the group's name and
// global ranks (start and stride, as NCCL: -1 when not strided) and the
// tensors; torch 1.13's macro takes the sizes and dtype only. Used inside
// ProcessGroupColl's methods; declares locals named paramCommsInfo and g.
static const std::vector<int64_t> kNoSplits;
#if COLL_TORCH2
#define COLL_PARAM_COMMS_AT(at, name, ins, outs, in_n, out_n, dtype, in_sp, out_sp)               \
    RECORD_PARAM_COMMS_DATA(std::make_tuple((int64_t)++prof_seq_, false),                         \
                            std::make_tuple(pg_name_, pg_desc_), ins, outs, (int)(at), name,      \
                            (int64_t)(in_n), (int64_t)(out_n), dtype, in_sp, out_sp, rank_start_, \
                            rank_stride_, size_)
#else
#define COLL_PARAM_COMMS_AT(at, name, ins, outs, in_n, out_n, dtype, in_sp, out_sp) \
    RECORD_PARAM_COMMS((int)(at), name, (int)(in_n), (int)(out_n), dtype, in_sp, out_sp)
#endif
// The event's "Rank" is what NCCL puts there: the root's group rank for
// broadcast, reduce, gather and scatter, the peer's for send and recv
// (COLL_PARAM_COMMS_AT), this rank's for the others; profiler-trace importers
// (collbench trace import) read it so.
#define COLL_PARAM_COMMS(name, ins, outs, in_n, out_n, dtype, in_sp, out_sp) \
    COLL_PARAM_COMMS_AT(rank_, name, ins, outs, in_n, out_n, dtype, in_sp, out_sp)

// collectives.cpp: torch's dtypes and reduce ops as libcoll's, and the checks
// every operation makes of its tensors.
coll_dtype to_coll_dtype(const at::Tensor& t, const char* what);
coll_dtype move_dtype(const at::Tensor& t, const char* what);
coll_op to_coll_op(const c10d::ReduceOp& op, coll_dtype dt, const char* what);
void check_on_cpu(const at::Tensor& t, const char* what);
void check_cpu(const at::Tensor& t, const char* what);
void check_single(const std::vector<at::Tensor>& v, const char* what);

// A contiguous view of t, and whether it must be copied back afterwards.
struct Staged {
    at::Tensor user;
    at::Tensor buf;
    bool copy_back;
};
Staged stage(const at::Tensor& t);

// work.cpp
std::string coll_failure(coll_comm* comm, const std::string& what, int rc);
// The group whose completion thread this is (complete_loop), else null.
extern thread_local const ProcessGroupColl* t_completer_of;

// One operation. A blocking one is complete when made; a libcoll request, or
// a Work standing for earlier ones (deps: allreduce_coalesced), is completed
// by its group's completion thread, the only thread that waits on requests,
// so that wait(timeout), exception() and is_success() never block behind it.
// A send or recv (p2p) is completed by the group's P2PEngine when it runs.
// (work.cpp)
class WorkColl : public c10d::Work {
  public:
    WorkColl(c10d::OpType type, std::string what, coll_comm* comm, coll_request* req, int rc,
             std::function<void()> finish, std::vector<at::Tensor> outputs,
             std::chrono::milliseconds timeout, std::vector<c10::intrusive_ptr<WorkColl>> deps = {},
             std::shared_ptr<P2PEngine> p2p = nullptr, int source = -1, int64_t trace_seq = -1);
    ~WorkColl() override;

    bool isCompleted() override;
    bool isSuccess() const override;
    std::exception_ptr exception() const override;
    std::vector<at::Tensor> result() override { return outputs_; }
    void synchronize() override {}
    int sourceRank() const override;
    bool wait(std::chrono::milliseconds timeout) override;
    c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
    void complete_request();
    void complete_p2p(std::exception_ptr e, int source);
    void settle_future();

  private:
    void run_p2p();
    void complete_here();
    void complete(int rc);
    void complete_locked(int rc);

    std::string what_;
    coll_comm* comm_;
    coll_request* req_;
    std::function<void()> finish_;
    std::vector<at::Tensor> outputs_;
    std::vector<c10::intrusive_ptr<WorkColl>> deps_;
    std::chrono::milliseconds timeout_;
    std::shared_ptr<P2PEngine> p2p_;
    int source_;
    int64_t trace_seq_; // TraceRecorder::begin's, -1: not recorded

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
// (p2p.cpp)
class P2PEngine {
  public:
    explicit P2PEngine(int size) : unexpected_((size_t)size) {}

    void attach(coll_comm* comm) { comm_ = comm; }
    void post(bool send, int peer, int64_t tag, Staged st, c10::intrusive_ptr<WorkColl> w);
    void run();
    void close();

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

    void run_locked(std::vector<Op>& ops);
    void check(int rc, const char* what);
    static std::string mismatch(const Op& r, int64_t bytes, int64_t dtype);
    bool exchange(Op* s, Op* r);
    bool take_kept(Op& r);

    std::mutex q_mu_; // pending_, closed_
    std::deque<Op> pending_;
    bool closed_ = false;
    std::mutex run_mu_; // one run at a time: comm_, unexpected_
    coll_comm* comm_ = nullptr;
    std::vector<std::deque<Msg>> unexpected_;
    uint64_t kept_ = 0; // messages kept so far: Msg::seq
};

// The backend: one libcoll communicator, the queue of its in-flight requests
// and the thread that completes them, its P2PEngine.
class ProcessGroupColl : public CollBase {
  public:
    // ProcessGroupColl.cpp
    ProcessGroupColl(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                     std::chrono::milliseconds timeout, const TraceGroup* group = nullptr);
    ~ProcessGroupColl() override;

    const std::string getBackendName() const override { return "coll"; }

    void setSequenceNumberForGroup() override;
    uint64_t getSequenceNumberForGroup() override { return seq_; } // 0: never set

    // allocator.cpp
    at::Tensor empty(std::vector<int64_t> sizes, at::ScalarType dtype);
    c10::DataPtr alloc_block(size_t bytes);
    static c10::DataPtr block_ptr(void* p);
    void* take_cached(size_t bytes);
    void free_block(void* p) { coll_free(comm_, p); }

    std::string libcollBackend() const { return coll_comm_backend(comm_); }

    // ProcessGroupColl.cpp
    static c10::intrusive_ptr<ProcessGroupColl> make(const c10::intrusive_ptr<c10d::Store>& store,
                                                     int rank, int size,
                                                     const std::chrono::duration<float>& timeout,
                                                     const TraceGroup* group = nullptr);
    static c10::intrusive_ptr<CollBase> create(const c10::intrusive_ptr<c10d::Store>& store,
                                               int rank, int size,
                                               const std::chrono::duration<float>& timeout);
    // torch's extended creator (register_backend(..., extended_api=True)):
    // the group's name and global ranks come with it (module.cpp)
    static c10::intrusive_ptr<CollBase> create_with_options(py::object opts, py::object pg_options);

    // collectives.cpp
    WorkPtr allreduce(std::vector<at::Tensor>& tensors,
                      const c10d::AllreduceOptions& opts) override;
    WorkPtr allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                const c10d::AllreduceCoalescedOptions& opts) override;
#if COLL_TORCH2
    WorkPtr allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                            std::vector<at::Tensor>& inputs,
                                            const c10d::AllgatherOptions& opts) override;
    WorkPtr reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                            std::vector<at::Tensor>& inputs,
                                            const c10d::ReduceScatterOptions& opts) override;
#endif
    WorkPtr broadcast(std::vector<at::Tensor>& tensors,
                      const c10d::BroadcastOptions& opts) override;
    WorkPtr reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override;

    // collectives_gather.cpp
    WorkPtr allgather(std::vector<std::vector<at::Tensor>>& outputs,
                      std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions& opts) override;
    WorkPtr allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                std::vector<at::Tensor>& inputs,
                                const c10d::AllgatherOptions& opts) override;
    WorkPtr _allgather_base(at::Tensor& output, at::Tensor& input,
                            const c10d::AllgatherOptions& opts) override;
    WorkPtr reduce_scatter(std::vector<at::Tensor>& outputs,
                           std::vector<std::vector<at::Tensor>>& inputs,
                           const c10d::ReduceScatterOptions& opts) override;
    WorkPtr _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                 const c10d::ReduceScatterOptions& opts) override;
    WorkPtr alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& outSplits,
                          std::vector<int64_t>& inSplits,
                          const c10d::AllToAllOptions& opts) override;

    // p2p.cpp
    WorkPtr send(std::vector<at::Tensor>& tensors, int dst, int tag) override;
    WorkPtr recv(std::vector<at::Tensor>& tensors, int src, int tag) override;
    WorkPtr recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
    WorkPtr gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                   const c10d::GatherOptions& opts) override;
    WorkPtr scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                    const c10d::ScatterOptions& opts) override;

    // collectives.cpp
    WorkPtr barrier(const c10d::BarrierOptions& opts) override;

  private:
    // collectives_gather.cpp
    static bool back_to_back(const std::vector<at::Tensor>& ts);

    // collectives.cpp
    static bool reduced_here(const at::Tensor& t, const c10d::ReduceOp& op);
    WorkPtr allreduce_one(std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts,
                          bool may_inline);
    WorkPtr allreduce_gathered(std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts,
                               int64_t t0);
    WorkPtr allreduce_sparse_coo(std::vector<at::Tensor>& tensors,
                                 const c10d::AllreduceOptions& opts, int64_t t0);
    WorkPtr standing_for(c10d::OpType type, const char* what,
                         std::vector<c10::intrusive_ptr<WorkColl>> works,
                         std::vector<at::Tensor> outputs, std::chrono::milliseconds timeout);
    static void check_pairs(const std::vector<at::Tensor>& outputs,
                            const std::vector<at::Tensor>& inputs, int64_t out_per, int64_t in_per,
                            const char* relation, const char* what);

    // p2p.cpp
    static void check_same(const std::vector<at::Tensor>& list, const at::Tensor& ref,
                           const char* what, const char* kind);

    // collectives.cpp
    void check_root(int64_t root, const char* what);

    // p2p.cpp
    void check_peer(int peer, const char* what);

    // collectives_gather.cpp
    std::vector<int64_t> splits_or_even(const std::vector<int64_t>& sp, const at::Tensor& t,
                                        const char* what);

    // collectives.cpp
    static std::function<void()> copy_back_fn(std::vector<Staged> st);
    WorkPtr make(c10d::OpType type, const char* what, int rc, coll_request* req,
                 std::function<void()> finish, std::vector<at::Tensor> outputs,
                 std::chrono::milliseconds timeout = ::kNoTimeout, int64_t trace_seq = -1);
    // The short path of a small call (COLL_TORCH_INLINE_BYTES): nothing of
    // the group in flight, no timeout of its own, at most inline_bytes_; then
    // the blocking libcoll call runs on the caller's thread and done() makes
    // its Work, complete, its error (if any) raised at wait() as a queued one's.
    bool runs_inline(size_t bytes, std::chrono::milliseconds timeout);
    WorkPtr done(c10d::OpType type, const char* what, int rc, std::function<void()> finish,
                 std::vector<at::Tensor> outputs, int64_t trace_seq);

    // trace.cpp: a call for COLL_TRACE's file. t0: trace_clock() at the
    // call's entry; the sequence number for its Work, -1 when not recording.
    int64_t trace_clock() const { return trace_id_.empty() ? 0 : TraceRecorder::enter_ns(); }
    int64_t traced(int64_t t0, const char* op, const char* dtype, const char* red, int64_t count,
                   int64_t in, int64_t out, int root = -1, int peer = -1,
                   std::vector<int64_t> in_splits = {}, std::vector<int64_t> out_splits = {});

    // p2p.cpp
    WorkPtr post_p2p(bool send, int peer, int tag, Staged st, c10d::OpType type,
                     std::vector<at::Tensor> tensors, int source, int64_t t0);

  public:
    // ProcessGroupColl.cpp
    void complete_through(const WorkColl* target);

  private:
    void enqueue(const c10::intrusive_ptr<WorkColl>& w);
    void rendezvous(const c10::intrusive_ptr<c10d::Store>& store,
                    std::chrono::milliseconds timeout);
    static std::string listen_address(c10::intrusive_ptr<c10d::Store> s);
    static int free_port();
    static std::string random_token();
    static std::vector<uint8_t> bytes(const std::string& s) {
        return std::vector<uint8_t>(s.begin(), s.end());
    }
    static std::string str(const std::vector<uint8_t>& v) {
        return std::string(v.begin(), v.end());
    }
    void shut_down(std::string* plan = nullptr);
    static std::string plan_of(coll_comm* comm);
    void complete_loop();
    void completed_one();
    static size_t inline_bytes_from_env();
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
    size_t in_flight_ = 0;    // enqueued, not yet completed (pending_ or being completed)
    size_t inline_bytes_ = 0; // runs_inline's size limit, 0: never inline
    bool stop_ = false;
    std::string trace_id_; // TraceRecorder's id of the group, "" when not recording
    // torch's profiler (COLL_PARAM_COMMS): the group's name and global ranks
    std::string pg_name_, pg_desc_;
    std::vector<int64_t> global_ranks_;
    std::atomic<int64_t> prof_seq_{0};
    int rank_start_ = 0, rank_stride_ = 1;
};

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
// (allocator.cpp)
class CollAllocator final : public c10::Allocator {
  public:
    c10::DataPtr allocate(size_t n) COLL_ALLOCATE_CONST override;
#if COLL_ALLOCATOR_COPY_DATA
    void copy_data(void* dest, const void* src, std::size_t count) const override {
        default_copy_data(dest, src, count);
    }
#endif
    // Fixed at registration (c10 wants the same answer every time): coll blocks
    // are found by address, the rest goes to the previous allocator's deleter.
    c10::DeleterFnPtr raw_deleter() const override { return prev_raw_ ? &raw_delete : nullptr; }

    void install(c10::intrusive_ptr<ProcessGroupColl> g, size_t min_bytes);
    void uninstall();
    bool on(const ProcessGroupColl* pg = nullptr) const;
    static CollAllocator& get();

  private:
    // Above the default allocator's 0.
    static constexpr uint8_t kPriority = 16;

    static size_t cache_cap();
    static void raw_delete(void* p);

    mutable std::mutex mu_;
    c10::intrusive_ptr<ProcessGroupColl> group_;
    std::atomic<size_t> min_bytes_{SIZE_MAX}; // SIZE_MAX: off
    c10::Allocator* prev_ = nullptr;
    c10::DeleterFnPtr prev_raw_ = nullptr;
    bool registered_ = false;
};

} // namespace collbench
