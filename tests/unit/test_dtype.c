/* Datatype/op names, parsing and validity; status strings; collective
 * signatures (comparison and the text of mismatch messages). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "coll.h"
#include "core/sig.h"

static void test_dtype_parse_aliases(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        coll_dtype want;
    } cases[] = {
        {"float32", COLL_FLOAT32},   {"float", COLL_FLOAT32},   {"f32", COLL_FLOAT32},
        {"fp32", COLL_FLOAT32},      {"FLOAT32", COLL_FLOAT32}, {"Float", COLL_FLOAT32},
        {"float64", COLL_FLOAT64},   {"double", COLL_FLOAT64},  {"f64", COLL_FLOAT64},
        {"DOUBLE", COLL_FLOAT64},    {"float16", COLL_FLOAT16}, {"half", COLL_FLOAT16},
        {"fp16", COLL_FLOAT16},      {"f16", COLL_FLOAT16},     {"HaLf", COLL_FLOAT16},
        {"bfloat16", COLL_BFLOAT16}, {"bf16", COLL_BFLOAT16},   {"BF16", COLL_BFLOAT16},
        {"int8", COLL_INT8},         {"uint8", COLL_UINT8},     {"UINT8", COLL_UINT8},
        {"int32", COLL_INT32},       {"int", COLL_INT32},       {"INT", COLL_INT32},
        {"int64", COLL_INT64},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        coll_dtype dt = COLL_DTYPE_COUNT;
        if (coll_dtype_parse(cases[i].text, &dt) != COLL_OK || dt != cases[i].want)
            fail_msg("parse(\"%s\") gave %d, want %d", cases[i].text, (int)dt, (int)cases[i].want);
    }
}

static void test_dtype_parse_rejects(void **state)
{
    (void)state;
    static const char *const bad[] = {"",       "float8", "int16",  "uint32", "float32 ",
                                      " float", "f",      "bfloat", "fp8",    "int64x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        coll_dtype dt = COLL_INT64;
        if (coll_dtype_parse(bad[i], &dt) != COLL_EINVAL || dt != COLL_INT64)
            fail_msg("parse(\"%s\") accepted or wrote its output", bad[i]);
    }
    coll_dtype dt;
    assert_int_equal(coll_dtype_parse(NULL, &dt), COLL_EINVAL);
    assert_int_equal(coll_dtype_parse("float32", NULL), COLL_EINVAL);
}

static void test_dtype_names_and_sizes(void **state)
{
    (void)state;
    static const struct {
        coll_dtype dt;
        const char *name;
        size_t size;
    } want[] = {
        {COLL_FLOAT32, "float32", 4},   {COLL_FLOAT64, "float64", 8}, {COLL_FLOAT16, "float16", 2},
        {COLL_BFLOAT16, "bfloat16", 2}, {COLL_INT8, "int8", 1},       {COLL_UINT8, "uint8", 1},
        {COLL_INT32, "int32", 4},       {COLL_INT64, "int64", 8},
    };
    assert_int_equal(sizeof want / sizeof want[0], COLL_DTYPE_COUNT);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_string_equal(coll_dtype_name(want[i].dt), want[i].name);
        assert_int_equal(coll_dtype_size(want[i].dt), want[i].size);
        coll_dtype back = COLL_DTYPE_COUNT;
        assert_int_equal(coll_dtype_parse(coll_dtype_name(want[i].dt), &back), COLL_OK);
        assert_int_equal(back, want[i].dt);
    }
    assert_int_equal(coll_dtype_size(COLL_DTYPE_COUNT), 0);
    assert_int_equal(coll_dtype_size((coll_dtype)-1), 0);
    assert_non_null(coll_dtype_name(COLL_DTYPE_COUNT));
    assert_non_null(coll_dtype_name((coll_dtype)-1));
}

static void test_op_parse_and_names(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        coll_op want;
    } cases[] = {
        {"sum", COLL_SUM}, {"prod", COLL_PROD}, {"min", COLL_MIN}, {"max", COLL_MAX},
        {"avg", COLL_AVG}, {"SUM", COLL_SUM},   {"Avg", COLL_AVG},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        coll_op op = COLL_OP_COUNT;
        assert_int_equal(coll_op_parse(cases[i].text, &op), COLL_OK);
        assert_int_equal(op, cases[i].want);
    }
    for (int op = 0; op < COLL_OP_COUNT; op++) {
        coll_op back = COLL_OP_COUNT;
        assert_int_equal(coll_op_parse(coll_op_name((coll_op)op), &back), COLL_OK);
        assert_int_equal(back, op);
    }
    assert_string_equal(coll_op_name(COLL_PROD), "prod");
    static const char *const bad[] = {"", "mean", "add", "sum ", "maximum"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        coll_op op = COLL_MAX;
        assert_int_equal(coll_op_parse(bad[i], &op), COLL_EINVAL);
        assert_int_equal(op, COLL_MAX);
    }
    coll_op op;
    assert_int_equal(coll_op_parse(NULL, &op), COLL_EINVAL);
    assert_non_null(coll_op_name(COLL_OP_COUNT));
}

static void test_op_valid(void **state)
{
    (void)state;
    for (int dt = 0; dt < COLL_DTYPE_COUNT; dt++) {
        int is_float = dt == COLL_FLOAT32 || dt == COLL_FLOAT64 || dt == COLL_FLOAT16 ||
                       dt == COLL_BFLOAT16;
        for (int op = 0; op < COLL_OP_COUNT; op++) {
            int want = (op == COLL_AVG && !is_float) ? COLL_EINVAL : COLL_OK;
            if (coll_op_valid((coll_dtype)dt, (coll_op)op) != want)
                fail_msg("op_valid(%s, %s) != %d", coll_dtype_name((coll_dtype)dt),
                         coll_op_name((coll_op)op), want);
        }
    }
    assert_int_equal(coll_op_valid(COLL_DTYPE_COUNT, COLL_SUM), COLL_EINVAL);
    assert_int_equal(coll_op_valid((coll_dtype)-1, COLL_SUM), COLL_EINVAL);
    assert_int_equal(coll_op_valid(COLL_FLOAT32, COLL_OP_COUNT), COLL_EINVAL);
    assert_int_equal(coll_op_valid(COLL_FLOAT32, (coll_op)-1), COLL_EINVAL);
}

static void test_status_strings(void **state)
{
    (void)state;
    static const struct {
        int code;
        const char *name, *msg;
    } table[] = {
#define STATUS_ROW(name, val, msg) {(val), "COLL_" #name, (msg)},
        COLL_STATUS_MAP(STATUS_ROW)
#undef STATUS_ROW
    };
    size_t n = sizeof table / sizeof table[0];
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(coll_strerror(table[i].code), table[i].msg);
        assert_string_equal(coll_status_name(table[i].code), table[i].name);
        for (size_t j = 0; j < i; j++) /* one message per code */
            assert_string_not_equal(coll_strerror(table[i].code), coll_strerror(table[j].code));
    }
    assert_string_equal(coll_strerror(COLL_EINVAL), "invalid argument");
    assert_string_equal(coll_status_name(COLL_ETIMEDOUT), "COLL_ETIMEDOUT");
    static const int unknown[] = {1, 42, -13, -1000, INT32_MIN};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        assert_string_equal(coll_strerror(unknown[i]), "unknown error");
        assert_string_equal(coll_status_name(unknown[i]), "COLL_UNKNOWN");
    }
}

static void test_kind_names(void **state)
{
    (void)state;
    static const char *const want[] = {"allreduce", "allgather", "reducescatter", "broadcast",
                                       "reduce",    "alltoall",  "barrier",       "p2p"};
    assert_int_equal(sizeof want / sizeof want[0], COLL_KIND_COUNT);
    for (int k = 0; k < COLL_KIND_COUNT; k++)
        assert_string_equal(coll__kind_name((coll__kind)k), want[k]);
    assert_non_null(coll__kind_name(COLL_KIND_COUNT));
}

static coll__sig make_sig(coll__kind kind, uint64_t count, coll_dtype dt, coll_op op, int root,
                          uint32_t seq)
{
    coll__sig s;
    memset(&s, 0, sizeof s);
    s.kind = (uint8_t)kind;
    s.count = count;
    s.dtype = (uint8_t)dt;
    s.op = (uint8_t)op;
    s.root = root;
    s.seq = seq;
    return s;
}

static void test_sig_format(void **state)
{
    (void)state;
    char buf[128];
    static const struct {
        coll__kind kind;
        const char *want;
    } cases[] = {
        {COLL_KIND_ALLREDUCE, "allreduce(count=100, float32, sum) #7"},
        {COLL_KIND_REDUCESCATTER, "reducescatter(count=100, float32, sum) #7"},
        {COLL_KIND_REDUCE, "reduce(count=100, float32, sum, root=3) #7"},
        {COLL_KIND_BROADCAST, "broadcast(count=100, float32, root=3) #7"},
        {COLL_KIND_ALLGATHER, "allgather(count=100, float32) #7"},
        {COLL_KIND_ALLTOALL, "alltoall(count=100, float32) #7"},
        {COLL_KIND_P2P, "p2p(count=100, float32) #7"},
        {COLL_KIND_BARRIER, "barrier() #7"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        coll__sig s = make_sig(cases[i].kind, 100, COLL_FLOAT32, COLL_SUM, 3, 7);
        coll__sig_format(&s, buf, sizeof buf);
        assert_string_equal(buf, cases[i].want);
    }
    coll__sig big = make_sig(COLL_KIND_ALLREDUCE, 1ull << 40, COLL_BFLOAT16, COLL_MAX, 0,
                             4000000000u);
    coll__sig_format(&big, buf, sizeof buf);
    assert_string_equal(buf, "allreduce(count=1099511627776, bfloat16, max) #4000000000");

    /* Truncates, always terminated; a zero length writes nothing. */
    memset(buf, 'x', sizeof buf);
    coll__sig_format(&big, buf, 10);
    assert_string_equal(buf, "allreduce");
    assert_int_equal(buf[10], 'x');
    buf[0] = 'y';
    coll__sig_format(&big, buf, 0);
    assert_int_equal(buf[0], 'y');
}

static void test_sig_equal(void **state)
{
    (void)state;
    coll__sig base = make_sig(COLL_KIND_REDUCE, 64, COLL_INT32, COLL_MIN, 2, 9), s;
    assert_true(coll__sig_equal(&base, &base));
    s = base;
    s.count = 65;
    assert_false(coll__sig_equal(&base, &s));
    s = base;
    s.dtype = COLL_INT64;
    assert_false(coll__sig_equal(&base, &s));
    s = base;
    s.op = COLL_MAX;
    assert_false(coll__sig_equal(&base, &s));
    s = base;
    s.root = 1;
    assert_false(coll__sig_equal(&base, &s));
    s = base;
    s.seq = 10;
    assert_false(coll__sig_equal(&base, &s));
    s = base;
    s.kind = COLL_KIND_ALLREDUCE;
    assert_false(coll__sig_equal(&base, &s));
    s = base;
    s.pad = 1;
    s.pad2 = 5;
    assert_true(coll__sig_equal(&base, &s));

    /* Fields a kind does not use are ignored: ranks may leave anything there. */
    coll__sig ar = make_sig(COLL_KIND_ALLREDUCE, 64, COLL_FLOAT32, COLL_SUM, 0, 1);
    s = ar;
    s.root = 5;
    assert_true(coll__sig_equal(&ar, &s));
    s = ar;
    s.op = COLL_PROD;
    assert_false(coll__sig_equal(&ar, &s));
    coll__sig bc = make_sig(COLL_KIND_BROADCAST, 64, COLL_FLOAT32, COLL_SUM, 0, 1);
    s = bc;
    s.op = COLL_MAX;
    assert_true(coll__sig_equal(&bc, &s));
    s = bc;
    s.root = 1;
    assert_false(coll__sig_equal(&bc, &s));
    coll__sig ag = make_sig(COLL_KIND_ALLGATHER, 64, COLL_FLOAT32, COLL_SUM, 0, 1);
    s = ag;
    s.op = COLL_MAX;
    s.root = 3;
    assert_true(coll__sig_equal(&ag, &s));
    s = ag;
    s.count = 1;
    assert_false(coll__sig_equal(&ag, &s));
    coll__sig bar = make_sig(COLL_KIND_BARRIER, 0, COLL_FLOAT32, COLL_SUM, 0, 1);
    s = bar;
    s.count = 8;
    s.dtype = COLL_INT8;
    assert_true(coll__sig_equal(&bar, &s));
    s = bar;
    s.seq = 2;
    assert_false(coll__sig_equal(&bar, &s));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtype_parse_aliases),
        cmocka_unit_test(test_dtype_parse_rejects),
        cmocka_unit_test(test_dtype_names_and_sizes),
        cmocka_unit_test(test_op_parse_and_names),
        cmocka_unit_test(test_op_valid),
        cmocka_unit_test(test_status_strings),
        cmocka_unit_test(test_kind_names),
        cmocka_unit_test(test_sig_format),
        cmocka_unit_test(test_sig_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
