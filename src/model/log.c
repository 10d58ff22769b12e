/* log.c - the process's one log sink (log.h). */
#include "model/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

/* The sink is installed once at start, but read from every thread that reports; the lock
 * makes the (fn, ctx) pair change at once and keeps one message from interleaving with
 * another inside the sink. */
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static sc_log_fn log_fn;
static void *log_ctx;

void sc_log_set(sc_log_fn fn, void *ctx)
{
    pthread_mutex_lock(&log_mu);
    log_fn = fn;
    log_ctx = fn ? ctx : NULL;
    pthread_mutex_unlock(&log_mu);
}

sc_log_fn sc_log_get(void **ctx)
{
    pthread_mutex_lock(&log_mu);
    sc_log_fn fn = log_fn;
    if (ctx)
        *ctx = log_ctx;
    pthread_mutex_unlock(&log_mu);
    return fn;
}

void sc_logf(const char *fmt, ...)
{
    pthread_mutex_lock(&log_mu);
    if (log_fn) {
        char msg[SC_LOG_LEN];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        log_fn(log_ctx, msg);
    }
    pthread_mutex_unlock(&log_mu);
}
