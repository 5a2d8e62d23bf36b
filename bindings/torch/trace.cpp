// collbench_torch: the trace recorder (COLL_TRACE=DIR): every call of this
// process's coll groups as one JSON line in DIR/rank<R>.jsonl, the format of
// docs/DESIGN.md "Trace format". Lines are written in call order once each
// call's Work has completed (its end time is on the line); the file is
// .rank<R>.jsonl.tmp until its footer is written, then renamed into place.
// ProcessGroupColl.hpp has the declarations the files share; docs/TORCH.md.
#include "ProcessGroupColl.hpp"

#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <unistd.h>
#include <sys/stat.h>
#include <time.h>

namespace collbench {

static constexpr size_t kDefaultTraceCap = 256ull << 20; // COLL_TRACE_MAX_BYTES's default
static constexpr size_t kFlushBytes = 1 << 20;           // buffered before a write()

// clock's time in ns, -1 when it cannot be read (a thread's CPU clock after
// the thread ended).
static int64_t clock_ns(clockid_t clock) {
    timespec ts;
    if (clock_gettime(clock, &ts) != 0) return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t TraceRecorder::now_ns() { return clock_ns(CLOCK_MONOTONIC); }

// The calling thread's last entry: its time and CPU clock (begin() checks
// that the call is that entry's), and the CPU clock when its last call
// returned. A thread's CPU time, not the process's: the calls' own progress
// and completion threads run beside the program's.
static thread_local int64_t t_entry_ns = -1, t_entry_cpu = -1, t_return_cpu = -1;
static thread_local pid_t t_tid = 0;

static pid_t my_tid() { return t_tid ? t_tid : (t_tid = gettid()); }

int64_t TraceRecorder::enter_ns() {
    t_entry_cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    TraceRecorder& r = get();
    if (r.caller_tid_.load(std::memory_order_relaxed) == my_tid())
        r.caller_inside_.store(true, std::memory_order_relaxed);
    return t_entry_ns = now_ns();
}

// 'S' or 'D' in /proc/self/task/TID/stat: asleep, waiting for something.
static bool thread_blocked(pid_t tid) {
    char path[64], buf[512];
    std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) return false;
    buf[n] = '\0';
    const char* p = std::strrchr(buf, ')'); // the name may hold anything but a ')' last
    return p && p[1] == ' ' && (p[2] == 'S' || p[2] == 'D');
}

int64_t TraceRecorder::caller_wait_cpu() const {
    pid_t tid = caller_tid_.load();
    if (tid == 0 || tid == my_tid() || caller_inside_.load() || !thread_blocked(tid)) return -1;
    int64_t cpu = clock_ns(caller_clock_.load());
    int64_t since = caller_return_cpu_.load();
    if (cpu < 0 || since < 0 || cpu < since) return -1; // it made a call meanwhile
    return cpu - since;
}

// Never destroyed: Works may complete during static destruction; the file is
// completed by an atexit handler (registered at the first join) instead.
TraceRecorder& TraceRecorder::get() {
    static TraceRecorder* r = new TraceRecorder();
    return *r;
}

TraceRecorder::TraceRecorder() {
    const char* d = std::getenv("COLL_TRACE");
    dir_ = d ? d : "";
    on_ = !dir_.empty();
    cap_ = kDefaultTraceCap;
    if (const char* c = std::getenv("COLL_TRACE_MAX_BYTES")) {
        char* end = nullptr;
        unsigned long long v = std::strtoull(c, &end, 10);
        if (end != c && *end == '\0') cap_ = (size_t)v;
    }
}

// s as a JSON string.
// One line to stderr in one write(): the ranks of a job share the stream, and
// stdio writes an unbuffered line in pieces that interleave with the others'.
__attribute__((format(printf, 1, 2))) static void say(const char* fmt, ...) {
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = std::vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n <= 0) return;
    size_t len = std::min((size_t)n, sizeof line - 1);
    ssize_t w = ::write(STDERR_FILENO, line, len);
    (void)w; // nowhere left to say it failed
}

static std::string json_str(const std::string& s) {
    std::string o = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            o += '\\';
            o += (char)c;
        } else if (c < 0x20) {
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04x", c);
            o += b;
        } else {
            o += (char)c;
        }
    }
    return o + "\"";
}

static std::string json_ints(const std::vector<int64_t>& v) {
    std::string o = "[";
    for (size_t i = 0; i < v.size(); i++) o += (i ? "," : "") + std::to_string(v[i]);
    return o + "]";
}

// mkdir -p: DIR may name a folder not made yet.
static void make_dirs(const std::string& dir) {
    for (size_t i = 1; i <= dir.size(); i++)
        if (i == dir.size() || dir[i] == '/') mkdir(dir.substr(0, i).c_str(), 0777);
}

bool TraceRecorder::mine_locked() const { return on_ && fd_ >= 0 && pid_ == getpid(); }

std::string TraceRecorder::join(const TraceGroup& g) {
    if (!on_) return "";
    std::lock_guard<std::mutex> l(mu_);
    if (fd_ >= 0 && pid_ != getpid()) return ""; // a fork()ed child: the parent's file
    if (fd_ < 0)
        open_locked(g);
    else if (finished_)
        reopen_locked();
    live_groups_++;
    // torch's group name where known (equal on every member), else the
    // rank set and how many groups with that set this process made before.
    std::string id = g.name;
    if (id.empty()) {
        std::string set = "r";
        for (size_t i = 0; i < g.ranks.size(); i++)
            set += (i ? "-" : "") + std::to_string(g.ranks[i]);
        id = set + "#" + std::to_string(same_set_[set]++);
    }
    // torch names groups afresh after the world group is destroyed: a name
    // seen before with the same ranks is that group again (one line); with
    // other ranks it gets a suffix, the same on every member (they made the
    // same groups in the same order).
    const std::string base = id;
    for (int k = 1;; k++) {
        auto it = ids_.find(id);
        if (it == ids_.end()) break;
        if (it->second == g.ranks) return id;
        id = base + "~" + std::to_string(k);
    }
    ids_[id] = g.ranks;
    if (!truncated_)
        put_locked("{\"group\":" + json_str(id) + ",\"ranks\":" + json_ints(g.ranks) +
                   ",\"desc\":" + json_str(g.desc) + "}\n");
    return id;
}

void TraceRecorder::open_locked(const TraceGroup& g) {
    rank_ = g.global_rank;
    make_dirs(dir_);
    std::string base = dir_ + "/";
    tmp_ = base + ".rank" + std::to_string(rank_) + ".jsonl.tmp";
    final_ = base + "rank" + std::to_string(rank_) + ".jsonl";
    int fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    TORCH_CHECK(fd >= 0, "coll: COLL_TRACE=", dir_, ": cannot write the trace file ", tmp_, ": ",
                std::strerror(errno));
    fd_ = fd;
    pid_ = getpid();
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    char created[64];
    std::snprintf(created, sizeof created, "%.3f", (double)rt.tv_sec + rt.tv_nsec / 1e9);
    const char* be = std::getenv("COLL_BACKEND");
    // The CPUs this thread (the one making the group) may run on: the replay
    // pins its ranks only where the program's were pinned (--bind recorded).
    cpu_set_t allowed;
    std::string cpus;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
        cpus = ",\"cpus\":" + std::to_string(CPU_COUNT(&allowed));
    put_locked("{\"format\":\"collbench-trace\",\"version\":1,\"rank\":" + std::to_string(rank_) +
               ",\"world\":" + std::to_string(g.world) +
               ",\"source\":\"coll\",\"host\":" + json_str(host) +
               ",\"pid\":" + std::to_string(pid_) + ",\"torch\":" + json_str(g.torch_version) +
               ",\"backend\":" + json_str(be && *be ? be : "auto") +
               ",\"created_unix\":" + created + cpus + "}\n");
    static bool registered = false;
    if (!registered) {
        registered = true;
        std::atexit([]() { TraceRecorder::get().finish(); });
    }
}

// A group made after the last one was destroyed: the finished file takes
// more calls; its footer goes until the next finish.
void TraceRecorder::reopen_locked() {
    if (::rename(final_.c_str(), tmp_.c_str()) != 0 || ftruncate(fd_, (off_t)footer_at_) != 0) {
        say("coll: COLL_TRACE: cannot reopen %s (%s): recording stopped\n", final_.c_str(),
            std::strerror(errno));
        ::close(fd_);
        on_ = false;
        fd_ = -1;
        return;
    }
    lseek(fd_, 0, SEEK_END);
    finished_ = false;
}

void TraceRecorder::leave(const std::string& id, const std::string& plan) {
    if (!on_) return;
    std::lock_guard<std::mutex> l(mu_);
    if (!mine_locked()) return;
    if (!id.empty() && !plan.empty() && !truncated_ && !finished_)
        put_locked("{\"group\":" + json_str(id) + ",\"plan\":" + json_str(plan) + "}\n");
    if (live_groups_ > 0 && --live_groups_ == 0) finish_locked();
}

int64_t TraceRecorder::begin(TraceCall c) {
    if (!on_) return -1;
    const int64_t now_cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    if (t_entry_ns == c.t0 && t_entry_cpu >= 0 && t_return_cpu >= 0)
        c.cpu = std::max<int64_t>(0, t_entry_cpu - t_return_cpu);
    t_return_cpu = now_cpu;
    c.tid = my_tid();
    clockid_t clock;
    if (pthread_getcpuclockid(pthread_self(), &clock) == 0) {
        caller_clock_.store(clock);
        caller_return_cpu_.store(now_cpu);
        caller_tid_.store(c.tid);
        caller_inside_.store(false);
    }
    std::lock_guard<std::mutex> l(mu_);
    if (!mine_locked() || truncated_ || finished_) return -1;
    int64_t seq = next_seq_++;
    calls_.push_back(std::move(c));
    return seq;
}

void TraceRecorder::end(int64_t seq, int peer) {
    if (seq < 0) return;
    int64_t t1 = now_ns();
    // before the lock: the calling thread may be waiting for it in begin()
    int64_t wait_cpu = caller_wait_cpu();
    pid_t waiter = caller_tid_.load();
    std::lock_guard<std::mutex> l(mu_);
    if (!mine_locked() || seq < written_ || seq >= written_ + (int64_t)calls_.size()) return;
    TraceCall& c = calls_[(size_t)(seq - written_)];
    c.t1 = std::max(t1, c.t0);
    if (c.tid == waiter) c.wait_cpu = wait_cpu;
    if (c.tid == my_tid()) c.blocking = true; // the program went on once it ended
    c.done = true;
    if (peer >= 0) c.peer = peer; // a receive from any source: known now
    write_done_locked(false);
}

// The completed calls at the front, in call order; with all, the rest too
// (still in flight when the file is completed: their end is now).
void TraceRecorder::write_done_locked(bool all) {
    int64_t now = now_ns();
    while (!calls_.empty() && (calls_.front().done || all)) {
        TraceCall& c = calls_.front();
        if (!c.done) c.t1 = std::max(now, c.t0);
        if (!truncated_) {
            int64_t gap = written_ == 0 ? 0 : std::max<int64_t>(0, c.t0 - last_t1_);
            std::string line = "{\"seq\":" + std::to_string(written_) +
                               ",\"group\":" + json_str(c.group) + ",\"op\":\"" + c.op +
                               "\",\"dtype\":\"" + c.dtype + "\",\"red\":\"" + c.red +
                               "\",\"count\":" + std::to_string(c.count) +
                               ",\"in\":" + std::to_string(c.in) +
                               ",\"out\":" + std::to_string(c.out) +
                               ",\"root\":" + std::to_string(c.root) +
                               ",\"peer\":" + std::to_string(c.peer);
            if (!c.in_splits.empty() || !c.out_splits.empty())
                line += ",\"in_splits\":" + json_ints(c.in_splits) +
                        ",\"out_splits\":" + json_ints(c.out_splits);
            line += ",\"t0\":" + std::to_string(c.t0) + ",\"t1\":" + std::to_string(c.t1) +
                    ",\"gap\":" + std::to_string(gap);
            if (c.cpu >= 0) line += ",\"cpu\":" + std::to_string(c.cpu);
            if (c.wait_cpu >= 0) line += ",\"wait_cpu\":" + std::to_string(c.wait_cpu);
            if (c.blocking) line += ",\"blocking\":true";
            line += "}\n";
            if (bytes_ + line.size() > cap_) {
                truncated_ = true;
                say("coll: COLL_TRACE: %s reached COLL_TRACE_MAX_BYTES=%zu bytes: "
                    "recording stopped after %lld calls (the footer says "
                    "truncated)\n",
                    final_.c_str(), cap_, (long long)lines_);
            } else {
                put_locked(line);
                lines_++;
            }
            last_t1_ = c.t1;
        }
        calls_.pop_front();
        written_++;
    }
}

void TraceRecorder::put_locked(const std::string& s) {
    buf_ += s;
    bytes_ += s.size();
    if (buf_.size() >= kFlushBytes) flush_locked();
}

void TraceRecorder::flush_locked() {
    size_t off = 0;
    while (off < buf_.size()) {
        ssize_t n = ::write(fd_, buf_.data() + off, buf_.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (!write_failed_)
                say("coll: COLL_TRACE: writing %s failed: %s\n", tmp_.c_str(),
                    n < 0 ? std::strerror(errno) : "no progress");
            write_failed_ = true;
            break;
        }
        off += (size_t)n;
    }
    buf_.clear();
}

// The footer and the rename: the last group destroyed, or the process exits.
void TraceRecorder::finish() {
    if (!on_) return;
    std::lock_guard<std::mutex> l(mu_);
    finish_locked();
}

void TraceRecorder::finish_locked() {
    if (!mine_locked() || finished_) return;
    write_done_locked(true);
    flush_locked();
    footer_at_ = bytes_;
    std::string footer = "{\"end\":true,\"calls\":" + std::to_string(lines_) +
                         ",\"truncated\":" + (truncated_ ? "true" : "false") + "}\n";
    buf_ = footer;
    flush_locked();
    bytes_ = footer_at_; // the footer is taken off again if the file reopens
    if (write_failed_) {
        say("coll: COLL_TRACE: %s is incomplete (a write failed); left as %s\n", final_.c_str(),
            tmp_.c_str());
    } else if (::rename(tmp_.c_str(), final_.c_str()) != 0) {
        say("coll: COLL_TRACE: cannot rename %s to %s: %s\n", tmp_.c_str(), final_.c_str(),
            std::strerror(errno));
    }
    finished_ = true;
}

} // namespace collbench

namespace collbench {

int64_t ProcessGroupColl::traced(int64_t t0, const char* op, const char* dtype, const char* red,
                                 int64_t count, int64_t in, int64_t out, int root, int peer,
                                 std::vector<int64_t> in_splits, std::vector<int64_t> out_splits) {
    if (trace_id_.empty()) return -1;
    return TraceRecorder::get().begin(TraceCall{trace_id_, op, dtype, red, count, in, out, root,
                                                peer, std::move(in_splits), std::move(out_splits),
                                                t0});
}

} // namespace collbench
