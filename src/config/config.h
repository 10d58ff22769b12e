/* config.h - the YAML configuration (Prometheus style): scraping, remote write, auth, store. */
#ifndef SC_CONFIG_H
#define SC_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "formats/limits.h"

/* One scrape job (scrape_configs[i]). */
struct sc_scrape_job {
    char *job_name;
    int64_t interval_ns; /* scrape_interval, default 15 s */
    int64_t timeout_ns;  /* scrape_timeout, default 10 s and at most the interval; a CPU
                            profile or a target-side delta gets its own duration on top */
    int64_t cpu_seconds; /* duration of each CPU profile (s), default 10 */
    int delta;           /* delta: SC_DELTA_AUTO (default), SC_DELTA_ENDPOINT, SC_DELTA_SUBTRACT */
    char **targets;      /* host:port */
    uint32_t ntargets;
    char **label_names, **label_values; /* static labels */
    uint32_t nlabels;
    uint32_t profiles;  /* bit set of SC_PROFILE_* (default: all) */
    char *scheme;       /* http (default) or https */
    char *path_prefix;  /* default /debug/pprof */
    char *bearer_token; /* for the target (bearer_token or bearer_token_file) */
    char *basic_user, *basic_password;
};

/* How cumulative profiles (allocs, mutex, block) become per-interval deltas: the target's
 * own `?seconds=<interval>` delta when it supports one (auto probes, endpoint insists), or
 * the scraper's subtraction of the previous scrape (subtract). */
enum { SC_DELTA_AUTO = 0, SC_DELTA_ENDPOINT = 1, SC_DELTA_SUBTRACT = 2 };

enum {
    SC_PROFILE_CPU = 1 << 0,
    SC_PROFILE_HEAP = 1 << 1,
    SC_PROFILE_ALLOCS = 1 << 2,
    SC_PROFILE_GOROUTINE = 1 << 3,
    SC_PROFILE_MUTEX = 1 << 4,
    SC_PROFILE_BLOCK = 1 << 5,
    SC_PROFILE_THREADCREATE = 1 << 6,
    SC_PROFILE_ALL = (1 << 7) - 1,
};

/* One entry of rules: (server/rules.h evaluates them). Strings are never NULL but where
 * said. */
enum sc_rule_kind { SC_RULE_RECORD, SC_RULE_ALERT };
struct sc_rule {
    enum sc_rule_kind kind;
    char *name;            /* record: the metric's name; alert: the alertname */
    char *type;            /* a profile type id, cpu:cpu */
    char *query;           /* a selector, default {} */
    char *group_by;        /* a label, default service_name; "": a group per series */
    char *tenant;          /* whose profiles, default "" (the default tenant) */
    uint32_t top;          /* functions: top N; 0 with regex set, or neither: the default */
    char *regex;           /* functions: a regex of function names (anchored), or NULL */
    int total;             /* value: total (record); 0: self */
    uint32_t limit;        /* record: series exported at most (1000); alert: findings kept (100) */
    int64_t range_ns;      /* the window each evaluation reads; 0: the default (record: the
                              evaluation interval, alert: 1h) */
    int64_t step_ns;       /* alert: the steps its functions are read in; 0: as the timeline's */
    uint32_t kinds;        /* alert: bit set of 1 << enum sc_change_kind (query/changes.h) */
    double min_change_pct; /* alert: a step's or a trend's |change| at least this */
    int64_t for_ns;        /* alert: how long a finding holds before it fires */
    char **label_names, **label_values; /* alert: labels added to its alerts */
    uint32_t nlabels;
    unsigned line; /* where it is in the file, for messages */
};

#define SC_RULE_KINDS_ALL 15u

struct sc_config {
    struct sc_scrape_job *jobs;
    uint32_t njobs;
    char *remote_url;              /* remote_write.url (agent) */
    char *remote_token;            /* remote_write token (token or token_file) */
    char *remote_queue_dir;        /* remote_write.queue_dir: the agent's on-disk queue */
    uint64_t remote_queue_bytes;   /* remote_write.queue_max_bytes, 0 = the default (256 MiB) */
    int64_t remote_min_backoff_ns; /* remote_write.min_backoff, 0 = the default (500 ms) */
    int64_t remote_max_backoff_ns; /* remote_write.max_backoff, 0 = the default (30 s) */
    int64_t remote_timeout_ns;     /* remote_write.timeout per push, 0 = the default (30 s) */
    char *auth_token;              /* auth.token / auth.token_file (server) */
    char **tenant_names, **tenant_tokens; /* auth.tenants: NAME: {token or token_file} */
    uint32_t ntenants;
    char *tls_cert, *tls_key;    /* server.tls: {cert_file, key_file} (paths) */
    int64_t shutdown_timeout_ns; /* server.shutdown_timeout: SIGTERM to exit, 0 = 5 s */
    char *storage_engine;        /* sqlite (default) or clickhouse */
    char *storage_path;          /* storage.path */
    char *storage_url;           /* storage.url (clickhouse: where queries go) */
    char *storage_cluster;       /* storage.cluster: the cluster in ClickHouse's remote_servers */
    char **storage_shards; /* storage.shards: each shard's HTTP URL, in remote_servers order */
    uint32_t nstorage_shards;
    char *storage_database; /* storage.database (clickhouse), default "default" */
    int64_t storage_write_timeout_ns, storage_query_timeout_ns; /* storage.write_timeout,
                                storage.query_timeout (clickhouse); 0 = the defaults */
    uint64_t storage_max_answer;   /* storage.max_answer (clickhouse): bytes; 0 = 1 GiB */
    uint64_t storage_log_limit;    /* storage.log_limit (clickhouse): each shard's local log,
                                      bytes; 0 = 1 GiB */
    uint64_t storage_cache_memory; /* storage.cache_memory (sqlite): bytes; 0 = 64 MiB */
    int64_t storage_ro_retry_ns;   /* storage.read_only_retry (sqlite): 0 = 10 s */
    int64_t retention_ns;          /* storage.retention, default 30 d */
    char *listen;                  /* server.listen */
    uint64_t max_read_blocks;      /* server.max_read_blocks: a query's budget; 0 = default */
    uint64_t max_read_rows;        /* server.max_read_rows: distinct stacks a query may hold */
    uint32_t max_queries;          /* server.max_queries: heavy queries at once */
    uint64_t query_memory;         /* server.query_memory: bytes one heavy query may hold */
    int64_t query_timeout_ns;      /* server.query_timeout: the time one heavy query may take */
    int64_t layout_timeout_ns;     /* server.layout_timeout: a call graph layout's deadline */
    char *otlp_grpc_listen;        /* otlp.grpc_listen: the OTLP/gRPC listener's host:port */
    struct sc_limits limits;       /* limits.*: overrides of sc_limits_server, 0 = the default */
    char **source_roots;           /* server.source_roots */
    uint32_t nsource_roots;
    /* record: the server samples its host (collect/record.h) */
    int record;                    /* a record: section is present */
    uint32_t record_frequency;     /* record.frequency (Hz), 0 = the default (99) */
    int64_t record_interval_ns;    /* record.interval, 0 = the default (10 s) */
    int32_t record_pid;            /* record.pid: one process instead of every CPU */
    int record_dwarf;              /* record.dwarf: file:line from DWARF; -1 = the default
                                      (with pid only) */
    int record_unwind;             /* record.unwind: enum sc_record_unwind (0 = auto) */
    uint32_t record_stack_size;    /* record.stack_size: bytes copied per sample; 0 = default */
    int record_off_cpu;            /* record.off_cpu: also off-CPU and wall time */
    int64_t record_off_cpu_min_ns; /* record.off_cpu_min; 0 = the default, < 0 = every span */
    char **record_label_names, **record_label_values; /* record.labels */
    uint32_t record_nlabels;
    /* rules: and alerting: (server/rules.h) */
    struct sc_rule *rules;
    uint32_t nrules;
    char **alertmanagers, **webhooks; /* alerting.alertmanagers (base URLs), webhooks */
    uint32_t nalertmanagers, nwebhooks;
    int64_t evaluation_interval_ns; /* alerting.evaluation_interval, 0 = the default (1m) */
    int64_t alert_timeout_ns;       /* alerting.timeout: one notification, 0 = 10 s */
    char *external_url; /* alerting.external_url: the UI's address in alerts' links; NULL:
                           http(s)://the listen address */
};

/* Reads path. Unknown keys are errors (typos should not be silent). 0 or SC_E* with
 * "config 'x.yaml' line 7: ..." in err. Free with sc_config_release (also on failure). */
int sc_config_load(const char *path, struct sc_config *c, char *err);
/* The same from text in memory (tests). */
int sc_config_parse(const char *text, size_t len, const char *name, struct sc_config *c, char *err);
void sc_config_release(struct sc_config *c);

/* The first line of a token file, without its line end (malloc'd), or NULL with "cannot
 * read token file 'x': why" / "token file 'x' is empty" in err. */
char *sc_config_read_token(const char *path, char *err);

/* Profile name -> SC_PROFILE_* bit, 0 when unknown. */
uint32_t sc_config_profile_bit(const char *name);

#endif
