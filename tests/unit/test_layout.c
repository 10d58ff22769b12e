/* test_layout.c - call graph layouts in a worker process: answers, deadlines, cancellation. */
#include "gv_lsan.h"
#include "t.h"

#include "model/clock.h"
#include "model/error.h"
#include "query/layout.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[256];

/* A fake worker: a shell script standing in for `scorch __layout`. */
static const char *script(const char *name, const char *body)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return NULL;
    fprintf(f, "#!/bin/sh\ncd '%s' || exit 1\n%s\n", tmpdir, body);
    fclose(f);
    chmod(path, 0755);
    return path;
}

/* Whether the worker that wrote its pid into <tmpdir>/<name>.pid still runs. */
static int running(const char *name)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s.pid", tmpdir, name);
    FILE *f = fopen(path, "r");
    long pid = 0;
    if (!f || fscanf(f, "%ld", &pid) != 1)
        pid = 0;
    if (f)
        fclose(f);
    return pid > 0 && kill((pid_t)pid, 0) == 0;
}

static const char dot[] = "digraph g { a -> b; b -> c; a -> c; }";

static void test_real_worker(void)
{
    const char *bin = getenv("SCORCH_BIN");
    if (!bin || access(bin, X_OK)) {
        fprintf(stderr, "  (SCORCH_BIN not set: the real worker is not tried)\n");
        return;
    }
    struct sc_layout_opts o = {bin, 20 * SC_NS_PER_S, 0, -1, NULL};
    struct sc_buf out = SC_BUF_INIT;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_layout_svg(dot, sizeof dot - 1, &o, &out, err), 0);
    sc_buf_putc(&out, 0);
    T_CHECK(out.data && strstr(out.data, "<svg") && strstr(out.data, ">a</text>"));
    /* the same in-process (what the CLI does) gives the same picture */
    struct sc_buf in = SC_BUF_INIT;
    T_EQ_INT(sc_layout_svg(dot, sizeof dot - 1, NULL, &in, err), 0);
    sc_buf_putc(&in, 0);
    T_CHECK(in.data && out.data && !strcmp(in.data, out.data));
    sc_buf_release(&in);
    sc_buf_release(&out);
    /* Graphviz's refusal comes back as a format error with its message */
    T_EQ_INT(sc_layout_svg("digraph {", 9, &o, &out, err), SC_EFORMAT);
    T_CHECK(strstr(err, "graphviz") != NULL);
    sc_buf_release(&out);
}

static void test_deadline(void)
{
    const char *w = script("slow-worker", "echo $$ > slow-worker.pid; exec sleep 30");
    struct sc_layout_opts o = {w, SC_NS_PER_S / 2, 0, -1, NULL};
    struct sc_buf out = SC_BUF_INIT;
    char err[SC_ERR_LEN] = "";
    int64_t t0 = sc_mono_ns();
    T_EQ_INT(sc_layout_svg(dot, sizeof dot - 1, &o, &out, err), SC_ELIMIT);
    int64_t took = sc_mono_ns() - t0;
    T_EQ_STR(err, "the call graph's layout ran past its deadline (0.5 s, server.layout_timeout): "
                  "ask for fewer nodes");
    T_CHECK(took < 10 * SC_NS_PER_S); /* killed, not waited for (the sleep is 30 s) */
    T_CHECK(!running("slow-worker"));
    T_EQ_INT(out.len, 0);
}

static void test_client_gone(void)
{
    const char *w = script("wait-worker", "echo $$ > wait-worker.pid; exec sleep 30");
    int sv[2];
    T_CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        /* the client hangs up after a moment */
        usleep(300000);
        _exit(0);
    }
    close(sv[1]); /* only the child's copy of the peer remains: it goes when the child exits */
    struct sc_layout_opts o = {w, 60 * SC_NS_PER_S, 0, sv[0], NULL};
    struct sc_buf out = SC_BUF_INIT;
    char err[SC_ERR_LEN] = "";
    int64_t t0 = sc_mono_ns();
    int rc = sc_layout_svg(dot, sizeof dot - 1, &o, &out, err);
    int64_t took = sc_mono_ns() - t0;
    T_EQ_INT(rc, SC_EIO);
    T_CHECK(strstr(err, "client went away") != NULL);
    T_CHECK(took < 10 * SC_NS_PER_S);
    T_CHECK(!running("wait-worker"));
    close(sv[0]);
    waitpid(pid, NULL, 0);
}

static volatile sig_atomic_t stop_flag;

static void test_stop(void)
{
    const char *w = script("stop-worker", "echo $$ > stop-worker.pid; exec sleep 30");
    stop_flag = 1;
    struct sc_layout_opts o = {w, 60 * SC_NS_PER_S, 0, -1, &stop_flag};
    struct sc_buf out = SC_BUF_INIT;
    char err[SC_ERR_LEN] = "";
    /* 503: the server stopping is neither the request's fault nor a failure */
    T_EQ_INT(sc_layout_svg(dot, sizeof dot - 1, &o, &out, err), SC_EUNAVAIL);
    T_CHECK(strstr(err, "server is stopping") != NULL);
    T_CHECK(!running("stop-worker"));
}

static void test_limits_and_failures(void)
{
    /* a worker over its memory limit dies: reported as a limit, with the advice */
    const char *w = script("hog-worker", "cat >/dev/null; exec head -c 400000000 /dev/zero | "
                                         "sort >/dev/null");
    struct sc_layout_opts o = {w, 20 * SC_NS_PER_S, 64u << 20, -1, NULL};
    struct sc_buf out = SC_BUF_INIT;
    char err[SC_ERR_LEN] = "";
    int rc = sc_layout_svg(dot, sizeof dot - 1, &o, &out, err);
    T_CHECK(rc != 0);
    /* a worker that fails says why on stderr */
    w = script("bad-worker", "cat >/dev/null; echo 'scorch: no layout today' >&2; exit 1");
    o.max_memory = 0;
    T_EQ_INT(sc_layout_svg(dot, sizeof dot - 1, &o, &out, err), SC_EIO);
    T_EQ_STR(err, "no layout today");
    /* a worker that cannot start */
    o.exe = "/nonexistent/scorch";
    T_CHECK(sc_layout_svg(dot, sizeof dot - 1, &o, &out, err) != 0);
    /* a worker that answers without reading all its input (a large DOT) does not hang */
    static char big[4 << 20];
    memset(big, ' ', sizeof big);
    w = script("short-worker", "echo '<svg/>'");
    o.exe = w;
    T_EQ_INT(sc_layout_svg(big, sizeof big, &o, &out, err), 0);
    sc_buf_putc(&out, 0);
    T_CHECK(out.data && !strncmp(out.data, "<svg/>", 6));
    sc_buf_release(&out);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/scorch-test-layout-XXXXXX");
    if (!mkdtemp(tmpdir))
        T_SKIP("cannot create a temporary directory");
    T_RUN(test_real_worker);
    T_RUN(test_deadline);
    T_RUN(test_client_gone);
    T_RUN(test_stop);
    T_RUN(test_limits_and_failures);
    t_rmrf(tmpdir);
    return t_done();
}
