/* layout.c - Graphviz layouts in a worker process: deadline, memory, cancellation. */
#include "query/layout.h"
#include "model/clock.h"
#include "model/error.h"
#include "query/callgraph.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* What a worker may answer: a 2,000-node graph's SVG is a few MB. */
#define MAX_SVG (256u << 20)
#define MAX_DOT (256u << 20)

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Reads what fd has into b (at most max bytes in all); 0 at EOF, 1 for more, -1 on error
 * or when over max. */
static int drain(int fd, struct sc_buf *b, size_t max)
{
    char chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n == 0)
            return 0;
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 1 : -1;
        if (b->len + (size_t)n > max)
            return -1;
        sc_buf_append(b, chunk, (size_t)n);
        if (b->oom)
            return -1;
    }
}

/* Starts the worker with its stdin, stdout and stderr on pipes; -1 on failure. */
static pid_t spawn(const struct sc_layout_opts *o, int fds[3])
{
    int in[2], out[2], er[2];
    if (pipe2(in, O_CLOEXEC))
        return -1;
    if (pipe2(out, O_CLOEXEC)) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    if (pipe2(er, O_CLOEXEC)) {
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        return -1;
    }
    int64_t secs = (o->timeout_ns > 0 ? o->timeout_ns : 30 * SC_NS_PER_S) / SC_NS_PER_S + 1;
    struct rlimit cpu = {(rlim_t)secs, (rlim_t)secs + 1};
    rlim_t mem = o->max_memory ? o->max_memory : (rlim_t)1 << 30;
    struct rlimit as = {mem, mem};
    pid_t pid = fork();
    if (pid == 0) {
        /* only async-signal-safe calls between fork and exec: the parent has threads */
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(er[1], 2);
        setrlimit(RLIMIT_CPU, &cpu);
        setrlimit(RLIMIT_AS, &as);
        execl(o->exe, o->exe, "__layout", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(er[1]);
    if (pid < 0) {
        close(in[1]);
        close(out[0]);
        close(er[0]);
        return -1;
    }
    fds[0] = in[1];
    fds[1] = out[0];
    fds[2] = er[0];
    for (int i = 0; i < 3; i++)
        fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
    return pid;
}

int sc_layout_svg(const char *dot, size_t len, const struct sc_layout_opts *o, struct sc_buf *out,
                  char *err)
{
    if (!o || !o->exe)
        return sc_callgraph_render_svg(dot, len, out, err);
    int fds[3] = {-1, -1, -1};
    /* a write to the worker's stdin after it died must fail, not kill the server */
    signal(SIGPIPE, SIG_IGN);
    pid_t pid = spawn(o, fds);
    if (pid < 0)
        return sc_errf(err, SC_EIO, "cannot start the layout worker: %s", strerror(errno));
    int64_t deadline = sc_mono_ns() + (o->timeout_ns > 0 ? o->timeout_ns : 30 * SC_NS_PER_S);
    struct sc_buf svg = SC_BUF_INIT, msg = SC_BUF_INIT;
    size_t sent = 0;
    const char *why = NULL; /* set: the worker is killed for this */
    int rc = 0, out_open = 1, err_open = 1;
    while ((out_open || err_open) && !why) {
        struct pollfd pf[4];
        int n = 0, iw = -1, io = -1, ie = -1, ic = -1;
        if (fds[0] >= 0)
            pf[iw = n++] = (struct pollfd){fds[0], POLLOUT, 0};
        if (out_open)
            pf[io = n++] = (struct pollfd){fds[1], POLLIN, 0};
        if (err_open)
            pf[ie = n++] = (struct pollfd){fds[2], POLLIN, 0};
        if (o->client_fd >= 0)
            pf[ic = n++] = (struct pollfd){o->client_fd, POLLRDHUP, 0};
        if (poll(pf, (nfds_t)n, 100) < 0 && errno != EINTR) {
            why = "poll failed";
            break;
        }
        if (iw >= 0 && pf[iw].revents) {
            ssize_t k = pf[iw].revents & POLLOUT ? write(fds[0], dot + sent, len - sent) : -1;
            if (k > 0)
                sent += (size_t)k;
            if (sent == len || (k < 0 && errno != EAGAIN && errno != EINTR))
                close_fd(&fds[0]); /* EOF for the worker (or it is gone) */
        }
        if (io >= 0 && pf[io].revents) {
            int d = drain(fds[1], &svg, MAX_SVG);
            if (d < 0)
                why = "its SVG is too large";
            out_open = d > 0;
        }
        if (ie >= 0 && pf[ie].revents)
            err_open = drain(fds[2], &msg, SC_ERR_LEN) != 0 && msg.len < SC_ERR_LEN;
        if (ic >= 0 && (pf[ic].revents & (POLLRDHUP | POLLHUP | POLLERR)))
            why = "the client went away";
        else if (o->stop && *o->stop)
            why = "the server is stopping";
        else if (sc_mono_ns() > deadline)
            why = "it ran past its deadline";
    }
    if (why)
        kill(pid, SIGKILL);
    for (int i = 0; i < 3; i++)
        close_fd(&fds[i]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    sc_buf_putc(&msg, 0);
    char *m = msg.data ? msg.data : (char *)"";
    m[strcspn(m, "\n")] = 0;
    if (!strncmp(m, "scorch: ", 8))
        m += 8;
    if (why && !strcmp(why, "it ran past its deadline"))
        rc = sc_errf(err, SC_ELIMIT,
                     "the call graph's layout ran past its deadline (%g s, "
                     "server.layout_timeout): ask for fewer nodes",
                     (double)(o->timeout_ns > 0 ? o->timeout_ns : 30 * SC_NS_PER_S) / 1e9);
    else if (why && o->stop && *o->stop)
        /* not the request's fault, nor the server's: 503, to be tried again (elsewhere) */
        rc = sc_errf(err, SC_EUNAVAIL, "the call graph's layout was stopped: %s; retry", why);
    else if (why)
        rc = sc_errf(err, SC_EIO, "the call graph's layout was stopped: %s", why);
    else if (WIFSIGNALED(status))
        rc = sc_errf(err, SC_ELIMIT,
                     "the call graph's layout went past its CPU or memory limit (signal %d): "
                     "ask for fewer nodes",
                     WTERMSIG(status));
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        rc = sc_errf(err, WIFEXITED(status) && WEXITSTATUS(status) == 3 ? SC_EFORMAT : SC_EIO, "%s",
                     *m ? m : "the layout worker failed");
    else
        sc_buf_append(out, svg.data ? svg.data : "", svg.len);
    if (!rc && out->oom)
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    sc_buf_release(&svg);
    sc_buf_release(&msg);
    return rc;
}

int sc_layout_worker(int in, int out, char *err)
{
    struct sc_buf dot = SC_BUF_INIT, svg = SC_BUF_INIT;
    char chunk[65536];
    ssize_t n;
    while ((n = read(in, chunk, sizeof chunk)) > 0 && dot.len + (size_t)n <= MAX_DOT)
        sc_buf_append(&dot, chunk, (size_t)n);
    int rc = n != 0 ? sc_errf(err, SC_ELIMIT, "the graph is too large") : 0;
    if (!rc)
        rc = sc_callgraph_render_svg(dot.data ? dot.data : "", dot.len, &svg, err);
    for (size_t off = 0; !rc && off < svg.len;) {
        ssize_t k = write(out, svg.data + off, svg.len - off);
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    sc_buf_release(&dot);
    sc_buf_release(&svg);
    return rc == 0 ? 0 : rc == SC_EFORMAT ? 3 : 1;
}
