/* server.h - `scorch server`: the HTTP API, Pyroscope-compatible ingest and the web UI. */
#ifndef SC_SERVER_H
#define SC_SERVER_H

#include <signal.h>
#include <stdint.h>

#include "formats/input.h"

struct sc_config;
struct sc_store_opts;

struct sc_server_opts {
    const char *listen;      /* "127.0.0.1:4040" (host:port; the host must be an IPv4 address) */
    const char *grpc_listen; /* the OTLP/gRPC listener's host:port (otlp.grpc_listen); NULL: none */
    const char *data_dir;    /* the embedded store's directory */
    const struct sc_store_opts *store; /* the store's engine and its options (NULL: the
                                          embedded one); dir, retention and durable are
                                          the ones here */
    const char *token;               /* bearer token required on every route but /metrics, /healthz;
                                        it may act for any tenant (X-Scope-OrgID) */
    const char *const *tenant_names; /* auth.tenants: one token per tenant, which acts for */
    const char *const *tenant_tokens; /* that tenant only (server/auth.c) */
    uint32_t ntenant_tokens;
    const char *tls_cert, *tls_key; /* PEM files: HTTPS and gRPC over TLS when set */
    int64_t shutdown_timeout_ns;    /* SIGTERM to exit at most (server.shutdown_timeout) */
    int64_t retention_ns;           /* store retention */
    struct sc_limits limits;        /* what one pushed profile may be (formats/limits.h) */
    uint64_t max_body;              /* request body bytes */
    uint64_t max_body_total;        /* body bytes being received by all requests together */
    uint64_t ingest_budget;   /* worst-case bytes of the pushes decoded at once (see server.c) */
    uint64_t max_read_blocks; /* a query's work budget in stored blocks (server.max_read_blocks) */
    uint32_t max_connections;
    int64_t layout_timeout_ns; /* a call graph layout's deadline (worker killed after it) */
    uint64_t layout_memory;    /* a layout worker's address space */
    uint32_t max_layouts;      /* layout workers at once; more get 503 */
    uint32_t max_queries;      /* heavy queries at once; more wait, then get 503 */
    uint64_t max_read_rows;    /* the distinct stacks one query may hold (server.max_read_rows) */
    uint64_t query_memory;     /* the bytes one heavy query may hold (server.query_memory) */
    int64_t query_timeout_ns;  /* the time one heavy query may take (server.query_timeout) */
    int durable;               /* fsync every commit */
    const char *const *source_roots; /* directories the source view may read files under */
    uint32_t nsource_roots;
    const char *config_path;        /* where the config came from: read again on *reload */
    const struct sc_config *config; /* its scrape_configs are scraped into the store; NULL:
                                       no scraping. Used during sc_server_run only */
    volatile sig_atomic_t *reload;  /* set by a signal handler (SIGHUP): the server reads
                                       config_path again and applies its scrape_configs */
};

/* Server defaults: limits sized for profiles real clients send (sc_limits_server: 64 MiB
 * bodies and decompressed, a million samples; max_age at most retention_ns), queries of any range
 * that read at most 20,000 stored blocks (a month of one series reads about 40 from day rollups),
 * 100,000 flame graph nodes; at most 256 MiB of bodies in flight and 512 MiB of pushes (counted at
 * their worst case, see server.c) decoded at a time. */
void sc_server_opts_init(struct sc_server_opts *o);

/* Runs until *stop becomes non-zero (a signal handler sets it), then shuts down gracefully:
 * stops accepting, finishes requests in flight and their writes, stops the scraper (the
 * profiles it already fetched are stored), closes the store.
 * Prints "scorch: listening on http://ADDR" on stderr once ready. 0 or SC_E* (detail). */
int sc_server_run(const struct sc_server_opts *o, volatile sig_atomic_t *stop, char *err);

#endif
