/* cmd_agent.c - `scorch agent`: scrape the configured targets, push to a remote server. */
#include "cli/cli.h"
#include "collect/remote.h"
#include "collect/scrape.h"
#include "model/dl_mhd.h"
#include "model/error.h"
#include "model/json.h"
#include "model/setting.h"
#include "config/config.h"
#include "store/store.h"

#include <arpa/inet.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: scorch agent --config FILE [--listen ADDR] [--data DIR] [-v]\n"
    "\n"
    "Scrapes the Go net/http/pprof endpoints of the config's scrape_configs on their\n"
    "schedules and pushes every profile to remote_write.url (/ingest, Pyroscope's protocol)\n"
    "through a bounded on-disk queue: a server outage loses nothing that fits in the queue.\n"
    "\n"
    "options:\n"
    "  --config FILE   YAML configuration: scrape_configs and remote_write (see\n"
    "                  docs/scraping.md)\n"
    "  --listen ADDR   serve /metrics, /api/v1/targets and /healthz on host:port\n"
    "  --data DIR      store the profiles in a local store in DIR instead of pushing them\n"
    "                  (remote_write is then not needed)\n"
    "  -v, --verbose   log every profile queued and sent\n"
    "  -h, --help      show this help\n"
    "\n"
    "SIGHUP reloads the config (targets that stay keep their delta baselines and schedule);\n"
    "SIGTERM or SIGINT stop scraping, try for a few seconds to send what is queued, and leave\n"
    "the rest in the queue for the next start.\n";

static volatile sig_atomic_t stop_flag, reload_flag;

static void on_stop(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void on_hup(int sig)
{
    (void)sig;
    reload_flag = 1;
}

struct agent {
    struct sc_scraper *scraper;
    struct sc_remote *remote;
    struct sc_store *store;
    int verbose;
};

/* The sink when --data is given: the local store, with a log line per profile. */
static int store_sink(void *ctx, const struct sc_scraped *p, char *err)
{
    struct agent *a = ctx;
    int rc = sc_scrape_store_sink(a->store, p, err);
    if (!rc && a->verbose)
        fprintf(stderr,
                "scorch: stored job=%s instance=%s profile=%s from=%lld until=%lld samples=%u%s\n",
                p->job, p->instance, p->profile, (long long)p->from_ns, (long long)p->until_ns,
                (unsigned)p->samples, p->restart ? " restart=1" : "");
    return rc;
}

static enum MHD_Result on_http(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *data,
                               size_t *size, void **ctx)
{
    (void)version, (void)data, (void)size;
    struct agent *a = cls;
    if (!*ctx) {
        *ctx = (void *)1; /* headers first; answer on the next call */
        return MHD_YES;
    }
    struct sc_buf b = SC_BUF_INIT;
    unsigned status = 200;
    const char *type = "text/plain; charset=utf-8";
    if (strcmp(method, "GET")) {
        status = 405;
        sc_json_put_error(&b, "only GET");
        type = "application/json";
    } else if (!strcmp(url, "/metrics")) {
        type = "text/plain; version=0.0.4; charset=utf-8";
        sc_scraper_metrics(a->scraper, &b);
        if (a->remote)
            sc_remote_metrics(a->remote, &b);
    } else if (!strcmp(url, "/api/v1/targets")) {
        type = "application/json";
        sc_scraper_targets_json(a->scraper, &b);
    } else if (!strcmp(url, "/healthz")) {
        sc_buf_puts(&b, "ok\n");
    } else {
        status = 404;
        type = "application/json";
        sc_json_put_error(&b, "no such endpoint");
    }
    size_t len;
    char *body = sc_buf_detach(&b, &len);
    struct MHD_Response *r = sym_MHD_create_response_from_buffer(
        len, body ? body : (char *)"", body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    sym_MHD_add_response_header(r, "Content-Type", type);
    enum MHD_Result ret = sym_MHD_queue_response(c, status, r);
    sym_MHD_destroy_response(r);
    return ret;
}

/* Starts the agent's HTTP endpoint on listen: 0 and *out, or an error in err. */
static int serve(const char *listen, struct agent *a, struct MHD_Daemon **out, char *err)
{
    struct sockaddr_in sa;
    int rc = sc_dl_load(SC_DL_MHD, err);
    if (rc)
        return rc;
    if (sc_parse_listen(listen, &sa, err))
        return sc_errf(err, SC_EIO, "cannot listen on '%s'", listen);
    *out = sym_MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO, 0, NULL, NULL,
                                on_http, a, MHD_OPTION_SOCK_ADDR, &sa,
                                MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned)1,
                                MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_END);
    return *out ? 0 : sc_errf(err, SC_EIO, "cannot listen on '%s'", listen);
}

/* remote_write.queue_dir, else agent-queue in the config file's directory. Caller frees. */
static char *queue_dir(const struct sc_config *cf, const char *config)
{
    if (cf->remote_queue_dir)
        return strdup(cf->remote_queue_dir);
    const char *slash = strrchr(config, '/');
    size_t n = slash ? (size_t)(slash - config) : 0;
    char *d = malloc(n + 32);
    if (!d)
        return NULL;
    if (slash)
        snprintf(d, n + 32, "%.*s/agent-queue", (int)(n ? n : 1), n ? config : "/");
    else
        snprintf(d, n + 32, "./agent-queue");
    return d;
}

static uint32_t count_tasks(const struct sc_config *cf)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < cf->njobs; i++) {
        uint32_t bits = 0;
        for (uint32_t p = cf->jobs[i].profiles; p; p &= p - 1)
            bits++;
        n += bits * cf->jobs[i].ntargets;
    }
    return n;
}

static void reload(struct agent *a, const char *config, const struct sc_config *old)
{
    sc_scrape_raise_fd_limit();
    char err[SC_ERR_LEN] = "";
    struct sc_config cf;
    if (sc_config_load(config, &cf, err)) {
        fprintf(stderr, "scorch: reload: %s; keeping the running config\n", err);
        sc_config_release(&cf);
        return;
    }
    if (a->remote && !cf.remote_url) {
        fprintf(stderr,
                "scorch: reload: '%s' has no remote_write.url; keeping the running "
                "config\n",
                config);
        sc_config_release(&cf);
        return;
    }
    if (sc_scraper_reload(a->scraper, &cf, err)) {
        fprintf(stderr, "scorch: reload: %s; keeping the running config\n", err);
        sc_config_release(&cf);
        return;
    }
    if (a->remote) {
        sc_remote_set_target(a->remote, cf.remote_url, cf.remote_token, err);
        if ((cf.remote_queue_dir || old->remote_queue_dir) &&
            (!cf.remote_queue_dir || !old->remote_queue_dir ||
             strcmp(cf.remote_queue_dir, old->remote_queue_dir)))
            fprintf(stderr, "scorch: reload: a new remote_write.queue_dir takes a restart\n");
    }
    fprintf(stderr, "scorch: reloaded '%s': %u jobs, %u scrape tasks\n", config, (unsigned)cf.njobs,
            (unsigned)count_tasks(&cf));
    sc_config_release(&cf);
}

int cmd_agent(int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, 0, 'c'}, {"listen", required_argument, 0, 'l'},
        {"data", required_argument, 0, 'd'},   {"verbose", no_argument, 0, 'v'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0},
    };
    const char *config = NULL, *listen = NULL, *data = NULL;
    struct sc_set_value v;
    int verbose = 0, c, rc;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hv", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            config = optarg;
            break;
        case 'l':
            if ((rc = cli_setting("agent", SC_SET_AGENT_LISTEN, "--listen", optarg, &v)))
                return rc;
            listen = optarg;
            break;
        case 'd':
            data = optarg;
            break;
        case 'v':
            verbose = 1;
            break;
        case 'h':
            return cli_help(usage);
        default:
            return cli_usage("agent", "bad option");
        }
    }
    if (optind < argc)
        return cli_usage("agent", "unexpected argument '%s'", argv[optind]);
    if (!config)
        return cli_usage("agent", "--config FILE is required");
    sc_scrape_raise_fd_limit();
    char err[SC_ERR_LEN] = "";
    struct sc_config cf;
    if (sc_config_load(config, &cf, err)) {
        sc_config_release(&cf);
        return cli_error("%s", err);
    }
    if (cf.njobs == 0) {
        sc_config_release(&cf);
        return cli_error("config '%s' has no scrape_configs", config);
    }
    if (!data && !cf.remote_url) {
        sc_config_release(&cf);
        return cli_error("config '%s' has no remote_write.url (or give --data DIR)", config);
    }
    struct agent a = {0};
    a.verbose = verbose;
    rc = 0;
    if (data) {
        struct sc_store_opts so;
        sc_store_opts_init(&so);
        so.dir = data;
        so.retention_ns = cf.retention_ns;
        rc = sc_store_open(&so, &a.store, err);
    } else {
        char *qdir = queue_dir(&cf, config);
        struct sc_remote_opts ro = {
            .url = cf.remote_url,
            .token = cf.remote_token,
            .queue_dir = qdir ? qdir : "./agent-queue",
            .queue_max_bytes = cf.remote_queue_bytes,
            .min_backoff_ns = cf.remote_min_backoff_ns,
            .max_backoff_ns = cf.remote_max_backoff_ns,
            .timeout_ns = cf.remote_timeout_ns,
            .verbose = verbose,
        };
        rc = sc_remote_new(&ro, &a.remote, err);
        free(qdir);
    }
    if (!rc)
        rc = sc_scraper_new(&cf, data ? store_sink : sc_remote_sink,
                            data ? (void *)&a : (void *)a.remote, &a.scraper, err);
    struct MHD_Daemon *d = NULL;
    if (!rc && listen)
        rc = serve(listen, &a, &d, err);
    if (!rc && a.remote)
        rc = sc_remote_start(a.remote, err);
    if (!rc)
        rc = sc_scraper_start(a.scraper, err);
    if (rc) {
        if (d)
            sym_MHD_stop_daemon(d);
        sc_scraper_stop_free(a.scraper);
        sc_remote_stop_free(a.remote, 0);
        sc_store_close(a.store);
        sc_config_release(&cf);
        return cli_error("%s", err);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_hup;
    sigaction(SIGHUP, &sa, NULL);
    fprintf(stderr, "scorch: agent scraping %u jobs (%u scrape tasks), %s %s\n", (unsigned)cf.njobs,
            (unsigned)count_tasks(&cf), data ? "storing in" : "pushing to",
            data ? data : cf.remote_url);
    fflush(stderr);
    while (!stop_flag) {
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
        if (reload_flag) {
            reload_flag = 0;
            reload(&a, config, &cf);
        }
    }
    fprintf(stderr, "scorch: agent stopping\n");
    /* profiles already scraped go to the queue before the senders get their last chance */
    if (d)
        sym_MHD_stop_daemon(d);
    sc_scraper_stop_free(a.scraper);
    sc_remote_stop_free(a.remote, 5 * 1000000000LL);
    sc_store_close(a.store);
    sc_config_release(&cf);
    return 0;
}
