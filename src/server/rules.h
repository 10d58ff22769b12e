/* rules.h - the config's rules: recording rules (functions' values as Prometheus metrics on
 * /metrics) and alerting rules (changes found in the store, sent to Alertmanager and
 * webhooks), evaluated on a schedule inside `scorch server`.
 *
 * Schedule. One thread evaluates every rule at the times t that are whole multiples of
 * alerting.evaluation_interval (so windows of a record rule whose range is the interval
 * tile time, each profile in one of them, and line up with a timeline of that step from a
 * multiple of it). A round that overruns skips the slots it covered (counted). Each
 * evaluation runs as a heavy query of the server: it waits for one of server.max_queries'
 * slots and has server.query_memory and server.query_timeout; stopping the server stops one
 * in flight within 50 ms (its budget's "client" is a pipe that the stop closes).
 *
 * Record rules. At t, the rule's selection over [t - range, t) is read as one step of
 * sc_plan_fnseries (query/fnseries.h): per group and function, the function's self (or
 * total) value in the timeline's metric and unit (CPU nanoseconds per second, bytes per
 * second, a gauge's average), exactly what /api/v1/timeline?function=F&value=self&step=range
 * says for that step. The functions: each group's own top N by its total (without group_by,
 * the top N of all series together), or those of its `limit` heaviest whose whole name the
 * regex matches. A function without a value in a group has no series there (not a 0). The
 * heaviest `limit` series are exported as
 *   NAME{<group_by>="value",function="f"} v
 * (labels named as Prometheus allows: other characters become '_'; without group_by a
 * series' own labels), Prometheus text, until the next evaluation replaces them; the ones
 * left out are counted in scorch_rule_series_dropped and said once in the log.
 *
 * Alert rules. At t, sc_plan_watch (query/watch.h) over [t - range, t]; a finding of the
 * rule's kinds, |change_pct| >= min_change_pct (new and gone always pass), a function the
 * regex matches (or among the top N) is an alert, keyed by its group, function and kind.
 * It is pending from the first evaluation that finds it, firing once it has been found in
 * every evaluation for `for`, and resolved at the first evaluation that does not find it
 * (or, pending, forgotten). Firing alerts are sent to every Alertmanager (POST
 * /api/v2/alerts) at each evaluation with endsAt four intervals ahead (at least a minute),
 * resolved ones once with endsAt = t; webhooks get {"status":"firing"|"resolved",
 * "alerts":[...]} (Alertmanager's webhook shape) once per change of state. A failed
 * evaluation changes no alert. Notifications go through a bounded queue on a thread of
 * their own (alerting.timeout each), so a dead receiver never delays an evaluation; what
 * does not fit is dropped and counted. */
#ifndef SC_RULES_H
#define SC_RULES_H

#include <stdint.h>

#include "model/buf.h"
#include "config/config.h"
#include "store/store.h"

struct sc_rules;

struct sc_rules_env {
    struct sc_store *store;
    const char *external_url; /* the UI's address for links (the config's external_url wins) */
    uint64_t query_memory;    /* one evaluation's budget (server.query_memory); 0: none */
    int64_t query_timeout_ns; /* its time (server.query_timeout); 0: none */
    /* one of the server's heavy-query slots: 0 when admitted; NULL: none asked */
    int (*admit)(void *ctx);
    void (*unadmit)(void *ctx);
    void *ctx;
};

/* Compiles cf's rules: and alerting: (cf is not kept). Nothing runs until sc_rules_start.
 * 0 or SC_E* with the reason in err. Free with sc_rules_stop_free. */
int sc_rules_new(const struct sc_config *cf, const struct sc_rules_env *env, struct sc_rules **out,
                 char *err);
/* Starts the evaluation and notification threads. 0 or SC_E*. */
int sc_rules_start(struct sc_rules *r, char *err);
/* One round of every rule at t_ns, on the caller's thread (the scheduler calls it; tests
 * too, with the threads not started: notifications then wait in the queue). */
void sc_rules_eval(struct sc_rules *r, int64_t t_ns);
/* Appends the record rules' series of their last evaluation and the rules' own metrics
 * (scorch_rule_*, scorch_alert_*). For GET /metrics; safe from any thread. */
void sc_rules_metrics(struct sc_rules *r, struct sc_buf *out);
/* Stops the threads (an evaluation in flight stops within 50 ms, a notification in flight
 * at once; the queue is dropped) and frees everything. NULL is fine. */
void sc_rules_stop_free(struct sc_rules *r);

#endif
