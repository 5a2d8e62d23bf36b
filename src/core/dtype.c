/* Datatype and reduction-op names, sizes, parsing and validity. */
#include <strings.h>

#include "coll.h"

static const struct {
    size_t size;
    const char *name;
    int is_float;
} dtype_info[COLL_DTYPE_COUNT] = {
    [COLL_FLOAT32] = {4, "float32", 1}, [COLL_FLOAT64] = {8, "float64", 1},
    [COLL_FLOAT16] = {2, "float16", 1}, [COLL_BFLOAT16] = {2, "bfloat16", 1},
    [COLL_INT8] = {1, "int8", 0},       [COLL_UINT8] = {1, "uint8", 0},
    [COLL_INT32] = {4, "int32", 0},     [COLL_INT64] = {8, "int64", 0},
};

static const char *const op_names[COLL_OP_COUNT] = {
    [COLL_SUM] = "sum", [COLL_PROD] = "prod", [COLL_MIN] = "min",
    [COLL_MAX] = "max", [COLL_AVG] = "avg",
};

/* Spellings users bring from numpy, torch and the GPU collective benchmarks. */
static const struct {
    const char *alias;
    coll_dtype dt;
} dtype_aliases[] = {
    {"float32", COLL_FLOAT32},   {"float", COLL_FLOAT32},   {"f32", COLL_FLOAT32},
    {"fp32", COLL_FLOAT32},      {"float64", COLL_FLOAT64}, {"double", COLL_FLOAT64},
    {"f64", COLL_FLOAT64},       {"fp64", COLL_FLOAT64},    {"float16", COLL_FLOAT16},
    {"half", COLL_FLOAT16},      {"fp16", COLL_FLOAT16},    {"f16", COLL_FLOAT16},
    {"bfloat16", COLL_BFLOAT16}, {"bf16", COLL_BFLOAT16},   {"int8", COLL_INT8},
    {"uint8", COLL_UINT8},       {"int32", COLL_INT32},     {"int", COLL_INT32},
    {"int64", COLL_INT64},
};

static int dtype_in_range(coll_dtype dt) { return (int)dt >= 0 && dt < COLL_DTYPE_COUNT; }

static int op_in_range(coll_op op) { return (int)op >= 0 && op < COLL_OP_COUNT; }

size_t coll_dtype_size(coll_dtype dt) { return dtype_in_range(dt) ? dtype_info[dt].size : 0; }

const char *coll_dtype_name(coll_dtype dt)
{
    return dtype_in_range(dt) ? dtype_info[dt].name : "invalid-dtype";
}

const char *coll_op_name(coll_op op) { return op_in_range(op) ? op_names[op] : "invalid-op"; }

int coll_dtype_parse(const char *s, coll_dtype *out)
{
    if (!s || !out) return COLL_EINVAL;
    for (size_t i = 0; i < sizeof dtype_aliases / sizeof dtype_aliases[0]; i++) {
        if (strcasecmp(s, dtype_aliases[i].alias) == 0) {
            *out = dtype_aliases[i].dt;
            return COLL_OK;
        }
    }
    return COLL_EINVAL;
}

int coll_op_parse(const char *s, coll_op *out)
{
    if (!s || !out) return COLL_EINVAL;
    for (int op = 0; op < COLL_OP_COUNT; op++) {
        if (strcasecmp(s, op_names[op]) == 0) {
            *out = (coll_op)op;
            return COLL_OK;
        }
    }
    return COLL_EINVAL;
}

int coll_op_valid(coll_dtype dt, coll_op op)
{
    if (!dtype_in_range(dt) || !op_in_range(op)) return COLL_EINVAL;
    /* An integer average would need a rounding rule nobody agrees on. */
    if (op == COLL_AVG && !dtype_info[dt].is_float) return COLL_EINVAL;
    return COLL_OK;
}
