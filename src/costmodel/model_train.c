#include "costmodel/model_train.h"

#include <math.h>
#include <string.h>

#include "coll.h"
#include "core/errbuf.h"

double model_train_wire_ratio(const char *compress)
{
    if (!strcmp(compress, "none") || !compress[0]) return 1.0;
    if (!strcmp(compress, "fp16") || !strcmp(compress, "bf16")) return 0.5;
    return -1.0;
}

static int bad(char *err, size_t errlen, const char *what)
{
    coll__set_err(err, errlen, "%s", what);
    return COLL_EINVAL;
}

/* One all-reduce in ms, or -1 where ar_us cannot say. */
static double ar_ms(double bytes, model_allreduce_fn f, void *arg)
{
    double us = f(bytes, arg);
    return isfinite(us) && us >= 0 ? us / 1e3 : -1;
}

int model_train_predict(const model_train_job *j, model_allreduce_fn f, void *arg,
                        model_train_step *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!(j->grad_bytes > 0)) return bad(err, errlen, "no gradient bytes (params not given)");
    if (!(j->compute_ms > 0))
        return bad(err, errlen, "no compute time (compute_ms 0: run with compute steps)");
    if (!(j->backward_ms >= 0 && j->backward_ms <= j->compute_ms))
        return bad(err, errlen, "backward time outside 0..compute");
    if (!(j->wire_ratio > 0 && j->wire_ratio <= 1))
        return bad(err, errlen, "wire ratio outside (0, 1]");
    if (!(j->overhead_ms >= 0)) return bad(err, errlen, "negative overhead");
    double exposed = 0, comm = 0;
    if (!j->ddp) {
        comm = ar_ms(j->grad_bytes * j->wire_ratio, f, arg);
        if (comm < 0) return bad(err, errlen, "the all-reduce time is not predictable here");
        exposed = comm;
        out->nbuckets = 1;
    } else {
        if (!(j->bucket_bytes > 0) || !(j->first_bucket_bytes > 0))
            return bad(err, errlen, "ddp without a bucket size");
        double rest = j->grad_bytes - fmin(j->first_bucket_bytes, j->grad_bytes);
        if (1 + ceil(rest / j->bucket_bytes) > MODEL_TRAIN_MAX_BUCKETS)
            return bad(err, errlen, "bucket size too small for the gradient (over 1e6 buckets)");
        double done = 0, end = 0; /* bytes made ready so far; when the last all-reduce ends */
        while (done < j->grad_bytes) {
            double cap = out->nbuckets == 0 ? j->first_bucket_bytes : j->bucket_bytes;
            double b = fmin(cap, j->grad_bytes - done);
            double c = ar_ms(b * j->wire_ratio, f, arg);
            if (c < 0) return bad(err, errlen, "the all-reduce time is not predictable here");
            done += b;
            double ready = j->backward_ms * done / j->grad_bytes;
            end = fmax(end, ready) + c;
            comm += c;
            out->nbuckets++;
        }
        exposed = fmax(0, end - j->backward_ms);
    }
    out->comm_ms = comm;
    out->exposed_ms = exposed;
    out->step_ms = j->compute_ms + j->overhead_ms + exposed;
    out->eff = j->compute_ms / out->step_ms;
    return 0;
}
