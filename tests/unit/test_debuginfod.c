/* test_debuginfod.c - the debug file fetcher: no server, a refused one, one that never answers
 * (cut at the timeout, and at the fetcher's end, leaving no miss in libdebuginfod's cache). */
#include "t.h"

#include "collect/debuginfod.h"
#include "model/clock.h"
#include "model/error.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static char cache[64];

static const uint8_t id1[20] = {0xde, 0xad, 0xbe, 0xef, 1,  2,  3,  4,  5,  6,
                                7,    8,    9,    10,   11, 12, 13, 14, 15, 16};
static const uint8_t id2[20] = {0xfe, 0xed, 0xbe, 0xef, 1,  2,  3,  4,  5,  6,
                                7,    8,    9,    10,   11, 12, 13, 14, 15, 17};

/* Whether libdebuginfod's cache holds an entry (a file, or its empty miss) for id. */
static int cached(const uint8_t *id)
{
    char path[256];
    int n = snprintf(path, sizeof path, "%s/", cache);
    for (int i = 0; i < 20; i++)
        n += snprintf(path + n, sizeof path - (size_t)n, "%02x", id[i]);
    snprintf(path + n, sizeof path - (size_t)n, "/debuginfo");
    struct stat st;
    return stat(path, &st) == 0;
}

static void test_no_server(void)
{
    char err[SC_ERR_LEN];
    struct sc_debuginfod *d = (struct sc_debuginfod *)1;
    unsetenv("DEBUGINFOD_URLS");
    T_EQ_INT(sc_debuginfod_new(NULL, &d, err), 0);
    T_CHECK(d == NULL);
    setenv("DEBUGINFOD_URLS", "  ", 1);
    T_EQ_INT(sc_debuginfod_new(NULL, &d, err), 0);
    T_CHECK(d == NULL);
}

static void test_refused(void)
{
    char err[SC_ERR_LEN], why[128];
    char *path = NULL;
    struct sc_debuginfod *d = NULL;
    setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1); /* nothing listens on port 1 */
    T_EQ_INT(sc_debuginfod_new(NULL, &d, err), 0);
    if (!d)
        return;
    /* asked: under way (the worker has not had the lock yet) */
    T_EQ_INT(sc_debuginfod_get(d, id1, 20, 0, &path, why, sizeof why), SC_DEBUGINFOD_PENDING);
    T_EQ_INT(sc_debuginfod_get(d, id1, 20, sc_mono_ns() + 20 * SC_NS_PER_S, &path, why, sizeof why),
             SC_DEBUGINFOD_FAILED);
    T_EQ_STR(why, "connection refused");
    T_CHECK(path == NULL);
    /* remembered: not asked again at once */
    T_EQ_INT(sc_debuginfod_get(d, id1, 20, 0, &path, why, sizeof why), SC_DEBUGINFOD_FAILED);
    T_EQ_STR(why, "connection refused");
    T_EQ_INT(sc_debuginfod_get(d, id1, 0, 0, &path, why, sizeof why), SC_DEBUGINFOD_FAILED);
    T_EQ_STR(why, "no build id");
    sc_debuginfod_free(d);
}

/* A server that accepts connections (the kernel does, into the listen backlog) and never
 * answers. */
static int silent_server(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 16) ||
        getsockname(fd, (struct sockaddr *)&a, &len)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

static void test_silent(void)
{
    int port;
    int lfd = silent_server(&port);
    T_CHECK(lfd >= 0);
    if (lfd < 0)
        return;
    char url[64], err[SC_ERR_LEN], why[128];
    char *path = NULL;
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    setenv("DEBUGINFOD_URLS", url, 1);
    struct sc_debuginfod_opts o = {SC_NS_PER_S, 0};
    struct sc_debuginfod *d = NULL;
    T_EQ_INT(sc_debuginfod_new(&o, &d, err), 0);
    if (!d) {
        close(lfd);
        return;
    }
    /* cut at the timeout, said so, and not left in the cache as a miss */
    T_EQ_INT(sc_debuginfod_get(d, id1, 20, sc_mono_ns() + 20 * SC_NS_PER_S, &path, why, sizeof why),
             SC_DEBUGINFOD_FAILED);
    T_EQ_STR(why, "timed out after 1 s");
    T_CHECK(!cached(id1));
    /* the end of the fetcher abandons a fetch under way, leaving no miss either */
    T_EQ_INT(sc_debuginfod_get(d, id2, 20, 0, &path, why, sizeof why), SC_DEBUGINFOD_PENDING);
    usleep(200000); /* (the worker is in the transfer, or about to be: either way it stops) */
    sc_debuginfod_free(d);
    T_CHECK(!cached(id2));
    close(lfd);
}

int main(void)
{
    unsetenv("http_proxy");
    unsetenv("HTTP_PROXY");
    unsetenv("all_proxy");
    unsetenv("ALL_PROXY");
    snprintf(cache, sizeof cache, "/tmp/scorch-debuginfod-XXXXXX");
    if (!mkdtemp(cache)) {
        fprintf(stderr, "no temporary directory\n");
        return 1;
    }
    setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
    T_RUN(test_no_server);
    T_RUN(test_refused);
    T_RUN(test_silent);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", cache);
    return t_done();
}
