// collbench_torch: a group's life: its libcoll communicator made by a
// rendezvous on torch's store, the completion thread, the sequence number,
// destruction.
// ProcessGroupColl.hpp has the declarations the files share; docs/TORCH.md.
#include "ProcessGroupColl.hpp"

namespace collbench {

ProcessGroupColl::ProcessGroupColl(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                   std::chrono::milliseconds timeout, const TraceGroup* group)
    : CollBase(rank, size), store_(store), p2p_(std::make_shared<P2PEngine>(size)) {
    // Made by the Python constructor, not by torch: its own world.
    TraceGroup own;
    if (!group) {
        own.global_rank = rank;
        own.world = size;
        for (int r = 0; r < size; r++) own.ranks.push_back(r);
        group = &own;
    }
    pg_name_ = group->name;
    pg_desc_ = group->desc;
    global_ranks_ = group->ranks;
    rank_start_ = global_ranks_.empty() ? 0 : (int)global_ranks_[0];
    rank_stride_ = global_ranks_.size() > 1 ? (int)(global_ranks_[1] - global_ranks_[0]) : 0;
    for (size_t i = 1; i < global_ranks_.size(); i++)
        if (global_ranks_[i] - global_ranks_[i - 1] != rank_stride_) rank_stride_ = -1;
    // Before the rendezvous: an unwritable COLL_TRACE fails here, at once.
    trace_id_ = TraceRecorder::get().join(*group);
    try {
        rendezvous(store, timeout);
    } catch (...) {
        if (!trace_id_.empty()) TraceRecorder::get().leave();
        throw;
    }
    p2p_->attach(comm_);
    inline_bytes_ = inline_bytes_from_env();
    completer_ = std::thread([this]() { complete_loop(); });
}

ProcessGroupColl::~ProcessGroupColl() {
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
        std::string plan = plan_of(comm_);
        coll_comm_destroy(comm_);
        if (!trace_id_.empty()) TraceRecorder::get().leave(trace_id_, plan);
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
    std::string plan;
    if (Py_IsInitialized() && PyGILState_Check()) {
        py::gil_scoped_release nogil;
        shut_down(&plan);
    } else {
        shut_down(&plan);
    }
    // Every Work of the group has completed: its calls are in the file.
    if (!trace_id_.empty()) TraceRecorder::get().leave(trace_id_, plan);
}

// One number the whole group agrees on, as gloo's: rank 0 draws it and
// publishes it on torch's store. torch's ProcessGroupWrapper
// (TORCH_DISTRIBUTED_DEBUG=DETAIL wraps plugins too) sets it when it wraps
// the group and puts it in every collective's fingerprint.
void ProcessGroupColl::setSequenceNumberForGroup() {
    std::string key = "coll/seq/" + std::to_string(seq_sets_++);
    if (rank_ == 0) {
        std::random_device rd;
        seq_ = 1 + ((uint64_t)rd() << 16 ^ rd());
        store_->set(key, bytes(std::to_string(seq_)));
    } else {
        seq_ = std::stoull(str(store_->get(key)));
    }
}

// A group, with the allocator turned on when COLL_TORCH_ALLOCATOR asks
// (torch's backend hook and the Python constructor both come here).
c10::intrusive_ptr<ProcessGroupColl> ProcessGroupColl::make(
    const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
    const std::chrono::duration<float>& timeout, const TraceGroup* group) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
    auto pg = c10::make_intrusive<ProcessGroupColl>(store, rank, size, ms, group);
    allocator_from_env(pg);
    return pg;
}

c10::intrusive_ptr<CollBase> ProcessGroupColl::create(const c10::intrusive_ptr<c10d::Store>& store,
                                                      int rank, int size,
                                                      const std::chrono::duration<float>& timeout) {
    return make(store, rank, size, timeout);
}

// torch hands an extended creator the group's name (equal on every member)
// and its global ranks (none: the default group, ranks 0..size-1); the
// world and the torch version are read while the GIL is held.
c10::intrusive_ptr<CollBase> ProcessGroupColl::create_with_options(py::object opts,
                                                                   py::object /*pg_options*/) {
    auto store = opts.attr("store").cast<c10::intrusive_ptr<c10d::Store>>();
    int rank = opts.attr("group_rank").cast<int>();
    int size = opts.attr("group_size").cast<int>();
    auto timeout = opts.attr("timeout").cast<std::chrono::duration<float>>();
    TraceGroup g;
    g.name = opts.attr("group_id").cast<std::string>();
    g.ranks = opts.attr("global_ranks_in_group").cast<std::vector<int64_t>>();
    bool is_default = g.ranks.empty();
    if (is_default)
        for (int r = 0; r < size; r++) g.ranks.push_back(r);
    TORCH_CHECK((int)g.ranks.size() == size && rank >= 0 && rank < size, "coll: torch gave ",
                g.ranks.size(), " global ranks for a group of ", size);
    g.global_rank = (int)g.ranks[(size_t)rank];
    g.desc = is_default ? "default_pg" : "new_group";
    py::object dist = py::module::import("torch.distributed");
    // the default group, being made, is not initialized yet: it is the world
    g.world = !is_default && dist.attr("is_initialized")().cast<bool>()
                  ? dist.attr("get_world_size")().cast<int>()
                  : size;
    g.torch_version = py::str(py::module::import("torch").attr("__version__"));
    py::gil_scoped_release nogil;
    return make(store, rank, size, timeout, &g);
}

// Futures' callbacks (DDP comm hooks' then()) run on the completion thread,
// and one that runs another collective of the group and waits for it
// (PowerSGD's hook) would wait for itself: the completion thread, asked
// for a Work's future or to wait for it, completes the queue up to it here.
void ProcessGroupColl::complete_through(const WorkColl* target) {
    for (;;) {
        c10::intrusive_ptr<WorkColl> w;
        {
            std::lock_guard<std::mutex> g(qlk_);
            if (pending_.empty()) return;
            w = pending_.front();
            pending_.pop_front();
        }
        w->complete_request();
        completed_one();
        if (w.get() == target) return;
    }
}

void ProcessGroupColl::enqueue(const c10::intrusive_ptr<WorkColl>& w) {
    w->owner_ = this;
    std::lock_guard<std::mutex> g(qlk_);
    pending_.push_back(w);
    in_flight_++;
    qcv_.notify_one();
}

void ProcessGroupColl::completed_one() {
    std::lock_guard<std::mutex> g(qlk_);
    in_flight_--;
}

// Inline, a call costs the collective alone: the queued path hands it to
// libcoll's progress thread, which hands it to the completion thread, which
// wakes the caller in wait(): three wake-ups, each tens of microseconds on a
// busy machine. Only when nothing of the group is in flight (its calls still
// run and complete in call order; a future's callback on the completion
// thread takes the queued path), without a timeout of the call's own (the
// blocking call has the group's), and small: it returns only once every rank
// has joined, so an async_op=True call of this size no longer overlaps.
bool ProcessGroupColl::runs_inline(size_t bytes, std::chrono::milliseconds timeout) {
    if (bytes > inline_bytes_ || timeout.count() > 0) return false;
    std::lock_guard<std::mutex> g(qlk_);
    return in_flight_ == 0;
}

// COLL_TORCH_INLINE_BYTES: the largest inline call in bytes (0: none).
size_t ProcessGroupColl::inline_bytes_from_env() {
    static constexpr size_t kDefaultInlineBytes = 64 * 1024;
    const char* v = std::getenv("COLL_TORCH_INLINE_BYTES");
    if (!v || !*v) return kDefaultInlineBytes;
    char* end = nullptr;
    unsigned long long n = std::strtoull(v, &end, 10);
    if (*end != '\0' || v[0] == '-') {
        TORCH_WARN("coll: COLL_TORCH_INLINE_BYTES=", v, " is not a byte count; using ",
                   kDefaultInlineBytes);
        return kDefaultInlineBytes;
    }
    return (size_t)n;
}

// Rank 0 picks a free port and (without a user token) a random job token and
// publishes both on torch's store; every rank then joins libcoll's tcp://
// rendezvous on that port. Rank 0 publishes its own address (listen_address).
void ProcessGroupColl::rendezvous(const c10::intrusive_ptr<c10d::Store>& store,
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
    TORCH_CHECK(rc == COLL_OK, "coll: cannot create the libcoll communicator (backend ", backend,
                ", ", method, ", rank ", rank_, "/", size_, "): ", coll_last_create_error(), " [",
                coll_status_name(rc), "]");
    // Everyone is in: rank 0 may drop its keys (ignore stores without delete).
}

// The address this rank listens on, as libcoll picks it for its own
// transports (COLL_LISTEN_ADDR, COLL_SOCKET_IFNAME, else the interface that
// routes to the store's host): a subgroup's rank 0 may be on another host
// than MASTER_ADDR. The store's host is torch's TCPStore's, under its
// PrefixStores (tcp:// sets no MASTER_ADDR); else the environment's.
std::string ProcessGroupColl::listen_address(c10::intrusive_ptr<c10d::Store> s) {
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
    TORCH_CHECK(coll_listen_addr_for_store(store_host.c_str(), &pick, err, sizeof err) == COLL_OK,
                "coll: no address for this group's peers to reach: ", err);
    std::string a = pick.addr;
    return a.find(':') != std::string::npos ? "[" + a + "]" : a; // IPv6 in tcp://
}

int ProcessGroupColl::free_port() {
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

std::string ProcessGroupColl::random_token() {
    std::random_device rd;
    static const char hex[] = "0123456789abcdef";
    std::string s;
    for (int i = 0; i < 32; i++) s += hex[rd() & 15];
    return s;
}

// What the communicator's probes decided (coll_comm_plan), for the trace.
std::string ProcessGroupColl::plan_of(coll_comm* comm) {
    char buf[512];
    if (!comm || coll_comm_plan(comm, buf, sizeof buf) != COLL_OK) return "";
    return buf;
}

// Waits for the in-flight requests in call order and settles their futures;
// plan: what the communicator's probes decided, read before it goes.
void ProcessGroupColl::shut_down(std::string* plan) {
    if (completer_.joinable()) completer_.join();
    p2p_->close();
    if (plan) *plan = plan_of(comm_); // no call in flight now
    if (comm_) coll_comm_destroy(comm_);
    comm_ = nullptr;
}

void ProcessGroupColl::complete_loop() {
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
        completed_one();
        // The Work's tensors may hold the group's last reference (coll
        // blocks hold their group): then the destructor ran right here,
        // on this thread, and `this` is gone.
        w.reset();
        if (t_destroyed_own_group) return;
    }
}

thread_local bool ProcessGroupColl::t_destroyed_own_group = false;

} // namespace collbench
