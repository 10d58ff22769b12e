/* rules_int.h - what the rules' files share: rules.c (the schedule, record rules, metrics),
 * rules_alert.c (alerts' states, their JSON and links), rules_notify.c (the queue of
 * notifications and its thread).
 *
 * DESIGN. Threads and what they own:
 *   evaluation thread  every rule's state while it evaluates (struct rule's alerts and
 *                      scratch); it publishes what /metrics shows under sc_rules.mu
 *   notify thread      its curl handle; takes notifications off the queue under qmu
 *   HTTP handlers      read under mu (sc_rules_metrics) and qmu (queue figures)
 * mu and qmu are never held together; neither is held during a store query or a request. */
#ifndef SC_RULES_INT_H
#define SC_RULES_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "query/plan.h"
#include "model/error.h"
#include "model/labels.h"
#include "query/changes.h"
#include "query/regex.h"
#include "server/rules.h"

/* ---- alerts (rules_alert.c) ---- */

enum { SC_ALERT_PENDING, SC_ALERT_FIRING, SC_ALERT_RESOLVED };

/* One alert of a rule: a finding (group, function, kind) while it holds. */
struct sc_alert {
    char *key;   /* group \x1f function \x1f kind: its identity */
    char *group; /* the group's value (without group_by: the series' canonical labels) */
    char *function;
    struct sc_change c; /* the last finding (its group and function indices are stale) */
    char unit[80];      /* of c's values */
    int64_t since_ns;   /* the first evaluation that found it (startsAt) */
    int state;          /* SC_ALERT_* */
    int fired;          /* became firing in the last round */
    int seen;           /* found in the last round */
};

struct sc_alerts {
    struct sc_alert *v;
    uint32_t n, cap;
};

/* One finding of an evaluation. */
struct sc_alert_in {
    const char *group, *function;
    const struct sc_change *c;
    const char *unit;
};

/* Applies one evaluation's findings at t: a new one is pending (firing at once when for_ns
 * is 0); a pending one found for for_ns fires; a firing one not found is resolved, a
 * pending one not found forgotten. Alerts resolved in the round before are dropped first.
 * 0 or SC_ENOMEM (then the alerts are as they were, but for the round's resolved ones). */
int sc_alerts_update(struct sc_alerts *a, const struct sc_alert_in *in, uint32_t n, int64_t t_ns,
                     int64_t for_ns);
void sc_alerts_release(struct sc_alerts *a);

/* What an alert's JSON needs of its rule and round. */
struct sc_alert_ctx {
    const struct sc_rule *rule;
    const char *external_url; /* no trailing '/' */
    const char *query;        /* the rule's query in canonical form */
    int64_t t_ns;             /* the evaluation's time */
    int64_t ends_ns;          /* a firing alert's endsAt */
};

/* Appends a as Alertmanager's v2 API takes it: {"labels":{...},"annotations":{...},
 * "startsAt":...,"endsAt":...,"generatorURL":...}; with status (a webhook's alert) also
 * "status". */
void sc_alert_json(const struct sc_alert_ctx *x, const struct sc_alert *a, int status,
                   struct sc_buf *out);
/* Appends the diff view's URL for a: the group's selection before the change against after
 * it (base_from/base_until, from/until), the function searched. */
void sc_alert_diff_url(const struct sc_alert_ctx *x, const struct sc_alert *a, struct sc_buf *out);

/* The labels of a group as Prometheus and Alertmanager name them: group_by (or, without
 * it, each of the series' labels in key) with every character outside [a-zA-Z0-9_] as '_';
 * a name the rule sets itself (function, alertname, kind) gets an "exported_" prefix. 0 or
 * SC_E* (a key that does not parse). out must be initialised; release it. */
int sc_rules_group_labels(const char *group_by, const char *key, struct sc_labels *out, char *err);

/* ---- notifications (rules_notify.c) ---- */

enum { SC_TO_ALERTMANAGER, SC_TO_WEBHOOK, SC_NTO };

struct sc_note {
    struct sc_note *next;
    int to;
    char *url;
    char *body;
    size_t len;
};

/* The queue's bounds: an Alertmanager outage of hours leaves the last notifications, not
 * all of them. */
#define SC_NOTE_MAX 256
#define SC_NOTE_MAX_BYTES (64u << 20)

/* ---- the rules (rules.c) ---- */

struct rule {
    struct sc_rule cfg; /* a copy: the config is not kept */
    pcre2_code *re;     /* cfg.regex compiled */
    char *query;        /* cfg.query in canonical form */
    struct sc_alerts alerts;
    /* published under mu */
    char *text; /* a record rule's series of the last evaluation, Prometheus text */
    uint32_t series, dropped;
    uint32_t pending, firing;
    int64_t last_t;   /* the last evaluation's time, ns; 0: none yet */
    double last_secs; /* what it took */
    int last_ok;
    /* the evaluation thread's: a limit hit is logged when it starts and when it ends, a
     * failure when it is not the one logged last (and the recovery) */
    int limited;
    char last_err[SC_ERR_LEN];
};

struct sc_rules {
    struct sc_rules_env env;
    char *external_url;
    struct rule *rules;
    uint32_t n;
    int64_t interval_ns, timeout_ns;
    char **alertmanagers, **webhooks; /* alertmanagers: their /api/v2/alerts URLs */
    uint32_t nalertmanagers, nwebhooks;
    int stop_pipe[2]; /* an evaluation's budget watches [0]; closing [1] stops it */
    /* the evaluation thread */
    pthread_t thread;
    int started;
    pthread_mutex_t mu; /* guards stop and the published fields */
    pthread_cond_t cv;
    int stop;
    uint64_t evals[2], failures[2], skipped; /* by SC_RULE_RECORD, SC_RULE_ALERT */
    double seconds[2];
    /* the notify thread */
    pthread_t nthread;
    int nstarted;
    pthread_mutex_t qmu;
    pthread_cond_t qcv;
    struct sc_note *head, *tail;
    uint32_t qlen;
    uint64_t qbytes;
    int qstop;
    _Atomic int abort_io;
    _Atomic uint64_t sent[SC_NTO], failed[SC_NTO], dropped;
    /* the notify thread's: per receiver (alertmanagers, then webhooks), since when it fails
     * (0: it does not) and when that was last logged (at most once a minute) */
    int64_t *failing_since, *failing_logged;
};

/* Queues a POST of body (taken: freed by the queue) to url; drops the oldest beyond the
 * queue's bounds. */
void sc_rules_notify(struct sc_rules *r, int to, const char *url, char *body, size_t len);
void *sc_rules_notify_run(void *arg);
void sc_rules_notify_metrics(struct sc_rules *r, struct sc_buf *out);
void sc_rules_notify_clear(struct sc_rules *r);

/* An alert rule's evaluation at t (rules_alert.c): 0 or SC_E* with the reason in err. */
int sc_rules_eval_alert(struct sc_rules *rs, struct rule *r, int64_t t_ns, char *err);
/* A rule's selection over its window ending at t_ns: its query and type over
 * [t_ns - range, t_ns), its series found. 0 or SC_E* with err set; release s either way. */
int sc_rules_window(struct sc_rules *rs, const struct rule *r, int64_t t_ns, struct sc_selection *s,
                    char *err);
/* After every rule of a round: the notifications of the round's alerts. */
void sc_rules_send_alerts(struct sc_rules *rs, int64_t t_ns);

/* The server's log: one line on stderr, "scorch: rules: ..." */
void sc_rules_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
