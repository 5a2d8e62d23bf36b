// collbench_torch: coll_alloc memory for tensors: the block table, a
// group's empty(), the opt-in CPU allocator (use_coll_allocator).
// ProcessGroupColl.hpp has the declarations the files share; docs/TORCH.md.
#include "ProcessGroupColl.hpp"

namespace collbench {

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

std::atomic<bool> g_forked_child{false};

BlockTable& blocks() {
    static BlockTable* t = new BlockTable();
    return *t;
}

// The deleter of every coll DataPtr; is_coll_memory() looks for it.
void coll_block_delete(void* p) { release_block(p); }

// A tensor in this communicator's coll_alloc memory (shm: the shared heap,
// which peers read directly: no copy through the segment). The tensor
// keeps the group alive; the memory goes back with coll_free.
at::Tensor ProcessGroupColl::empty(std::vector<int64_t> sizes, at::ScalarType dtype) {
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
c10::DataPtr ProcessGroupColl::alloc_block(size_t bytes) {
    void* p = take_cached(bytes);
    if (p) return block_ptr(p);
    p = coll_alloc(comm_, bytes);
    if (!p) return c10::DataPtr();
    try {
        std::lock_guard<std::mutex> g(blocks().mu);
        blocks().live.emplace(
            p, BlockTable::Block{c10::intrusive_ptr<ProcessGroupColl>::reclaim_copy(this), bytes});
    } catch (...) { // out of memory for the entry: the caller falls back
        coll_free(comm_, p);
        return c10::DataPtr();
    }
    return block_ptr(p);
}

// A block's DataPtr: its context is its data, its deleter coll_block_delete.
c10::DataPtr ProcessGroupColl::block_ptr(void* p) {
    return c10::DataPtr(p, p, &coll_block_delete, c10::Device(c10::DeviceType::CPU));
}

// A cached block of this group of exactly bytes, back among the live ones; or null.
void* ProcessGroupColl::take_cached(size_t bytes) {
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

bool release_block(void* p) {
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

c10::DataPtr CollAllocator::allocate(size_t n) COLL_ALLOCATE_CONST {
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

void CollAllocator::install(c10::intrusive_ptr<ProcessGroupColl> g, size_t min_bytes) {
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
void CollAllocator::uninstall() {
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

bool CollAllocator::on(const ProcessGroupColl* pg) const {
    std::lock_guard<std::mutex> l(mu_);
    return group_ && (!pg || group_.get() == pg);
}

CollAllocator& CollAllocator::get() {
    static CollAllocator* a = new CollAllocator(); // never destroyed: storages point to it
    return *a;
}

// COLL_TORCH_ALLOCATOR_CACHE: bytes of freed blocks kept for reuse (1 GiB;
// 0: none). Read at each install.
size_t CollAllocator::cache_cap() {
    const char* v = std::getenv("COLL_TORCH_ALLOCATOR_CACHE");
    size_t cap = (size_t)1 << 30;
    TORCH_CHECK(!v || !*v || byte_count(v, &cap), "coll: COLL_TORCH_ALLOCATOR_CACHE='", v,
                "' is not a byte count");
    return cap;
}

void CollAllocator::raw_delete(void* p) {
    if (!release_block(p)) get().prev_raw_(p);
}

bool is_coll_memory(const at::Tensor& t) {
    return t.defined() && t.has_storage() &&
           t.storage().data_ptr().get_deleter() == &coll_block_delete;
}

// COLL_TORCH_ALLOCATOR=1: the first coll group created turns the allocator on
// (COLL_TORCH_ALLOCATOR_MIN: min_bytes, default 64 KiB), so that a script
// opts in without code changes. A failure is a warning, not a failed group.
void allocator_from_env(const c10::intrusive_ptr<ProcessGroupColl>& pg) {
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

} // namespace collbench
