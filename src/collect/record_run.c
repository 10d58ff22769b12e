/* record_run.c - the sampling loop, delivery to scrape sinks, the server's recorder thread. */
#include "collect/record_int.h"
#include "formats/pprof.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/log.h"
#include "config/config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int deliver_take(struct sc_recorder *r, struct sc_record_run *run, char *err)
{
    struct sc_profile *p;
    int64_t from, until;
    int rc = sc_recorder_take(r, &p, &from, &until, err);
    if (rc)
        return rc;
    rc = run->sink(run->sink_ctx, p, from, until, err);
    sc_profile_free(p);
    return rc;
}

int sc_record_run(struct sc_recorder *r, struct sc_record_run *run, char *err)
{
    int64_t start = sc_mono_ns();
    int64_t next = run->interval_ns > 0 ? start + run->interval_ns : INT64_MAX;
    int64_t end = run->duration_ns > 0 ? start + run->duration_ns : INT64_MAX;
    int rc = 0;
    run->target_exited = 0;
    for (;;) {
        if (run->should_stop && run->should_stop(run->stop_ctx))
            break;
        int64_t now = sc_mono_ns();
        if (now >= end)
            break;
        /* wake up at least 4 times a second to see a stop; otherwise the rings' watermark
         * and the next flush decide */
        int64_t wait = (next < end ? next : end) - now;
        if (wait > SC_NS_PER_S / 4)
            wait = SC_NS_PER_S / 4;
        rc = sc_recorder_poll(r, (int)(wait / 1000000 + 1), err);
        if (rc == SC_ENOTFOUND) {
            run->target_exited = 1;
            rc = 0;
            break;
        }
        if (rc)
            return rc;
        if (sc_mono_ns() >= next) {
            if ((rc = deliver_take(r, run, err)))
                return rc;
            next += run->interval_ns;
            if (next < sc_mono_ns())
                next = sc_mono_ns() + run->interval_ns; /* a slow sink: no catching up */
        }
    }
    rc = sc_recorder_drain(r, err);
    if (!rc)
        rc = deliver_take(r, run, err);
    return rc;
}

int sc_record_deliver(const struct sc_profile *p, int64_t from_ns, int64_t until_ns,
                      const char *service_name, const struct sc_labels *labels, sc_scrape_sink sink,
                      void *sink_ctx, char *err)
{
    struct sc_buf b = SC_BUF_INIT;
    if (sc_pprof_encode(p, &b) || b.oom) {
        sc_buf_release(&b);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = 0;
    struct sc_scraped s = {
        .job = "record",
        .instance = host,
        .profile = "cpu",
        .service_name = service_name,
        .labels = labels,
        .pprof = b.data ? b.data : "",
        .len = b.len,
        .from_ns = from_ns,
        .until_ns = until_ns,
        .samples = p->nsamples,
    };
    int rc = sink(sink_ctx, &s, err);
    sc_buf_release(&b);
    return rc;
}

/* ---- the server's recorder thread ---- */

struct sc_record_bg {
    struct sc_recorder *r;
    pthread_t th;
    atomic_int stop;
    int64_t interval_ns;
    char *service;
    struct sc_labels labels;
    sc_scrape_sink sink;
    void *sink_ctx;
};

static int bg_should_stop(void *ctx)
{
    struct sc_record_bg *b = ctx;
    return atomic_load(&b->stop);
}

static int bg_sink(void *ctx, const struct sc_profile *p, int64_t from, int64_t until, char *err)
{
    struct sc_record_bg *b = ctx;
    if (p->nsamples == 0)
        return 0;
    int rc = sc_record_deliver(p, from, until, b->service, &b->labels, b->sink, b->sink_ctx, err);
    if (rc) {
        /* a store that refuses one profile should not end the sampling */
        sc_logf("record: %s", err);
    }
    return 0;
}

static void *bg_main(void *arg)
{
    struct sc_record_bg *b = arg;
    pthread_setname_np(pthread_self(), "scorch-record");
    char err[SC_ERR_LEN] = "";
    struct sc_record_run run = {b->interval_ns, 0, bg_should_stop, b, bg_sink, b, 0};
    if (sc_record_run(b->r, &run, err)) {
        sc_logf("record: %s", err);
    }
    return NULL;
}

int sc_record_bg_start(const struct sc_record_opts *o, int64_t interval_ns,
                       const char *service_name, const struct sc_labels *labels,
                       sc_scrape_sink sink, void *sink_ctx, struct sc_record_bg **out, char *err)
{
    struct sc_record_bg *b = calloc(1, sizeof *b);
    if (!b)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    sc_labels_init(&b->labels);
    b->interval_ns = interval_ns > 0 ? interval_ns : 10 * SC_NS_PER_S;
    b->sink = sink;
    b->sink_ctx = sink_ctx;
    b->service = strdup(service_name);
    int rc = b->service ? 0 : sc_errf(err, SC_ENOMEM, "out of memory");
    for (uint32_t i = 0; !rc && labels && i < labels->n; i++)
        if (sc_labels_set(&b->labels, labels->v[i].name.ptr, labels->v[i].name.len,
                          labels->v[i].value.ptr, labels->v[i].value.len))
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    struct sc_record_opts ro = *o;
    if (!ro.sym.dwarf_bytes)
        ro.sym.dwarf_bytes = SC_RECORD_DWARF_CACHE;
    if (!rc)
        rc = sc_recorder_open(&ro, &b->r, err);
    if (!rc && pthread_create(&b->th, NULL, bg_main, b))
        rc = sc_errf(err, SC_EINTERNAL, "cannot start the recorder thread");
    if (rc) {
        sc_recorder_close(b->r);
        sc_labels_release(&b->labels);
        free(b->service);
        free(b);
        return rc;
    }
    *out = b;
    return 0;
}

void sc_record_bg_stop(struct sc_record_bg *b)
{
    if (!b)
        return;
    atomic_store(&b->stop, 1);
    pthread_join(b->th, NULL);
    sc_recorder_close(b->r);
    sc_labels_release(&b->labels);
    free(b->service);
    free(b);
}

void sc_record_service_name(const struct sc_labels *labels, int32_t pid, char *out, size_t n)
{
    out[0] = 0;
    struct sc_str sv;
    if (labels && sc_labels_get(labels, "service_name", 12, &sv)) {
        snprintf(out, n, "%.*s", (int)sv.len, sv.ptr);
        return;
    }
    if (pid > 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
        FILE *f = fopen(path, "re");
        if (f) {
            if (fgets(out, (int)n, f))
                out[strcspn(out, "\n")] = 0;
            else
                out[0] = 0;
            fclose(f);
        }
    }
    if (!out[0] && gethostname(out, n - 1) != 0)
        out[0] = 0;
    out[n - 1] = 0;
    if (!out[0])
        snprintf(out, n, "localhost");
}

int sc_record_bg_from_config(const struct sc_config *cf, sc_scrape_sink sink, void *sink_ctx,
                             struct sc_record_bg **out, char *err)
{
    struct sc_record_opts o;
    memset(&o, 0, sizeof o);
    o.pid = cf->record_pid;
    o.frequency = cf->record_frequency;
    /* the whole machine, continuously: names only unless asked (see docs/record.md) */
    o.sym.no_dwarf = cf->record_dwarf == -1 ? !cf->record_pid : !cf->record_dwarf;
    o.off_cpu = cf->record_off_cpu;
    o.unwind = (enum sc_record_unwind)cf->record_unwind;
    o.stack_bytes = cf->record_stack_size; /* 0: the default */
    o.off_cpu_min_ns = cf->record_off_cpu_min_ns;
    struct sc_labels labels;
    sc_labels_init(&labels);
    int rc = 0;
    for (uint32_t i = 0; !rc && i < cf->record_nlabels; i++)
        if (sc_labels_set(&labels, cf->record_label_names[i], strlen(cf->record_label_names[i]),
                          cf->record_label_values[i], strlen(cf->record_label_values[i])))
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    char service[256];
    sc_record_service_name(&labels, o.pid, service, sizeof service);
    if (!rc)
        rc = sc_record_bg_start(&o, cf->record_interval_ns, service, &labels, sink, sink_ctx, out,
                                err);
    sc_labels_release(&labels);
    return rc ? sc_errwrap(err, rc, "record") : 0;
}
