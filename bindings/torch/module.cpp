// collbench_torch: the Python module: ProcessGroupColl's binding, the
// allocator's functions, the backend's registration with torch.distributed.
// ProcessGroupColl.hpp has the declarations the files share; docs/TORCH.md.
#include "ProcessGroupColl.hpp"

namespace collbench {

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
    // torch's extended creator: the group's name and global ranks (COLL_TRACE's
    // group lines, the profiler's group); it releases the GIL itself
    m.def("create_process_group_with_options", &collbench::ProcessGroupColl::create_with_options);
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
        py::object creator = m.attr("create_process_group_with_options");
#if COLL_TORCH2
        std::vector<std::string> devices{"cpu"};
        backend.attr("register_backend")("coll", creator, py::arg("extended_api") = true,
                                         py::arg("devices") = devices);
#else
        backend.attr("register_backend")("coll", creator, py::arg("extended_api") = true);
#endif
    }
}
