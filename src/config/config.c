/* config.c - YAML configuration through libyaml's document API. */
#include "config/config.h"
#include "config/config_int.h"
#include "model/error.h"
#include "model/labels.h"
#include "model/setting.h"
#include "model/timespec.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sc_cfg_fail(struct sc_cfg *c, yaml_node_t *n, const char *fmt, const char *what)
{
    char msg[SC_ERR_LEN];
    snprintf(msg, sizeof msg, fmt, what);
    return sc_errf(c->err, SC_EINVAL, "config '%s' line %lu: %s", c->name,
                   n ? (unsigned long)n->start_mark.line + 1 : 0UL, msg);
}

const char *sc_cfg_scalar(yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

int sc_cfg_setting(struct sc_cfg *c, yaml_node_t *v, enum sc_set_id id, struct sc_set_value *out)
{
    char msg[SC_ERR_LEN];
    if (sc_setting_parse(sc_setting(id), sc_cfg_scalar(v), NULL, out, msg))
        return sc_cfg_fail(c, v, "%s", msg);
    return 0;
}

/* Where a setting of settings.def lands in struct sc_config, and as what. Settings not
 * listed here are read by hand below (lists, token files, per-job and limits keys). */
enum field_kind { F_I64, F_U64, F_U32, F_I32, F_STR, F_BOOL };
static const struct {
    enum sc_set_id id;
    size_t off;
    enum field_kind kind;
} fields[] = {
#define FIELD(id, f, k)                                                                            \
    {                                                                                              \
        SC_SET_##id, offsetof(struct sc_config, f), k                                              \
    }
    FIELD(SERVER_LISTEN, listen, F_STR),
    FIELD(SERVER_SHUTDOWN_TIMEOUT, shutdown_timeout_ns, F_I64),
    FIELD(SERVER_LAYOUT_TIMEOUT, layout_timeout_ns, F_I64),
    FIELD(SERVER_MAX_READ_ROWS, max_read_rows, F_U64),
    FIELD(SERVER_MAX_QUERIES, max_queries, F_U32),
    FIELD(SERVER_QUERY_MEMORY, query_memory, F_U64),
    FIELD(SERVER_QUERY_TIMEOUT, query_timeout_ns, F_I64),
    FIELD(SERVER_MAX_READ_BLOCKS, max_read_blocks, F_U64),
    FIELD(OTLP_GRPC_LISTEN, otlp_grpc_listen, F_STR),
    FIELD(STORAGE_ENGINE, storage_engine, F_STR),
    FIELD(STORAGE_PATH, storage_path, F_STR),
    FIELD(STORAGE_RETENTION, retention_ns, F_I64),
    FIELD(STORAGE_CACHE_MEMORY, storage_cache_memory, F_U64),
    FIELD(STORAGE_READ_ONLY_RETRY, storage_ro_retry_ns, F_I64),
    FIELD(STORAGE_URL, storage_url, F_STR),
    FIELD(STORAGE_CLUSTER, storage_cluster, F_STR),
    FIELD(STORAGE_DATABASE, storage_database, F_STR),
    FIELD(STORAGE_WRITE_TIMEOUT, storage_write_timeout_ns, F_I64),
    FIELD(STORAGE_QUERY_TIMEOUT, storage_query_timeout_ns, F_I64),
    FIELD(STORAGE_MAX_ANSWER, storage_max_answer, F_U64),
    FIELD(STORAGE_LOG_LIMIT, storage_log_limit, F_U64),
    FIELD(REMOTE_URL, remote_url, F_STR),
    FIELD(REMOTE_QUEUE_DIR, remote_queue_dir, F_STR),
    FIELD(REMOTE_QUEUE_MAX_BYTES, remote_queue_bytes, F_U64),
    FIELD(REMOTE_MIN_BACKOFF, remote_min_backoff_ns, F_I64),
    FIELD(REMOTE_MAX_BACKOFF, remote_max_backoff_ns, F_I64),
    FIELD(REMOTE_TIMEOUT, remote_timeout_ns, F_I64),
    FIELD(RECORD_FREQUENCY, record_frequency, F_U32),
    FIELD(RECORD_INTERVAL, record_interval_ns, F_I64),
    FIELD(RECORD_PID, record_pid, F_I32),
    FIELD(RECORD_DWARF, record_dwarf, F_BOOL),
    FIELD(RECORD_OFF_CPU, record_off_cpu, F_BOOL),
    FIELD(RECORD_UNWIND, record_unwind, F_I32),
    FIELD(RECORD_STACK_SIZE, record_stack_size, F_U32),
#undef FIELD
};

/* Reads node v as setting id into base + off (a struct sc_config, or another struct whose
 * fields the caller names): 1 when the key is not a table setting the caller handles this
 * way, else 0 or SC_E*. */
static int set_field(struct sc_cfg *c, yaml_node_t *v, const struct sc_setting *st, void *field,
                     enum field_kind kind)
{
    struct sc_set_value val;
    if (sc_cfg_setting(c, v, st->id, &val))
        return SC_EINVAL;
    switch (kind) {
    case F_I64:
        *(int64_t *)field = val.i;
        break;
    case F_U64:
        *(uint64_t *)field = (uint64_t)val.i;
        break;
    case F_U32:
        *(uint32_t *)field = (uint32_t)val.i;
        break;
    case F_I32:
    case F_BOOL:
        *(int32_t *)field = (int32_t)val.i;
        break;
    case F_STR: {
        char **p = field, *d = strdup(val.s);
        if (!d)
            return sc_errf(c->err, SC_ENOMEM, "out of memory");
        free(*p);
        *p = d;
        break;
    }
    }
    return 0;
}

/* A key of the table that lands in struct sc_config: 1 when key is none of them. */
static int set_config_key(struct sc_cfg *c, const char *key, yaml_node_t *v, struct sc_config *cf,
                          int *rc)
{
    const struct sc_setting *st = sc_setting_find(key);
    for (size_t i = 0; st && i < sizeof fields / sizeof fields[0]; i++)
        if (fields[i].id == st->id) {
            *rc = set_field(c, v, st, (char *)cf + fields[i].off, fields[i].kind);
            return 0;
        }
    return 1;
}

static char *dup_scalar(struct sc_cfg *c, yaml_node_t *n, const char *key, int *rc)
{
    const char *s = sc_cfg_scalar(n);
    if (!s) {
        *rc = sc_cfg_fail(c, n, "'%s' must be a string", key);
        return NULL;
    }
    char *d = strdup(s);
    if (!d)
        *rc = sc_errf(c->err, SC_ENOMEM, "out of memory");
    return d;
}

char *sc_config_read_token(const char *path, char *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        sc_errf(err, SC_EIO, "cannot read token file '%s': %s", path, strerror(errno));
        return NULL;
    }
    char line[4096] = "";
    if (!fgets(line, sizeof line, f))
        line[0] = 0;
    fclose(f);
    size_t l = strlen(line);
    while (l && (line[l - 1] == '\n' || line[l - 1] == '\r' || line[l - 1] == ' '))
        line[--l] = 0;
    if (!l) {
        sc_errf(err, SC_EINVAL, "token file '%s' is empty", path);
        return NULL;
    }
    char *t = strdup(line);
    if (!t)
        sc_errf(err, SC_ENOMEM, "out of memory");
    return t;
}

static char *read_token_file(struct sc_cfg *c, yaml_node_t *n, const char *path, int *rc)
{
    char msg[SC_ERR_LEN];
    char *t = sc_config_read_token(path, msg);
    if (!t)
        *rc = sc_cfg_fail(c, n, "%s", msg);
    return t;
}

/* YAML wants a mapping's keys unique and libyaml does not check: a second `path:` would
 * silently win (and the first value leak). Refused, naming the key. */
int sc_cfg_unique_keys(struct sc_cfg *c, yaml_node_t *map)
{
    for (yaml_node_pair_t *a = map->data.mapping.pairs.start; a < map->data.mapping.pairs.top;
         a++) {
        const char *ka = sc_cfg_scalar(yaml_document_get_node(c->doc, a->key));
        for (yaml_node_pair_t *b = map->data.mapping.pairs.start; ka && b < a; b++) {
            const char *kb = sc_cfg_scalar(yaml_document_get_node(c->doc, b->key));
            if (kb && !strcmp(ka, kb))
                return sc_cfg_fail(c, yaml_document_get_node(c->doc, a->key), "duplicate key '%s'",
                                   ka);
        }
    }
    return 0;
}

uint32_t sc_config_profile_bit(const char *name)
{
    static const char *const names[] = {"cpu",   "heap",  "allocs",      "goroutine",
                                        "mutex", "block", "threadcreate"};
    for (uint32_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(name, names[i]))
            return 1u << i;
    return 0;
}

int sc_cfg_strlist(struct sc_cfg *c, yaml_node_t *n, const char *key, char ***out, uint32_t *count)
{
    if (n->type != YAML_SEQUENCE_NODE)
        return sc_cfg_fail(c, n, "'%s' must be a list", key);
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
        yaml_node_t *e = yaml_document_get_node(c->doc, *it);
        const char *s = sc_cfg_scalar(e);
        if (!s || !*s)
            return sc_cfg_fail(c, e, "'%s' entries must be strings", key);
        char **nl = realloc(*out, (*count + 1) * sizeof *nl);
        if (!nl)
            return sc_errf(c->err, SC_ENOMEM, "out of memory");
        *out = nl;
        if (!(nl[*count] = strdup(s)))
            return sc_errf(c->err, SC_ENOMEM, "out of memory");
        (*count)++;
    }
    return 0;
}

/* A `labels:` mapping, appended to the names and values arrays. */
int sc_cfg_label_map(struct sc_cfg *c, yaml_node_t *v, char ***names, char ***values, uint32_t *n)
{
    if (v->type != YAML_MAPPING_NODE)
        return sc_cfg_fail(c, v, "'labels' must be a mapping%s", "");
    yaml_node_t *lk, *lv;
    if (sc_cfg_unique_keys(c, v))
        return SC_EINVAL;
    FOR_PAIRS(c, v, it2, lk, lv)
    {
        const char *ln = sc_cfg_scalar(lk), *lvs = sc_cfg_scalar(lv);
        if (!ln || !lvs || !*ln)
            return sc_cfg_fail(c, lk, "labels must be name: value%s", "");
        char why[SC_ERR_LEN];
        if (sc_label_check(ln, strlen(ln), strlen(lvs), why))
            return sc_cfg_fail(c, lk, "%s", why);
        /* service_name, job and instance come on top */
        snprintf(why, sizeof why, "too many labels (a series has at most %d)",
                 SC_SERIES_LABELS_MAX);
        if (*n + 3 >= SC_SERIES_LABELS_MAX)
            return sc_cfg_fail(c, lk, "%s", why);
        char **nn = realloc(*names, (*n + 1) * sizeof *nn);
        if (nn)
            *names = nn;
        char **nv = nn ? realloc(*values, (*n + 1) * sizeof *nv) : NULL;
        if (nv)
            *values = nv;
        if (!nn || !nv)
            return sc_errf(c->err, SC_ENOMEM, "out of memory");
        (*names)[*n] = strdup(ln);
        (*values)[*n] = strdup(lvs);
        if (!(*names)[*n] || !(*values)[*n]) {
            free((*names)[*n]);
            free((*values)[*n]);
            return sc_errf(c->err, SC_ENOMEM, "out of memory");
        }
        (*n)++;
    }
    return 0;
}

/* A job's `labels:`, appended to its static labels. */
static int parse_labels(struct sc_cfg *c, yaml_node_t *v, struct sc_scrape_job *j)
{
    return sc_cfg_label_map(c, v, &j->label_names, &j->label_values, &j->nlabels);
}

/* record: {frequency: 99, interval: 10s, pid: 1234, labels: {k: v}, dwarf: false,
 *          off_cpu: true, off_cpu_min: 100us} */
static int parse_record(struct sc_cfg *c, yaml_node_t *n, struct sc_config *cf)
{
    if (n->type != YAML_MAPPING_NODE)
        return sc_cfg_fail(c, n, "'record' must be a mapping%s", "");
    if (sc_cfg_unique_keys(c, n))
        return SC_EINVAL;
    cf->record = 1;
    cf->record_dwarf = -1;
    yaml_node_t *k, *v;
    FOR_PAIRS(c, n, it8, k, v)
    {
        const char *key = sc_cfg_scalar(k);
        char full[64];
        int rc = 0;
        if (!key)
            return sc_cfg_fail(c, k, "bad key%s", "");
        snprintf(full, sizeof full, "record.%s", key);
        if (strcmp(key, "labels") && strcmp(key, "off_cpu_min") &&
            !set_config_key(c, full, v, cf, &rc)) {
            if (rc)
                return rc;
        } else if (!strcmp(key, "labels")) {
            rc = sc_cfg_label_map(c, v, &cf->record_label_names, &cf->record_label_values,
                                  &cf->record_nlabels);
            if (rc)
                return rc;
        } else if (!strcmp(key, "off_cpu_min")) {
            /* 0 keeps every span: -1 in the field, whose 0 is the default */
            struct sc_set_value d;
            if (sc_cfg_setting(c, v, SC_SET_RECORD_OFF_CPU_MIN, &d))
                return SC_EINVAL;
            cf->record_off_cpu_min_ns = d.i ? d.i : -1;
        } else {
            return sc_cfg_fail(c, k,
                               "unknown key '%s' in record (frequency, interval, pid, labels, "
                               "dwarf, unwind, stack_size, off_cpu, off_cpu_min)",
                               key);
        }
    }
    return 0;
}

static int parse_job(struct sc_cfg *c, yaml_node_t *n, struct sc_scrape_job *j)
{
    if (n->type != YAML_MAPPING_NODE)
        return sc_cfg_fail(c, n, "a scrape config must be a mapping%s", "");
    j->interval_ns = sc_setting_default_i(SC_SET_SCRAPE_INTERVAL);
    j->cpu_seconds = sc_setting_default_i(SC_SET_SCRAPE_CPU_SECONDS) / 1000000000LL;
    j->profiles = SC_PROFILE_ALL;
    yaml_node_t *k, *v;
    int rc = 0;
    if (sc_cfg_unique_keys(c, n))
        return SC_EINVAL;
    FOR_PAIRS(c, n, it3, k, v)
    {
        const char *key = sc_cfg_scalar(k);
        if (!key)
            return sc_cfg_fail(c, k, "bad key%s", "");
        if (!strcmp(key, "job_name")) {
            j->job_name = dup_scalar(c, v, key, &rc);
        } else if (!strcmp(key, "scrape_interval")) {
            rc = set_field(c, v, sc_setting(SC_SET_SCRAPE_INTERVAL), &j->interval_ns, F_I64);
        } else if (!strcmp(key, "scrape_timeout")) {
            rc = set_field(c, v, sc_setting(SC_SET_SCRAPE_TIMEOUT), &j->timeout_ns, F_I64);
        } else if (!strcmp(key, "cpu_seconds")) {
            int64_t d = 0;
            rc = set_field(c, v, sc_setting(SC_SET_SCRAPE_CPU_SECONDS), &d, F_I64);
            j->cpu_seconds = d / 1000000000LL;
        } else if (!strcmp(key, "targets")) {
            rc = sc_cfg_strlist(c, v, key, &j->targets, &j->ntargets);
        } else if (!strcmp(key, "delta")) {
            /* the choices are in SC_DELTA_* order */
            rc = set_field(c, v, sc_setting(SC_SET_SCRAPE_DELTA), &j->delta, F_I32);
        } else if (!strcmp(key, "static_configs")) {
            /* Prometheus's shape: [{targets: [...], labels: {...}}] */
            if (v->type != YAML_SEQUENCE_NODE)
                return sc_cfg_fail(c, v, "'%s' must be a list", key);
            for (yaml_node_item_t *it = v->data.sequence.items.start;
                 !rc && it < v->data.sequence.items.top; it++) {
                yaml_node_t *sc = yaml_document_get_node(c->doc, *it), *k2, *v2;
                if (sc->type != YAML_MAPPING_NODE)
                    return sc_cfg_fail(c, sc, "static_configs entries must be mappings%s", "");
                if (sc_cfg_unique_keys(c, sc))
                    return SC_EINVAL;
                FOR_PAIRS(c, sc, it4, k2, v2)
                {
                    const char *k2s = sc_cfg_scalar(k2);
                    if (k2s && !strcmp(k2s, "targets"))
                        rc = sc_cfg_strlist(c, v2, "targets", &j->targets, &j->ntargets);
                    else if (k2s && !strcmp(k2s, "labels"))
                        rc = parse_labels(c, v2, j);
                    else
                        return sc_cfg_fail(c, k2, "unknown key '%s' in static_configs",
                                           k2s ? k2s : "");
                    if (rc)
                        return rc;
                }
            }
        } else if (!strcmp(key, "labels")) {
            rc = parse_labels(c, v, j);
        } else if (!strcmp(key, "profiles")) {
            if (v->type != YAML_SEQUENCE_NODE)
                return sc_cfg_fail(c, v, "'%s' must be a list", key);
            j->profiles = 0;
            for (yaml_node_item_t *it = v->data.sequence.items.start;
                 it < v->data.sequence.items.top; it++) {
                yaml_node_t *e = yaml_document_get_node(c->doc, *it);
                uint32_t bit = sc_cfg_scalar(e) ? sc_config_profile_bit(sc_cfg_scalar(e)) : 0;
                if (!bit)
                    return sc_cfg_fail(c, e,
                                       "unknown profile '%s' (cpu, heap, allocs, goroutine, mutex, "
                                       "block, threadcreate)",
                                       sc_cfg_scalar(e) ? sc_cfg_scalar(e) : "");
                j->profiles |= bit;
            }
        } else if (!strcmp(key, "scheme")) {
            rc = set_field(c, v, sc_setting(SC_SET_SCRAPE_SCHEME), &j->scheme, F_STR);
        } else if (!strcmp(key, "path_prefix") || !strcmp(key, "metrics_path")) {
            j->path_prefix = dup_scalar(c, v, key, &rc);
        } else if (!strcmp(key, "bearer_token")) {
            j->bearer_token = dup_scalar(c, v, key, &rc);
        } else if (!strcmp(key, "bearer_token_file")) {
            const char *path = sc_cfg_scalar(v);
            if (!path)
                return sc_cfg_fail(c, v, "'%s' must be a path", key);
            j->bearer_token = read_token_file(c, v, path, &rc);
        } else if (!strcmp(key, "basic_auth")) {
            yaml_node_t *bk, *bv;
            if (v->type != YAML_MAPPING_NODE)
                return sc_cfg_fail(c, v, "'%s' must be a mapping", key);
            if (sc_cfg_unique_keys(c, v))
                return SC_EINVAL;
            FOR_PAIRS(c, v, it5, bk, bv)
            {
                const char *bks = sc_cfg_scalar(bk);
                if (bks && !strcmp(bks, "username"))
                    j->basic_user = dup_scalar(c, bv, bks, &rc);
                else if (bks && !strcmp(bks, "password"))
                    j->basic_password = dup_scalar(c, bv, bks, &rc);
                else if (bks && !strcmp(bks, "password_file"))
                    j->basic_password =
                        read_token_file(c, bv, sc_cfg_scalar(bv) ? sc_cfg_scalar(bv) : "", &rc);
                else
                    return sc_cfg_fail(c, bk, "unknown key '%s' in basic_auth", bks ? bks : "");
            }
        } else {
            return sc_cfg_fail(c, k, "unknown key '%s' in scrape_configs", key);
        }
        if (rc)
            return rc;
    }
    if (!j->job_name || !*j->job_name)
        return sc_cfg_fail(c, n, "a scrape config needs a job_name%s", "");
    /* as Prometheus: 10 s, never longer than the interval (a snapshot that takes longer
     * than the interval would overlap the next one); CPU profiles and target-side deltas
     * get their duration on top (see src/collect/scrape.h) */
    int64_t timeout = sc_setting_default_i(SC_SET_SCRAPE_TIMEOUT);
    if (j->timeout_ns == 0)
        j->timeout_ns = j->interval_ns < timeout ? j->interval_ns : timeout;
    return 0;
}

/* limits.KEY: a per-input limit (formats/limits.h) over the server's default. */
static int parse_limit(struct sc_cfg *c, const char *key, yaml_node_t *v, struct sc_limits *l)
{
    static const struct {
        enum sc_set_id id;
        size_t off;
        enum field_kind kind;
    } limits[] = {
        {SC_SET_LIMITS_MAX_AGE, offsetof(struct sc_limits, max_age_ns), F_I64},
        {SC_SET_LIMITS_MAX_AHEAD, offsetof(struct sc_limits, max_ahead_ns), F_I64},
        {SC_SET_LIMITS_MAX_SAMPLES, offsetof(struct sc_limits, max_samples), F_U32},
        {SC_SET_LIMITS_MAX_STRING, offsetof(struct sc_limits, max_string), F_U32},
        {SC_SET_LIMITS_MAX_STACK_DEPTH, offsetof(struct sc_limits, max_stack_depth), F_U32},
        {SC_SET_LIMITS_MAX_LABELS, offsetof(struct sc_limits, max_labels), F_U32},
    };
    char full[64];
    snprintf(full, sizeof full, "limits.%s", key);
    const struct sc_setting *st = sc_setting_find(full);
    for (size_t i = 0; st && i < sizeof limits / sizeof limits[0]; i++)
        if (limits[i].id == st->id)
            return set_field(c, v, st, (char *)l + limits[i].off, limits[i].kind);
    return sc_cfg_fail(c, v,
                       "unknown key 'limits.%s' (max_age, max_ahead, max_samples, max_string, "
                       "max_stack_depth, max_labels)",
                       key);
}

/* auth.tenants: {NAME: {token: T} or {token_file: F}, ...}, one token per tenant. Names
 * as X-Scope-OrgID takes them; a token may not be another tenant's or the server's. */
static int parse_tenants(struct sc_cfg *c, yaml_node_t *v, struct sc_config *cf)
{
    if (v->type != YAML_MAPPING_NODE)
        return sc_cfg_fail(c, v, "'auth.tenants' must be a mapping of tenant: {token_file: ...}%s",
                           "");
    if (sc_cfg_unique_keys(c, v))
        return SC_EINVAL;
    yaml_node_t *tk, *tv;
    FOR_PAIRS(c, v, it9, tk, tv)
    {
        const char *name = sc_cfg_scalar(tk);
        if (!name || !*name || strlen(name) > SC_TENANT_MAX || strpbrk(name, "\r\n"))
            return sc_cfg_fail(c, tk,
                               "bad tenant name '%.200s' in auth.tenants (one line of 1 to 127 "
                               "bytes, as X-Scope-OrgID)",
                               name ? name : "");
        if (tv->type != YAML_MAPPING_NODE)
            return sc_cfg_fail(c, tv, "auth.tenants.%s must be {token: ...} or {token_file: ...}",
                               name);
        char **nn = realloc(cf->tenant_names, (cf->ntenants + 1) * sizeof *nn);
        if (nn)
            cf->tenant_names = nn;
        char **nt = nn ? realloc(cf->tenant_tokens, (cf->ntenants + 1) * sizeof *nt) : NULL;
        if (nt)
            cf->tenant_tokens = nt;
        if (!nn || !nt || !(nn[cf->ntenants] = strdup(name)))
            return sc_errf(c->err, SC_ENOMEM, "out of memory");
        nt[cf->ntenants] = NULL;
        char **tok = &nt[cf->ntenants++];
        yaml_node_t *k, *val;
        int rc = 0;
        if (sc_cfg_unique_keys(c, tv))
            return SC_EINVAL;
        FOR_PAIRS(c, tv, it10, k, val)
        {
            const char *key = sc_cfg_scalar(k);
            if (*tok)
                return sc_cfg_fail(c, k, "auth.tenants.%s has both token and token_file", name);
            if (key && !strcmp(key, "token")) {
                *tok = dup_scalar(c, val, key, &rc);
                if (!rc && *tok && !**tok)
                    return sc_cfg_fail(c, val, "auth.tenants.%s.token is empty", name);
            } else if (key && !strcmp(key, "token_file")) {
                *tok = read_token_file(c, val, sc_cfg_scalar(val) ? sc_cfg_scalar(val) : "", &rc);
            } else {
                return sc_cfg_fail(c, k, "unknown key '%s' in auth.tenants (token, token_file)",
                                   key ? key : "");
            }
            if (rc)
                return rc;
        }
        if (!*tok)
            return sc_cfg_fail(c, tv, "auth.tenants.%s needs a token or a token_file", name);
    }
    return 0;
}

/* The tokens are told apart by value: the same one twice would not say whose it is. */
static int distinct_tokens(struct sc_cfg *c, yaml_node_t *auth, const struct sc_config *cf)
{
    for (uint32_t i = 0; i < cf->ntenants; i++) {
        char msg[SC_ERR_LEN];
        if (cf->auth_token && !strcmp(cf->auth_token, cf->tenant_tokens[i])) {
            snprintf(msg, sizeof msg, "auth.tenants.%.128s has the server's token (auth.token)",
                     cf->tenant_names[i]);
            return sc_cfg_fail(c, auth, "%s", msg);
        }
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(cf->tenant_tokens[i], cf->tenant_tokens[j])) {
                snprintf(msg, sizeof msg,
                         "auth.tenants.%.100s and auth.tenants.%.100s have the "
                         "same token",
                         cf->tenant_names[j], cf->tenant_names[i]);
                return sc_cfg_fail(c, auth, "%s", msg);
            }
    }
    return 0;
}

/* server.tls: {cert_file: PEM, key_file: PEM}, both or neither. */
static int parse_tls(struct sc_cfg *c, yaml_node_t *v, struct sc_config *cf)
{
    if (v->type != YAML_MAPPING_NODE)
        return sc_cfg_fail(c, v, "'server.tls' must be a mapping {cert_file: ..., key_file: ...}%s",
                           "");
    if (sc_cfg_unique_keys(c, v))
        return SC_EINVAL;
    yaml_node_t *k, *val;
    int rc = 0;
    FOR_PAIRS(c, v, it11, k, val)
    {
        const char *key = sc_cfg_scalar(k);
        if (key && !strcmp(key, "cert_file"))
            cf->tls_cert = dup_scalar(c, val, key, &rc);
        else if (key && !strcmp(key, "key_file"))
            cf->tls_key = dup_scalar(c, val, key, &rc);
        else
            return sc_cfg_fail(c, k, "unknown key '%s' in server.tls (cert_file, key_file)",
                               key ? key : "");
        if (rc)
            return rc;
    }
    if (!cf->tls_cert || !cf->tls_key || !*cf->tls_cert || !*cf->tls_key)
        return sc_cfg_fail(c, v, "server.tls needs both cert_file and key_file%s", "");
    return 0;
}

static int parse_root(struct sc_cfg *c, struct sc_config *cf)
{
    yaml_node_t *root = yaml_document_get_root_node(c->doc);
    if (!root)
        return sc_cfg_rules_check(c, cf); /* an empty file is an empty config */
    if (root->type != YAML_MAPPING_NODE)
        return sc_cfg_fail(c, root, "the top level must be a mapping%s", "");
    yaml_node_t *k, *v;
    int rc = 0;
    if (sc_cfg_unique_keys(c, root))
        return SC_EINVAL;
    FOR_PAIRS(c, root, it6, k, v)
    {
        const char *key = sc_cfg_scalar(k);
        if (!key)
            return sc_cfg_fail(c, k, "bad key%s", "");
        if (!strcmp(key, "scrape_configs")) {
            if (v->type != YAML_SEQUENCE_NODE)
                return sc_cfg_fail(c, v, "'%s' must be a list", key);
            for (yaml_node_item_t *it = v->data.sequence.items.start;
                 it < v->data.sequence.items.top; it++) {
                struct sc_scrape_job *nj = realloc(cf->jobs, (cf->njobs + 1) * sizeof *nj);
                if (!nj)
                    return sc_errf(c->err, SC_ENOMEM, "out of memory");
                cf->jobs = nj;
                memset(&nj[cf->njobs], 0, sizeof *nj);
                cf->njobs++;
                rc = parse_job(c, yaml_document_get_node(c->doc, *it), &nj[cf->njobs - 1]);
                if (rc)
                    return rc;
            }
        } else if (!strcmp(key, "remote_write") || !strcmp(key, "auth") ||
                   !strcmp(key, "storage") || !strcmp(key, "server") || !strcmp(key, "otlp") ||
                   !strcmp(key, "limits")) {
            if (v->type != YAML_MAPPING_NODE)
                return sc_cfg_fail(c, v, "'%s' must be a mapping", key);
            yaml_node_t *sk, *sv;
            if (sc_cfg_unique_keys(c, v))
                return SC_EINVAL;
            FOR_PAIRS(c, v, it7, sk, sv)
            {
                const char *s = sc_cfg_scalar(sk);
                if (!s)
                    return sc_cfg_fail(c, sk, "bad key%s", "");
                char sect_key[64];
                snprintf(sect_key, sizeof sect_key, "%s.%s", key, s);
                if (strcmp(key, "limits") && !set_config_key(c, sect_key, sv, cf, &rc)) {
                    /* a key of the settings table: read, checked and stored */
                } else if (!strcmp(sect_key, "remote_write.token"))
                    cf->remote_token = dup_scalar(c, sv, s, &rc);
                else if (!strcmp(sect_key, "remote_write.token_file"))
                    cf->remote_token =
                        read_token_file(c, sv, sc_cfg_scalar(sv) ? sc_cfg_scalar(sv) : "", &rc);
                else if ((!strcmp(sect_key, "auth.token") ||
                          !strcmp(sect_key, "auth.token_file")) &&
                         cf->auth_token) {
                    return sc_cfg_fail(c, sk, "auth has both token and token_file%s", "");
                } else if (!strcmp(sect_key, "auth.token")) {
                    cf->auth_token = dup_scalar(c, sv, s, &rc);
                    /* an empty token would silently mean "no authentication" */
                    if (!rc && cf->auth_token && !*cf->auth_token)
                        return sc_cfg_fail(c, sv,
                                           "auth.token is empty: set a token, or leave auth "
                                           "out for no authentication%s",
                                           "");
                } else if (!strcmp(sect_key, "auth.token_file"))
                    cf->auth_token =
                        read_token_file(c, sv, sc_cfg_scalar(sv) ? sc_cfg_scalar(sv) : "", &rc);
                else if (!strcmp(sect_key, "auth.tenants"))
                    rc = parse_tenants(c, sv, cf);
                else if (!strcmp(sect_key, "server.tls"))
                    rc = parse_tls(c, sv, cf);
                else if (!strcmp(sect_key, "storage.shards"))
                    rc = sc_cfg_strlist(c, sv, s, &cf->storage_shards, &cf->nstorage_shards);
                else if (!strcmp(sect_key, "server.source_roots"))
                    rc = sc_cfg_strlist(c, sv, s, &cf->source_roots, &cf->nsource_roots);
                else if (!strcmp(key, "limits"))
                    rc = parse_limit(c, s, sv, &cf->limits);
                else
                    return sc_cfg_fail(c, sk, "unknown key '%s'", sect_key);
                if (rc)
                    return rc;
            }
            if (!strcmp(key, "auth") && (rc = distinct_tokens(c, v, cf)))
                return rc;
        } else if (!strcmp(key, "record")) {
            rc = parse_record(c, v, cf);
            if (rc)
                return rc;
        } else if (!strcmp(key, "rules") || !strcmp(key, "alerting")) {
            rc = !strcmp(key, "rules") ? sc_cfg_rules(c, v, cf) : sc_cfg_alerting(c, v, cf);
            if (rc)
                return rc;
        } else {
            return sc_cfg_fail(
                c, k,
                "unknown key '%s' (scrape_configs, remote_write, auth, storage, server, "
                "otlp, limits, record, rules, alerting)",
                key);
        }
    }
    return sc_cfg_rules_check(c, cf);
}

int sc_config_parse(const char *text, size_t len, const char *name, struct sc_config *cf, char *err)
{
    memset(cf, 0, sizeof *cf);
    cf->retention_ns = (int64_t)30 * 86400 * 1000000000LL;
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return sc_errf(err, SC_ENOMEM, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int rc = 0;
    if (!yaml_parser_load(&parser, &doc)) {
        rc = sc_errf(err, SC_EINVAL, "config '%s' line %lu: %s", name,
                     (unsigned long)parser.problem_mark.line + 1,
                     parser.problem ? parser.problem : "bad YAML");
        yaml_parser_delete(&parser);
        return rc;
    }
    struct sc_cfg c = {&doc, name, err};
    rc = parse_root(&c, cf);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return rc;
}

int sc_config_load(const char *path, struct sc_config *cf, char *err)
{
    memset(cf, 0, sizeof *cf);
    FILE *f = fopen(path, "rb");
    if (!f)
        return sc_errf(err, SC_ENOTFOUND, "cannot read config '%s': %s", path, strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 4096;
            if (cap > (1u << 24)) {
                free(buf);
                fclose(f);
                return sc_errf(err, SC_ELIMIT, "config '%s' is larger than 16 MiB", path);
            }
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return sc_errf(err, SC_ENOMEM, "out of memory");
            }
            buf = nb;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        if (n == 0)
            break;
        len += n;
    }
    fclose(f);
    int rc = sc_config_parse(buf ? buf : "", len, path, cf, err);
    free(buf);
    return rc;
}

static void free_strs(char **v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void sc_config_release(struct sc_config *c)
{
    for (uint32_t i = 0; i < c->njobs; i++) {
        struct sc_scrape_job *j = &c->jobs[i];
        free(j->job_name);
        free_strs(j->targets, j->ntargets);
        free_strs(j->label_names, j->nlabels);
        free_strs(j->label_values, j->nlabels);
        free(j->scheme);
        free(j->path_prefix);
        free(j->bearer_token);
        free(j->basic_user);
        free(j->basic_password);
    }
    free(c->jobs);
    free(c->remote_url);
    free(c->remote_token);
    free(c->remote_queue_dir);
    free(c->auth_token);
    free_strs(c->tenant_names, c->ntenants);
    free_strs(c->tenant_tokens, c->ntenants);
    free(c->tls_cert);
    free(c->tls_key);
    free(c->otlp_grpc_listen);
    free(c->storage_engine);
    free(c->storage_path);
    free(c->storage_url);
    free(c->storage_cluster);
    free(c->storage_database);
    free_strs(c->storage_shards, c->nstorage_shards);
    free(c->listen);
    free_strs(c->source_roots, c->nsource_roots);
    free_strs(c->record_label_names, c->record_nlabels);
    free_strs(c->record_label_values, c->record_nlabels);
    sc_cfg_rules_release(c);
    memset(c, 0, sizeof *c);
}
