/* test_perfmap.c - a JIT's perf map is read in the JIT's own /tmp (through /proc/PID/root):
 * a process with a private /tmp (systemd's PrivateTmp=, a container) gets its JIT frames
 * named, and so does every process when scorch itself runs with one (scorch.service). A
 * process that is gone is named from our /tmp. Needs root (a mount namespace). */
#include "t.h"
#include "collect/symbols.h"
#include "model/error.h"

#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#define JIT_BASE 0x7f0000001000ULL

struct named {
    char name[128];
    int found;
};

static void on_sym(void *ctx, uint32_t i, const struct sc_sym *sym)
{
    struct named *n = ctx;
    (void)i;
    n->found = sym->found;
    snprintf(n->name, sizeof n->name, "%.*s", (int)sym->frames[0].name_len, sym->frames[0].name);
}

/* The name the default symbolizer gives JIT_BASE + 0x10 in process pid. */
static void jit_name(int32_t pid, struct named *n)
{
    struct sc_symbolizer_opts o;
    memset(&o, 0, sizeof o);
    o.kallsyms = "/dev/null";
    struct sc_symbolizer *s = NULL;
    char err[SC_ERR_LEN] = "";
    memset(n, 0, sizeof *n);
    T_EQ_INT(sc_symbolizer_new(&o, &s, err), 0);
    if (!s)
        return;
    int64_t dso = sc_symbolizer_dso(s, "", 0, 0, 0, pid);
    T_CHECK(dso >= 0);
    if (dso >= 0) {
        struct sc_dso_info di;
        sc_symbolizer_info(s, (uint32_t)dso, &di);
        T_EQ_INT(di.kind, SC_DSO_JIT);
        uint64_t a = JIT_BASE + 0x10;
        sc_symbolizer_resolve(s, (uint32_t)dso, &a, 1, on_sym, n);
    }
    sc_symbolizer_free(s);
}

/* A child in a mount namespace of its own, with an empty tmpfs on /tmp holding its perf map:
 * only /proc/PID/root/tmp reaches it. */
static void test_private_tmp(void)
{
    int ready[2];
    T_EQ_INT(pipe(ready), 0);
    pid_t c = fork();
    if (c == 0) {
        close(ready[0]);
        if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
            mount("tmpfs", "/tmp", "tmpfs", 0, "size=1m"))
            _exit(1);
        char p[64];
        snprintf(p, sizeof p, "/tmp/perf-%d.map", (int)getpid());
        FILE *f = fopen(p, "w");
        if (!f)
            _exit(1);
        fprintf(f, "%llx 100 private_jit_fn\n", (unsigned long long)JIT_BASE);
        fclose(f);
        if (write(ready[1], "x", 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    close(ready[1]);
    char x;
    ssize_t got = c > 0 ? read(ready[0], &x, 1) : -1;
    close(ready[0]);
    if (got != 1) {
        if (c > 0)
            waitpid(c, NULL, 0);
        T_SKIP("cannot make a mount namespace with its own /tmp (needs root)");
    }
    char ours[64];
    snprintf(ours, sizeof ours, "/tmp/perf-%d.map", (int)c);
    T_CHECK(access(ours, F_OK) != 0); /* not in our /tmp */
    struct named n;
    jit_name(c, &n);
    T_CHECK(n.found);
    T_EQ_STR(n.name, "private_jit_fn");
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
}

/* A process that has exited: its map is looked for in our /tmp. */
static void test_gone(void)
{
    pid_t c = fork();
    if (c == 0)
        _exit(0);
    T_CHECK(c > 0);
    if (c <= 0)
        return;
    waitpid(c, NULL, 0);
    char p[64];
    snprintf(p, sizeof p, "/tmp/perf-%d.map", (int)c);
    FILE *f = fopen(p, "w");
    T_CHECK(f != NULL);
    if (!f)
        return;
    fprintf(f, "%llx 100 gone_jit_fn\n", (unsigned long long)JIT_BASE);
    fclose(f);
    struct named n;
    jit_name(c, &n);
    T_CHECK(n.found);
    T_EQ_STR(n.name, "gone_jit_fn");
    unlink(p);
}

int main(void)
{
    if (geteuid() != 0)
        T_SKIP("a mount namespace with its own /tmp needs root");
    T_RUN(test_gone);
    T_RUN(test_private_tmp);
    return t_done();
}
