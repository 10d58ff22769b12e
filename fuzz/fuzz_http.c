/* fuzz_http.c - libFuzzer target: a request to the whole server, as a client sends it.
 *
 * A real server (sc_server_run: libmicrohttpd's parsing, the routes, the head checks,
 * multipart bodies, admission, the Pyroscope, OTLP and Connect ingest paths, the embedded
 * store) runs on a thread of this process on a free loopback port; each input is sent over
 * a connection of its own and the answer read back. The first byte picks how the rest
 * becomes a request:
 *   0  the rest is the request, bytes as they are (request line, headers, body)
 *   1  POST /ingest?<first line> with the rest as the body
 *   2  POST /ingest?<first line> as multipart/form-data: the rest up to "\n--\n" is the
 *      "profile" part, what follows the "sample_type_config" part
 *   3  the first line is a Content-Type; the rest is POSTed to /v1development/profiles
 *      (OTLP), or, when the type starts with 'c', to Connect's /push.v1.PusherService/Push
 * Checks: every request is answered (or its connection closed) within 30 s; an answer is
 * HTTP/1.1 with a status that is not 500 (a bad request is the client's fault: 4xx), and an
 * error's JSON body is valid JSON in valid UTF-8; no crash, leak or unbounded memory in any
 * of the server's threads. */
#include "fuzz_common.h"

#include "model/clock.h"
#include "server/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <strings.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile sig_atomic_t stop;
static pthread_t server;
static char dir[] = "/tmp/scorch-fuzz-http-XXXXXX";
static char listen_at[32];
static int port;

static void *serve(void *arg)
{
    (void)arg;
    struct sc_server_opts o;
    sc_server_opts_init(&o);
    o.listen = listen_at;
    o.data_dir = dir;
    o.durable = 0;
    o.shutdown_timeout_ns = 2 * SC_NS_PER_S;
    o.max_body = 1u << 20; /* libFuzzer's inputs are far smaller */
    o.ingest_budget = 256u << 20;
    char err[SC_ERR_LEN] = "";
    if (sc_server_run(&o, &stop, err)) {
        fprintf(stderr, "fuzz_http: the server did not start: %s\n", err);
        abort();
    }
    return NULL;
}

static void stop_server(void)
{
    stop = 1;
    pthread_join(server, NULL);
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}

static int connect_server(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
        return fd;
    if (fd >= 0) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return -1;
}

/* The server, started once: a free port (asked of the kernel, then given to the server). */
static void start_server(void)
{
    if (port)
        return;
    if (!mkdtemp(dir))
        abort();
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) ||
        getsockname(fd, (struct sockaddr *)&sa, &len))
        abort();
    port = ntohs(sa.sin_port);
    close(fd);
    snprintf(listen_at, sizeof listen_at, "127.0.0.1:%d", port);
    if (pthread_create(&server, NULL, serve, NULL))
        abort();
    atexit(stop_server);
    for (int i = 0; i < 200; i++) {
        fd = connect_server();
        if (fd >= 0) {
            close(fd);
            return;
        }
        usleep(50000);
    }
    fprintf(stderr, "fuzz_http: the server did not listen on %s in 10 s\n", listen_at);
    abort();
}

/* The first line of [*p, end) (without its newline, NUL-terminated in line), *p past it. */
static void first_line(const char **p, const char *end, char *line, size_t cap)
{
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    size_t n = (size_t)((nl ? nl : end) - *p);
    n = n < cap - 1 ? n : cap - 1;
    memcpy(line, *p, n);
    line[n] = 0;
    *p = nl ? nl + 1 : end;
}

static void post(struct sc_buf *req, const char *target, const char *type, const void *body,
                 size_t len)
{
    sc_buf_printf(req,
                  "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\n"
                  "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                  target, type, len);
    sc_buf_append(req, body, len);
}

static void build(struct sc_buf *req, const uint8_t *data, size_t size)
{
    const char *p = (const char *)data + 1, *end = (const char *)data + size;
    char line[2048], target[2100];
    switch (data[0] % 4) {
    case 0:
        sc_buf_append(req, p, (size_t)(end - p));
        return;
    case 1:
        first_line(&p, end, line, sizeof line);
        snprintf(target, sizeof target, "/ingest?%s", line);
        post(req, target, "application/octet-stream", p, (size_t)(end - p));
        return;
    case 2: {
        first_line(&p, end, line, sizeof line);
        snprintf(target, sizeof target, "/ingest?%s", line);
        static const char sep[] = "\n--\n", b[] = "scorch-fuzz-7d1e0c";
        const char *cut = NULL;
        for (const char *q = p; !cut && q + 4 <= end; q++)
            if (!memcmp(q, sep, 4))
                cut = q;
        struct sc_buf body = SC_BUF_INIT;
        sc_buf_printf(
            &body,
            "--%s\r\nContent-Disposition: form-data; name=\"profile\"; "
            "filename=\"profile.pprof\"\r\nContent-Type: application/octet-stream\r\n\r\n",
            b);
        sc_buf_append(&body, p, (size_t)((cut ? cut : end) - p));
        if (cut) {
            sc_buf_printf(
                &body,
                "\r\n--%s\r\nContent-Disposition: form-data; name=\"sample_type_config\"; "
                "filename=\"sample_type_config.json\"\r\n"
                "Content-Type: application/octet-stream\r\n\r\n",
                b);
            sc_buf_append(&body, cut + 4, (size_t)(end - cut - 4));
        }
        sc_buf_printf(&body, "\r\n--%s--\r\n", b);
        char type[96];
        snprintf(type, sizeof type, "multipart/form-data; boundary=%s", b);
        post(req, target, type, body.data, body.len);
        sc_buf_release(&body);
        return;
    }
    default:
        first_line(&p, end, line, sizeof line);
        post(req, line[0] == 'c' ? "/push.v1.PusherService/Push" : "/v1development/profiles",
             line[0] == 'c' ? line + 1 : line, p, (size_t)(end - p));
        return;
    }
}

/* Sends req on a connection of its own and reads the answer to the end (the server closes:
 * Connection: close, or the request was broken). 0, or -1 when it took past 30 s. */
static int exchange(const struct sc_buf *req, struct sc_buf *answer)
{
    /* libFuzzer's -timeout watchdog is a SIGALRM every half timeout, which interrupts a
     * blocking connect, send or recv (EINTR: the long run stopped on it twice, after 178,405
     * and 81,086 inputs); those are tried again, as is a moment with no free loopback port
     * (EADDRNOTAVAIL: every request leaves one in TIME_WAIT for a minute), for 10 s */
    int fd = connect_server();
    for (int i = 0;
         fd < 0 && (errno == EINTR || errno == EADDRNOTAVAIL || errno == EAGAIN) && i < 1000; i++) {
        if (errno != EINTR)
            usleep(10000);
        fd = connect_server();
    }
    if (fd < 0)
        fprintf(stderr, "fuzz_http: cannot connect to the server: %s\n", strerror(errno));
    FUZZ_CHECK(fd >= 0);
    struct timeval tv = {30, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    /* the server may answer and close before it has read everything: not an error */
    for (size_t off = 0; off < req->len;) {
        ssize_t k = send(fd, req->data + off, req->len - off, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    shutdown(fd, SHUT_WR);
    int rc = 0;
    char buf[65536];
    for (;;) {
        ssize_t k = recv(fd, buf, sizeof buf, 0);
        if (k > 0 && answer->len < (64u << 20)) {
            sc_buf_append(answer, buf, (size_t)k);
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            rc = -1;
        break;
    }
    close(fd);
    return rc;
}

/* Checks the answer at a (up to end): HTTP/1.x, a status that is not 500, an error's JSON
 * body valid JSON in valid UTF-8. Returns where the next answer starts (end when its length
 * is not said). */
static const char *check_answer(const char *a, const char *end)
{
    FUZZ_CHECK(!strncmp(a, "HTTP/1.1 ", 9) || !strncmp(a, "HTTP/1.0 ", 9));
    int status = atoi(a + 9);
    if (status == 500)
        fprintf(stderr, "fuzz_http: 500: %.300s\n", a);
    FUZZ_CHECK(status >= 100 && status < 600 && status != 500);
    const char *head_end = strstr(a, "\r\n\r\n");
    if (!head_end || head_end > end)
        return end;
    const char *body = head_end + 4;
    size_t len = (size_t)(end - body);
    int json = 0;
    for (const char *h = strstr(a, "\r\n"); h && h < head_end; h = strstr(h + 2, "\r\n")) {
        if (!strncasecmp(h + 2, "Content-Length:", 15))
            len = strtoul(h + 17, NULL, 10);
        else if (!strncasecmp(h + 2, "Content-Type: application/json", 30))
            json = 1;
    }
    FUZZ_CHECK(len <= (size_t)(end - body));
    if (status >= 400 && json)
        FUZZ_CHECK(fuzz_json_valid(body, len));
    return body + len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    start_server();
    struct sc_buf req = SC_BUF_INIT, answer = SC_BUF_INIT;
    build(&req, data, size);
    if (exchange(&req, &answer)) {
        fprintf(stderr, "fuzz_http: no answer in 30 s to a request of %zu bytes\n", req.len);
        abort();
    }
    sc_buf_putc(&answer, 0);
    /* an answer, or several: what a raw input pipelines after its first request is parsed as
     * further requests, each answered in turn. libmicrohttpd (0.9.75) sends the head of its
     * own error page twice for some broken heads (a Content-Length that is not a number):
     * the checks end where the stream stops being answers */
    const char *a = answer.data, *end = answer.data ? answer.data + answer.len - 1 : NULL;
    for (int first = 1; a && end - a > 1; first = 0) {
        if (!first && strncmp(a, "HTTP/1.", 7))
            break;
        a = check_answer(a, end);
    }
    sc_buf_release(&req);
    sc_buf_release(&answer);
    return 0;
}
