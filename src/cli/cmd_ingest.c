/* cmd_ingest.c - `scorch ingest`: push profile files of any format to a server's /ingest. */
#include "cli/cli.h"
#include "collect/remote.h"
#include "collect/scrape.h"
#include "formats/input.h"
#include "model/error.h"
#include "config/config.h"
#include "model/dl_curl.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: scorch ingest --server URL [--name APP{k=v,...}] [--token-file F] [--tenant T]\n"
    "                     [--format FMT] [FILE...]\n"
    "\n"
    "Pushes profile files to a scorch (or Pyroscope) server's POST /ingest, one request per\n"
    "file, in order. The bytes are sent as they are. The format of each file, gzipped or\n"
    "not, is detected from its content unless --format says:\n"
    "  %s.\n"
    "No FILE, or -, reads stdin. Stops at the first file the server refuses and prints the\n"
    "server's reason.\n"
    "\n"
    "options:\n"
    "  --server URL       the server, e.g. http://127.0.0.1:4040\n"
    "  --name NAME        Pyroscope's application name with labels, e.g. 'api.cpu{env=prod}'\n"
    "                     (the suffix names the profile type; default: the file's name\n"
    "                     without its extensions, 'stdin' for stdin)\n"
    "  --token-file F     send the first line of F as the bearer token\n"
    "  --tenant T         the tenant (X-Scope-OrgID)\n"
    "  --format FMT       the format instead of detecting, one of\n"
    "                     %s\n"
    "  -h, --help         show this help\n"
    "\n"
    "A progress line goes to stderr while many files are pushed (on a terminal), and a\n"
    "summary at the end. Exit status 0 when every file was stored, 1 otherwise.\n";

struct ingest {
    const char *server, *name, *tenant, *format;
    char *token;
    CURL *curl;
    uint64_t samples, bytes;
};

/* The default application name of a file: its base name without extensions. */
static void default_name(const char *path, char *out, size_t cap)
{
    if (!strcmp(path, "-")) {
        snprintf(out, cap, "stdin");
        return;
    }
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(out, cap, "%s", b);
    static const char *const exts[] = {".gz",  ".pb",         ".pprof", ".prof",
                                       ".txt", ".folded",     ".perf",  ".collapsed",
                                       ".out", ".cpuprofile", ".json",  ".speedscope"};
    for (int again = 1; again;) {
        again = 0;
        size_t n = strlen(out);
        for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
            size_t e = strlen(exts[i]);
            if (n > e && !strcmp(out + n - e, exts[i])) {
                out[n - e] = 0;
                again = 1;
                break;
            }
        }
    }
    for (char *p = out; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-' || *p == '.'))
            *p = '_';
    if (!*out)
        snprintf(out, cap, "profile");
}

/* The /ingest format of a file's bytes, or NULL. */
static const char *format_of(const struct sc_input *in, char *err)
{
    void *plain = NULL;
    size_t plen = in->len;
    const void *p = in->data;
    if (sc_is_gzip(in->data, in->len)) {
        if (sc_gunzip(in->data, in->len, sc_limits_cli.max_decompressed, &plain, &plen, err))
            return NULL;
        p = plain;
    }
    enum sc_format f = sc_detect_format(p, plen);
    free(plain);
    if (f == SC_FMT_UNKNOWN) {
        char list[256];
        sc_errf(err, SC_EFORMAT, "not %s", sc_format_list(SC_FMT_LIST_DESC, list, sizeof list));
        return NULL;
    }
    return sc_format_name(f);
}

/* The message of a JSON error body {"error": "..."}, else the line as it is. */
static const char *server_reason(char *line)
{
    char *e = strstr(line, "\"error\":\"");
    if (!e)
        return line;
    e += 9;
    char *q = e;
    while (*q && *q != '"')
        q += q[0] == '\\' && q[1] ? 2 : 1;
    *q = 0;
    return e;
}

static int push_file(struct ingest *g, const char *path)
{
    char err[SC_ERR_LEN] = "";
    struct sc_input in;
    if (sc_input_read(path, sc_limits_cli.max_input, &in, err))
        return cli_error("%s", err);
    const char *fmt = g->format ? g->format : format_of(&in, err);
    if (!fmt) {
        sc_input_release(&in);
        return cli_error("cannot push '%s': %s", path, err);
    }
    char name[256];
    if (g->name)
        snprintf(name, sizeof name, "%s", g->name);
    else
        default_name(path, name, sizeof name);
    char *ename = sym_curl_easy_escape(g->curl, name, 0);
    struct sc_buf url = SC_BUF_INIT, tenant = SC_BUF_INIT;
    sc_buf_printf(&url, "%s/ingest?name=%s&format=%s", g->server, ename ? ename : "", fmt);
    sym_curl_free(ename);
    const char *headers[2] = {NULL, NULL};
    if (g->tenant) {
        sc_buf_printf(&tenant, "X-Scope-OrgID: %s", g->tenant);
        headers[0] = tenant.data;
    }
    struct sc_post post = {url.data, g->token, "application/octet-stream", headers, in.data,
                           in.len,   300000,   "scorch-ingest/0.1",        NULL,    NULL};
    long status, retry_after;
    char reason[200];
    int rc = sc_remote_post(g->curl, &post, &status, &retry_after, reason, sizeof reason, err);
    sc_buf_release(&url);
    sc_buf_release(&tenant);
    g->bytes += in.len;
    sc_input_release(&in);
    if (rc)
        return cli_error("cannot push '%s' to %s: %s", path, g->server, err);
    if (status < 200 || status >= 300)
        return cli_error("the server refused '%s' (HTTP %ld): %s", path, status,
                         server_reason(reason));
    const char *s = strstr(reason, "\"samples\":");
    if (s)
        g->samples += strtoull(s + 10, NULL, 10);
    return 0;
}

int cmd_ingest(int argc, char **argv)
{
    static const struct option opts[] = {
        {"server", required_argument, 0, 's'},
        {"name", required_argument, 0, 'n'},
        {"token-file", required_argument, 0, 't'},
        {"tenant", required_argument, 0, 'T'},
        {"format", required_argument, 0, 'f'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    struct ingest g = {0};
    const char *token_file = NULL;
    struct sc_set_value v;
    int c, rc;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            if ((rc = cli_setting("ingest", SC_SET_INGEST_SERVER, "--server", optarg, &v)))
                return rc;
            g.server = optarg;
            break;
        case 'n':
            g.name = optarg;
            break;
        case 't':
            token_file = optarg;
            break;
        case 'T':
            g.tenant = optarg;
            break;
        case 'f':
            g.format = optarg;
            break;
        case 'h': {
            char descs[256], names[256];
            struct sc_buf help = SC_BUF_INIT;
            sc_buf_printf(&help, usage, sc_format_list(SC_FMT_LIST_DESC, descs, sizeof descs),
                          sc_format_list(SC_FMT_LIST_INGEST, names, sizeof names));
            int hrc = cli_help(help.data ? help.data : "");
            sc_buf_release(&help);
            return hrc;
        }
        default:
            return cli_usage("ingest", "bad option");
        }
    }
    if (!g.server || !*g.server)
        return cli_usage("ingest", "missing --server URL");
    char names[256];
    if (g.format && !sc_format_by_ingest_name(g.format))
        return cli_usage("ingest", "bad --format '%s' (%s)", g.format,
                         sc_format_list(SC_FMT_LIST_INGEST, names, sizeof names));
    char err[SC_ERR_LEN];
    if (token_file && !(g.token = sc_config_read_token(token_file, err)))
        return cli_error("%s", err);
    char *server = strdup(g.server);
    if (!server)
        return cli_error("out of memory");
    for (size_t n = strlen(server); n && server[n - 1] == '/';)
        server[--n] = 0;
    g.server = server;
    if (sc_dl_load(SC_DL_CURL, err)) {
        free(g.token);
        free(server);
        return cli_error("%s", err);
    }
    g.curl = sym_curl_easy_init();
    int nfiles = argc - optind;
    rc = g.curl ? 0 : cli_error("cannot start libcurl");
    char *stdin_only[] = {"-"};
    char **files = nfiles ? argv + optind : stdin_only;
    if (!nfiles)
        nfiles = 1;
    int progress = nfiles > 1 && isatty(2);
    int done = 0;
    for (; done < nfiles && !rc; done++) {
        if (progress)
            fprintf(stderr, "\rscorch: ingest: %d/%d files, %.1f MB ", done, nfiles,
                    (double)g.bytes / 1e6);
        rc = push_file(&g, files[done]);
    }
    if (progress)
        fprintf(stderr, "\r%60s\r", "");
    if (!rc)
        fprintf(stderr, "scorch: pushed %d file%s (%llu samples, %.1f MB) to %s\n", done,
                done == 1 ? "" : "s", (unsigned long long)g.samples, (double)g.bytes / 1e6,
                g.server);
    if (g.curl)
        sym_curl_easy_cleanup(g.curl);
    free(g.token);
    free(server);
    return rc;
}
