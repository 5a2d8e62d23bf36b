/* The run-time loading of libcudart and libnccl, and the nccl backend's
 * unavailable paths: deterministic on any machine by pointing the loaders at
 * a library that does not exist (COLL_CUDART_PATH, COLL_NCCL_PATH) or at one
 * that is not CUDA (libm). The real libraries are tried last: with no GPU the
 * reason must name the driver or the device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/backend.h"
#include "backend/nccl/nccl_lib.h"
#include "coll.h"
#include "core/cuda_rt.h"

#define BOGUS "/nonexistent/collbench-test/libbogus.so.99"

static int reset(void **state)
{
    (void)state;
    unsetenv(COLL_CUDART_ENV);
    unsetenv(COLL_NCCL_ENV);
    coll__cudart_unload();
    coll__nccl_lib_unload();
    return 0;
}

static void assert_contains(const char *s, const char *part)
{
    if (!strstr(s, part)) fail_msg("'%s' does not contain '%s'", s, part);
}

static void cudart_bogus_path(void **state)
{
    (void)state;
    char err[512] = "";
    int n = -1, x = 0;
    setenv(COLL_CUDART_ENV, BOGUS, 1);
    assert_null(coll__cudart_load(err, sizeof err));
    assert_contains(err, "COLL_CUDART_PATH=" BOGUS);
    assert_contains(err, "cannot be loaded");
    assert_null(coll__cudart_loaded());
    /* the failure is remembered, and every entry point says the same */
    char again[512] = "";
    assert_int_equal(coll__cuda_device_count(&n, again, sizeof again), COLL_EUNAVAIL);
    assert_int_equal(n, 0);
    assert_string_equal(err, again);
    assert_int_equal(coll__cuda_select_device(0, NULL, again, sizeof again), COLL_EUNAVAIL);
    /* without the runtime no pointer is a device pointer, and nothing crashes */
    assert_int_equal(coll__cuda_is_device_ptr(&x), 0);
    assert_int_equal(coll__cuda_is_gpu_accessible(&x), 0);
}

static void cudart_not_cuda(void **state)
{
    (void)state;
    char err[512] = "";
    setenv(COLL_CUDART_ENV, "libm.so.6", 1);
    assert_null(coll__cudart_load(err, sizeof err));
    assert_contains(err, "libm.so.6 has no cudaGetDeviceCount");
}

static void nccl_bogus_path(void **state)
{
    (void)state;
    char err[512] = "", why[512] = "";
    setenv(COLL_NCCL_ENV, BOGUS, 1);
    assert_null(coll__nccl_lib_load(err, sizeof err));
    assert_contains(err, "COLL_NCCL_PATH=" BOGUS);
    assert_int_equal(coll__nccl_usable(why, sizeof why), 0);
    assert_string_equal(err, why);
    /* the backend registry gives the same reason, under the backend's name */
    assert_int_equal(coll_backend_available("nccl", why, sizeof why), 0);
    assert_contains(why, "backend nccl unavailable: NCCL not found: COLL_NCCL_PATH=" BOGUS);
    assert_null(coll__backend_find("nccl", why, sizeof why));
}

static void nccl_not_nccl(void **state)
{
    (void)state;
    char err[512] = "";
    setenv(COLL_NCCL_ENV, "libm.so.6", 1);
    assert_null(coll__nccl_lib_load(err, sizeof err));
    assert_contains(err, "libm.so.6 has no ncclGetVersion");
}

/* A communicator on the nccl backend fails cleanly, before any rendezvous. */
static void comm_create_unavailable(void **state)
{
    (void)state;
    coll_config cfg;
    coll_comm *comm = (coll_comm *)1;
    setenv(COLL_NCCL_ENV, BOGUS, 1);
    coll_config_init(&cfg);
    cfg.backend = "nccl";
    cfg.rank = 0;
    cfg.world_size = 1;
    assert_int_equal(coll_comm_create(&cfg, &comm), COLL_EUNAVAIL);
    assert_null(comm);
    assert_contains(coll_last_create_error(), "NCCL not found");
}

/* The real libraries of this machine: with no GPU the reason names what is
 * missing; with one, nccl is available. */
static void real_libraries(void **state)
{
    (void)state;
    char err[512] = "", why[512] = "";
    int n = 0;
    if (!coll__cudart_load(err, sizeof err)) {
        assert_contains(err, "libcudart.so not found (tried libcudart.so, ");
        assert_contains(err, "pip install nvidia-cuda-runtime-cu12");
        assert_int_equal(coll_backend_available("nccl", why, sizeof why), 0);
        return;
    }
    int rc = coll__cuda_device_count(&n, err, sizeof err);
    if (rc == COLL_OK) {
        assert_true(n >= 1);
        int avail = coll_backend_available("nccl", why, sizeof why);
        if (!avail) assert_contains(why, "NCCL");
        return;
    }
    assert_int_equal(rc, COLL_EUNAVAIL);
    assert_int_equal(n, 0);
    if (!strstr(err, "CUDA driver") && !strstr(err, "no CUDA device") &&
        !strstr(err, "no usable CUDA device"))
        fail_msg("no-device reason names neither the driver nor the device: %s", err);
    assert_int_equal(coll_backend_available("nccl", why, sizeof why), 0);
    assert_contains(why, "backend nccl unavailable: ");
}

static void version_strings(void **state)
{
    (void)state;
    char buf[32];
    coll__nccl_version_string(22105, buf, sizeof buf);
    assert_string_equal(buf, "2.21.5");
    coll__nccl_version_string(2708, buf, sizeof buf); /* the old encoding, before 2.9 */
    assert_string_equal(buf, "2.7.8");
    coll__nccl_version_string(0, buf, sizeof buf);
    assert_string_equal(buf, "unknown");
    coll__cuda_version_string(12040, buf, sizeof buf);
    assert_string_equal(buf, "12.4");
    coll__cuda_version_string(13000, buf, sizeof buf);
    assert_string_equal(buf, "13.0");
    coll__cuda_version_string(0, buf, sizeof buf);
    assert_string_equal(buf, "none");
}

/* NCCL's enum values, and what older NCCLs lack. */
static void dtype_and_op_mapping(void **state)
{
    (void)state;
    static const int want[COLL_DTYPE_COUNT] = {
        [COLL_FLOAT32] = 7, [COLL_FLOAT64] = 8, [COLL_FLOAT16] = 6, [COLL_BFLOAT16] = 9,
        [COLL_INT8] = 0,    [COLL_UINT8] = 1,   [COLL_INT32] = 2,   [COLL_INT64] = 4};
    for (int dt = 0; dt < COLL_DTYPE_COUNT; dt++)
        assert_int_equal(coll__nccl_dtype((coll_dtype)dt, 22105), want[dt]);
    assert_int_equal(coll__nccl_dtype(COLL_BFLOAT16, 2708), -1);
    assert_int_equal(coll__nccl_dtype(COLL_FLOAT16, 2708), 6);
    assert_int_equal(coll__nccl_dtype(COLL_DTYPE_COUNT, 22105), -1);
    assert_int_equal(coll__nccl_op(COLL_SUM, 22105), 0);
    assert_int_equal(coll__nccl_op(COLL_PROD, 22105), 1);
    assert_int_equal(coll__nccl_op(COLL_MAX, 22105), 2);
    assert_int_equal(coll__nccl_op(COLL_MIN, 22105), 3);
    assert_int_equal(coll__nccl_op(COLL_AVG, 22105), 4);
    assert_int_equal(coll__nccl_op(COLL_AVG, 20904), -1); /* summed, then divided by the backend */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(cudart_bogus_path, reset, reset),
        cmocka_unit_test_setup_teardown(cudart_not_cuda, reset, reset),
        cmocka_unit_test_setup_teardown(nccl_bogus_path, reset, reset),
        cmocka_unit_test_setup_teardown(nccl_not_nccl, reset, reset),
        cmocka_unit_test_setup_teardown(comm_create_unavailable, reset, reset),
        cmocka_unit_test_setup_teardown(real_libraries, reset, reset),
        cmocka_unit_test(version_strings),
        cmocka_unit_test(dtype_and_op_mapping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
