/* cmd_server.c - `scorch server`: the HTTP API, ingest and the web UI over the store. */
#include "cli/cli.h"
#include "model/error.h"
#include "model/setting.h"
#include "config/config.h"
#include "server/server.h"
#include "store/store.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: scorch server [--config FILE] [--data DIR] [--listen ADDR] [--storage ENGINE]\n"
    "                     [--clickhouse-url URL]\n"
    "\n"
    "Keeps profiles and serves them: Pyroscope-compatible pushes to POST /ingest, Pyroscope's\n"
    "push API (POST /push.v1.PusherService/Push), OpenTelemetry profiles (OTLP/HTTP at\n"
    "POST /v1development/profiles, OTLP/gRPC on --otlp-grpc-listen), the HTTP API under\n"
    "/api/v1/, Prometheus metrics at /metrics, and the web UI at /.\n"
    "\n"
    "options:\n"
    "  --config FILE        YAML configuration (scrape_configs, auth, storage, server,\n"
    "                       record, rules, alerting)\n"
    "  --data DIR           where the embedded store keeps its files (default ./data)\n"
    "  --listen ADDR        host:port to listen on (default 127.0.0.1:4040; :0 picks a port)\n"
    "  --storage ENGINE     sqlite (default) or clickhouse (the config's storage.engine)\n"
    "  --clickhouse-url URL ClickHouse's HTTP interface, like http://127.0.0.1:8123 (the\n"
    "                       config's storage.url; storage.cluster and storage.shards spread\n"
    "                       the profiles over several shards, see docs/storage.md)\n"
    "  --retention DUR      keep profiles this long (default 30d; the config's storage.retention)\n"
    "  --otlp-grpc-listen ADDR  host:port of the OTLP/gRPC profiles listener (the config's\n"
    "                       otlp.grpc_listen; off unless set). OTLP/HTTP is always on the main\n"
    "                       port: POST /v1development/profiles\n"
    "  --tls-cert FILE      serve HTTPS with this PEM certificate chain (the config's\n"
    "                       server.tls.cert_file); needs --tls-key. The OTLP/gRPC listener\n"
    "                       then serves gRPC over TLS with it too (ALPN h2; h2c without)\n"
    "  --tls-key FILE       the certificate's PEM private key (server.tls.key_file)\n"
    "  --no-fsync           do not fsync commits (faster; a crash may lose recent writes)\n"
    "  -h, --help           show this help\n"
    "\n"
    "The config's scrape_configs are scraped into the store (GET /api/v1/targets shows their\n"
    "health); SIGHUP reads the config again and applies its scrape_configs (targets that stay\n"
    "keep their delta baselines and schedule; a bad file changes nothing). With record: in\n"
    "the config the server samples its host's CPUs itself (docs/record.md). Its rules: are\n"
    "evaluated every alerting.evaluation_interval: record rules export functions' values\n"
    "as metrics on /metrics, alert rules send the changes they find to Alertmanager and\n"
    "webhooks (docs/cli.md, Rules); a change of rules: or alerting: takes a restart.\n"
    "\n"
    "SIGTERM or SIGINT stop the server gracefully: it stops accepting connections and\n"
    "requests (also on open connections: 503), answers the requests it has begun, stores\n"
    "what the scraper has fetched and closes the store, within server.shutdown_timeout\n"
    "(5s). A bearer token is required on every route but /metrics and /healthz when\n"
    "auth.token, auth.token_file or auth.tenants is configured; a tenant's token\n"
    "(auth.tenants) reads and writes its own tenant only.\n";

static volatile sig_atomic_t stop_flag, reload_flag;

static void on_signal(int sig)
{
    if (sig == SIGHUP)
        reload_flag = 1;
    else
        stop_flag = 1;
}

int cmd_server(int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, 0, 'c'},
        {"data", required_argument, 0, 'd'},
        {"listen", required_argument, 0, 'l'},
        {"storage", required_argument, 0, 's'},
        {"clickhouse-url", required_argument, 0, 'u'},
        {"retention", required_argument, 0, 'r'},
        {"no-fsync", no_argument, 0, 'F'},
        {"help", no_argument, 0, 'h'},
        {"otlp-grpc-listen", required_argument, 0, 'g'},
        {"tls-cert", required_argument, 0, 'C'},
        {"tls-key", required_argument, 0, 'K'},
        {0, 0, 0, 0},
    };
    const char *config = NULL, *data = NULL, *listen = NULL, *storage = NULL, *churl = NULL;
    const char *grpc_listen = NULL, *tls_cert = NULL, *tls_key = NULL;
    int64_t retention = 0;
    struct sc_set_value v;
    int nofsync = 0, c, rc;
    optind = 1;
    /* each flag read by its row as it comes (`--retention x --help` is refused) */
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            config = optarg;
            break;
        case 'd':
            data = optarg;
            break;
        case 'l':
            if ((rc = cli_setting("server", SC_SET_SERVER_LISTEN, "--listen", optarg, &v)))
                return rc;
            listen = optarg;
            break;
        case 's':
            if ((rc = cli_setting("server", SC_SET_STORAGE_ENGINE, "--storage", optarg, &v)))
                return rc;
            storage = optarg;
            break;
        case 'u':
            if ((rc = cli_setting("server", SC_SET_STORAGE_URL, "--clickhouse-url", optarg, &v)))
                return rc;
            churl = optarg;
            break;
        case 'r':
            if ((rc = cli_setting("server", SC_SET_STORAGE_RETENTION, "--retention", optarg, &v)))
                return rc;
            retention = v.i;
            break;
        case 'F':
            nofsync = 1;
            break;
        case 'g':
            if ((rc = cli_setting("server", SC_SET_OTLP_GRPC_LISTEN, "--otlp-grpc-listen", optarg,
                                  &v)))
                return rc;
            grpc_listen = optarg;
            break;
        case 'C':
            tls_cert = optarg;
            break;
        case 'K':
            tls_key = optarg;
            break;
        case 'h':
            return cli_help(usage);
        default:
            return cli_usage("server", "bad option");
        }
    }
    if (optind < argc)
        return cli_usage("server", "unexpected argument '%s'", argv[optind]);
    if (!tls_cert != !tls_key)
        return cli_usage("server", "--tls-cert and --tls-key go together");
    cli_malloc_server();
    char err[SC_ERR_LEN] = "";
    struct sc_config cf;
    memset(&cf, 0, sizeof cf);
    if (config && sc_config_load(config, &cf, err)) {
        sc_config_release(&cf);
        return cli_error("%s", err);
    }
    const char *engine = storage             ? storage
                         : cf.storage_engine ? cf.storage_engine
                                             : sc_setting(SC_SET_STORAGE_ENGINE)->def;
    struct sc_store_opts so;
    sc_store_opts_init(&so);
    so.engine = engine;
    so.url = churl ? churl : cf.storage_url;
    so.cluster = cf.storage_cluster;
    so.shards = (const char *const *)cf.storage_shards;
    so.nshards = cf.nstorage_shards;
    so.database = cf.storage_database;
    so.write_timeout_ns = cf.storage_write_timeout_ns;
    so.query_timeout_ns = cf.storage_query_timeout_ns;
    so.max_answer = cf.storage_max_answer;
    so.log_limit = cf.storage_log_limit;
    so.cache_memory = cf.storage_cache_memory;
    so.cache_slab = 1;
    so.read_only_retry_ns = cf.storage_ro_retry_ns;
    if (!strcmp(engine, "clickhouse") && !so.url) {
        sc_config_release(&cf);
        return cli_usage("server", "--storage clickhouse needs --clickhouse-url (or storage.url)");
    }
    struct sc_server_opts o;
    sc_server_opts_init(&o);
    o.store = &so;
    o.config_path = config;
    if (listen)
        o.listen = listen;
    else if (cf.listen)
        o.listen = cf.listen;
    o.data_dir = data ? data : cf.storage_path ? cf.storage_path : o.data_dir;
    if (cf.retention_ns)
        o.retention_ns = cf.retention_ns;
    if (retention)
        o.retention_ns = retention;
    o.token = cf.auth_token;
    o.tenant_names = (const char *const *)cf.tenant_names;
    o.tenant_tokens = (const char *const *)cf.tenant_tokens;
    o.ntenant_tokens = cf.ntenants;
    o.tls_cert = tls_cert ? tls_cert : cf.tls_cert;
    o.tls_key = tls_key ? tls_key : cf.tls_key;
    if (cf.shutdown_timeout_ns)
        o.shutdown_timeout_ns = cf.shutdown_timeout_ns;
    o.grpc_listen = grpc_listen ? grpc_listen : cf.otlp_grpc_listen;
    o.durable = !nofsync;
    sc_limits_override(&o.limits, &cf.limits);
    if (cf.max_read_blocks)
        o.max_read_blocks = cf.max_read_blocks;
    if (cf.layout_timeout_ns)
        o.layout_timeout_ns = cf.layout_timeout_ns;
    if (cf.max_read_rows)
        o.max_read_rows = cf.max_read_rows;
    if (cf.max_queries)
        o.max_queries = cf.max_queries;
    if (cf.query_memory)
        o.query_memory = cf.query_memory;
    if (cf.query_timeout_ns)
        o.query_timeout_ns = cf.query_timeout_ns;
    o.source_roots = (const char *const *)cf.source_roots;
    o.nsource_roots = cf.nsource_roots;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    o.config = &cf;
    o.reload = &reload_flag;
    rc = sc_server_run(&o, &stop_flag, err);
    sc_config_release(&cf);
    if (rc)
        return cli_error("%s", err);
    return 0;
}
