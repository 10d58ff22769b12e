/* symbols.c - the sampler's symbolizer: DSOs, their cached symbol tables, kernel, vDSO, JIT. */
#include "collect/symbols.h"
#include "collect/debuginfod.h"
#include "model/clock.h"
#include "model/buf.h"
#include "model/error.h"
#include "model/hash.h"
#include "model/log.h"

#include <demangle.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DSOS (1u << 20)
#define KERNEL_GAP 65536 /* the last kernel symbol's extent (kallsyms gives no sizes) */

/* A loaded symbol table, shared by the DSOs with its build id. */
struct table {
    struct sc_symtab st;
    int has_dwarf;           /* DWARF in dwarf_path, or in the DSO's own file when that is NULL */
    char *dwarf_path;        /* a separate debug file */
    char *names_path;        /* the file st's names are in (st.names_in_file): a debug file; NULL:
                                the DSO's own */
    struct sc_elf_dwarf *dw; /* kept open (opts.dwarf_bytes), else NULL */
    uint64_t dw_bytes;
    uint64_t last_use;
    uint8_t pending; /* its debug file is being fetched from debuginfod */
    char *why;       /* why its code is not all named (sc_dso_info.symbols), or NULL */
};

struct dso {
    enum sc_dso_kind kind;
    char *path;       /* owned */
    const char *name; /* into path */
    uint64_t dev, ino;
    int32_t pid;    /* a process that maps it (the latest seen), or the JIT's process */
    uint32_t table; /* index + 1 into tables; 0: not loaded */
    uint8_t failed; /* cannot be read: named after the DSO */
    char build_id[41];
    int64_t map_mtime, map_size; /* JIT: the perf map as loaded */
};

struct sc_symbolizer {
    struct sc_symbolizer_opts o;
    struct dso *dsos;
    uint32_t ndsos, dcap;
    struct sc_map64 index; /* identity hash -> dso index (probing on collisions) */
    struct table **tables; /* NULL slots are free */
    uint32_t ntables, tcap;
    uint64_t table_bytes, dwarf_bytes, clock;
    struct sc_symtab kernel;
    int kernel_loaded;
    /* read ahead (sc_symbolizer_kernel_ahead): the kernel's symbol file mapped, and its
     * text symbols' lines */
    void *ktext;
    size_t ktext_len;
    struct sc_symtab_cand *klines;
    uint32_t nklines;
    struct sc_symtab vdso;
    int vdso_loaded;
    struct sc_debuginfod *fetch; /* started when first needed */
    int fetch_tried;
    int64_t wait_left; /* of opts.debuginfod_wait_ns */
    uint64_t generation;
    struct sc_symbolizer_stats st;
};

static uint64_t now_clock(struct sc_symbolizer *s)
{
    return ++s->clock;
}

static const char *base_name(const char *path)
{
    const char *sl = strrchr(path, '/');
    return sl && sl[1] ? sl + 1 : path;
}

static int add_dso(struct sc_symbolizer *s, enum sc_dso_kind kind, const char *path, size_t len,
                   uint64_t dev, uint64_t ino, int32_t pid)
{
    if (s->ndsos >= MAX_DSOS)
        return SC_ELIMIT;
    if (sc_grow_array(&s->dsos, &s->dcap, (uint64_t)s->ndsos + 1, sizeof *s->dsos))
        return SC_ENOMEM;
    struct dso *d = &s->dsos[s->ndsos];
    memset(d, 0, sizeof *d);
    d->path = strndup(path, len);
    if (!d->path)
        return SC_ENOMEM;
    d->name = base_name(d->path);
    d->kind = kind;
    d->dev = dev;
    d->ino = ino;
    d->pid = pid;
    return (int)s->ndsos++;
}

int sc_symbolizer_new(const struct sc_symbolizer_opts *o, struct sc_symbolizer **out, char *err)
{
    struct sc_symbolizer *s = calloc(1, sizeof *s);
    if (!s)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    if (o)
        s->o = *o;
    if (!s->o.max_bytes)
        s->o.max_bytes = 32u << 20;
    if (!s->o.kallsyms)
        s->o.kallsyms = "/proc/kallsyms";
    if (!s->o.perf_map_dir)
        s->o.perf_map_dir = "/tmp";
    if (!s->o.debug_dir)
        s->o.debug_dir = getenv("SCORCH_DEBUG_DIR");
    if (!s->o.debug_dir || !*s->o.debug_dir)
        s->o.debug_dir = "/usr/lib/debug";
    s->wait_left = s->o.debuginfod_wait_ns;
    sc_symtab_init(&s->kernel);
    sc_symtab_init(&s->vdso);
    s->kernel.names_rule = s->o.perf_names ? SC_SYMTAB_PERF_KALLSYMS : SC_SYMTAB_OURS;
    s->vdso.names_rule = s->o.perf_names ? SC_SYMTAB_PERF_ELF : SC_SYMTAB_OURS;
    /* the fixed ids, in enum order */
    if (add_dso(s, SC_DSO_KERNEL, "[kernel.kallsyms]", 17, 0, 0, 0) < 0 ||
        add_dso(s, SC_DSO_UNKNOWN, "[unknown]", 9, 0, 0, 0) < 0 ||
        add_dso(s, SC_DSO_VDSO, "[vdso]", 6, 0, 0, 0) < 0) {
        sc_symbolizer_free(s);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    *out = s;
    return 0;
}

static void free_table(struct table *t)
{
    if (!t)
        return;
    sc_elf_dwarf_close(t->dw);
    sc_symtab_release(&t->st);
    free(t->dwarf_path);
    free(t->names_path);
    free(t->why);
    free(t);
}

static void kernel_text_release(struct sc_symbolizer *s)
{
    if (s->ktext)
        munmap(s->ktext, s->ktext_len);
    free(s->klines);
    s->ktext = NULL;
    s->klines = NULL;
    s->ktext_len = 0;
    s->nklines = 0;
}

void sc_symbolizer_free(struct sc_symbolizer *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->ndsos; i++)
        free(s->dsos[i].path);
    free(s->dsos);
    for (uint32_t i = 0; i < s->ntables; i++)
        free_table(s->tables[i]);
    free(s->tables);
    sc_map64_release(&s->index);
    sc_symtab_release(&s->kernel);
    sc_symtab_release(&s->vdso);
    kernel_text_release(s);
    sc_debuginfod_free(s->fetch);
    free(s);
}

/* Anonymous executable memory: JIT code, trampolines, memfd-backed code. */
static int is_anon(const char *path, size_t len)
{
    return len == 0 || (len >= 6 && !memcmp(path, "//anon", 6)) ||
           (len >= 6 && !memcmp(path, "[anon:", 6)) || (len >= 7 && !memcmp(path, "/memfd:", 7)) ||
           (len == 6 && !memcmp(path, "[heap]", 6)) || (len >= 6 && !memcmp(path, "[stack", 6));
}

struct dso_key {
    struct sc_symbolizer *s;
    const char *path;
    size_t len;
    uint64_t dev, ino;
};

static int dso_eq(void *ctx, uint32_t i)
{
    const struct dso_key *k = ctx;
    if (i >= k->s->ndsos)
        return 0;
    const struct dso *d = &k->s->dsos[i];
    return k->ino ? d->ino == k->ino && d->dev == k->dev
                  : !d->ino && strlen(d->path) == k->len && !memcmp(d->path, k->path, k->len);
}

/* A DSO's identity: device and inode when the file has them, else the path (and the pid
 * for JIT code, which is in the name). */
static uint64_t dso_hash(const char *path, size_t len, uint64_t dev, uint64_t ino)
{
    return ino ? sc_hash_combine(sc_mix64(dev + 1), ino) : sc_hash64(path, len);
}

int64_t sc_symbolizer_dso(struct sc_symbolizer *s, const char *path, size_t len, uint64_t dev,
                          uint64_t ino, int32_t pid)
{
    enum sc_dso_kind kind = SC_DSO_FILE;
    char jit[32];
    if (len == 6 && !memcmp(path, "[vdso]", 6))
        return SC_DSO_ID_VDSO;
    if (len && path[0] == '[' && !is_anon(path, len))
        return SC_DSO_ID_UNKNOWN; /* [vsyscall], [uprobes], ... */
    if (is_anon(path, len)) {
        kind = SC_DSO_JIT;
        len = (size_t)snprintf(jit, sizeof jit, "[jit-%d]", (int)pid);
        path = jit;
        dev = ino = 0;
    }
    uint64_t h = dso_hash(path, len, dev, ino);
    struct dso_key k = {s, path, len, dev, ino};
    int added;
    uint32_t *slot = sc_map64_intern(&s->index, h, s->ndsos, dso_eq, &k, &added);
    if (!slot)
        return SC_ENOMEM;
    if (!added) {
        struct dso *d = &s->dsos[*slot];
        if (kind == SC_DSO_FILE && pid > 0)
            d->pid = pid; /* the latest process: the likeliest to be alive */
        return (int64_t)*slot;
    }
    int rc = add_dso(s, kind, path, len, dev, ino, pid);
    if (rc < 0)
        *slot = UINT32_MAX - 1; /* a tombstone nobody matches */
    return rc;
}

int sc_symbolizer_twin(const struct sc_symbolizer *s, struct sc_symbolizer **out, char *err)
{
    struct sc_symbolizer *t;
    int rc = sc_symbolizer_new(&s->o, &t, err);
    if (rc)
        return rc;
    for (uint32_t i = SC_DSO_ID_VDSO + 1; i < s->ndsos && !rc; i++) {
        const struct dso *d = &s->dsos[i];
        size_t len = strlen(d->path);
        int added;
        uint32_t *slot =
            sc_map64_intern(&t->index, dso_hash(d->path, len, d->dev, d->ino), t->ndsos, dso_eq,
                            &(struct dso_key){t, d->path, len, d->dev, d->ino}, &added);
        if (!slot || add_dso(t, d->kind, d->path, len, d->dev, d->ino, d->pid) != (int)i)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
        else
            t->dsos[i].failed = d->failed;
    }
    if (rc) {
        sc_symbolizer_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

static void hex_id(const uint8_t *id, uint32_t n, char out[41])
{
    static const char hx[] = "0123456789abcdef";
    for (uint32_t i = 0; i < n && i < 20; i++) {
        out[2 * (size_t)i] = hx[id[i] >> 4];
        out[2 * (size_t)i + 1] = hx[id[i] & 15];
    }
    out[2 * (size_t)(n < 20 ? n : 20)] = 0;
}

void sc_symbolizer_info(struct sc_symbolizer *s, uint32_t dso, struct sc_dso_info *out)
{
    if (dso >= s->ndsos)
        dso = SC_DSO_ID_UNKNOWN;
    const struct dso *d = &s->dsos[dso];
    out->kind = d->kind;
    out->path = d->path;
    out->name = d->name;
    out->build_id = d->build_id;
    out->symbols = "";
    if (d->kind == SC_DSO_FILE && d->failed)
        out->symbols = "cannot read the file";
    else if (d->kind == SC_DSO_FILE && d->table && s->tables[d->table - 1]->why)
        out->symbols = s->tables[d->table - 1]->why;
}

/* ---- loading ---- */

/* Opens a DSO's file: through its process's root (its mount namespace) while the process
 * lives, else by its path. The inode must match when the mapping told one (a file replaced
 * since it was mapped is not the code that ran). -1 when it cannot be read. */
static int open_dso(const struct sc_symbolizer *s, const struct dso *d)
{
    char p[4200];
    for (int attempt = 0; attempt < 2; attempt++) {
        if (attempt == 0 && (d->pid <= 0 || s->o.root))
            continue;
        if (attempt == 0)
            snprintf(p, sizeof p, "/proc/%d/root%s", (int)d->pid, d->path);
        else
            snprintf(p, sizeof p, "%s%s", s->o.root ? s->o.root : "", d->path);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (!d->ino || st.st_ino == d->ino))
            return fd;
        close(fd);
    }
    return -1;
}

int sc_symbolizer_open(struct sc_symbolizer *s, uint32_t dso)
{
    if (dso >= s->ndsos || s->dsos[dso].kind != SC_DSO_FILE)
        return -1;
    return open_dso(s, &s->dsos[dso]);
}

/* A debug file by build id: <debug_dir>/.build-id/xx/yyyy.debug. */
static int open_debug_file(struct sc_symbolizer *s, const struct sc_symtab *t, char **path_out)
{
    if (t->build_id_len < 2)
        return -1;
    char hex[41];
    hex_id(t->build_id, t->build_id_len, hex);
    struct sc_buf p = SC_BUF_INIT;
    sc_buf_printf(&p, "%s/.build-id/%.2s/%s.debug", s->o.debug_dir, hex, hex + 2);
    int fd = p.oom ? -1 : open(p.data, O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
        *path_out = sc_buf_detach(&p, NULL);
    sc_buf_release(&p);
    return fd;
}

/* A debug file by the name in a binary's .gnu_debuglink, where gdb looks: beside the binary,
 * in .debug/ beside it (both in the binary's mount namespace, as open_dso), under
 * <debug_dir>/<the binary's directory>. It must carry the binary's build id when the binary
 * has one (a name says nothing of the version). */
static int open_debuglink(struct sc_symbolizer *s, const struct dso *d, const struct sc_symtab *t,
                          const char *link, char **path_out)
{
    const char *slash = strrchr(d->path, '/');
    if (!slash)
        return -1;
    int dirlen = (int)(slash - d->path);
    char root[64] = "";
    if (!s->o.root && d->pid > 0)
        snprintf(root, sizeof root, "/proc/%d/root", (int)d->pid);
    const char *r = s->o.root ? s->o.root : root;
    /* (prefix, subdirectory) pairs; the process's root may be gone: then the host's view */
    const char *where[5][2] = {
        {r, ""}, {r, "/.debug"}, {"", ""}, {"", "/.debug"}, {s->o.debug_dir, ""}};
    for (int k = 0; k < 5; k++) {
        if (k >= 2 && k < 4 && (s->o.root || !*r))
            continue; /* the same as the first two */
        struct sc_buf p = SC_BUF_INIT;
        sc_buf_printf(&p, "%s%.*s%s/%s", where[k][0], dirlen, d->path, where[k][1], link);
        int fd = p.oom ? -1 : open(p.data, O_RDONLY | O_CLOEXEC);
        struct stat st;
        uint8_t id[20];
        uint32_t n = 0;
        if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_ino == d->ino ||
                        (t->build_id_len && ((n = sc_elf_build_id(fd, id)) != t->build_id_len ||
                                             memcmp(id, t->build_id, n))))) {
            close(fd); /* not a file, the binary itself, or another build */
            fd = -1;
        }
        char *path = fd >= 0 ? sc_buf_detach(&p, NULL) : NULL;
        sc_buf_release(&p);
        if (path) {
            *path_out = path;
            return fd;
        }
        if (fd >= 0)
            close(fd);
    }
    return -1;
}

/* Completes table t with the debug file dfd (at path): its .symtab when t has none, its DWARF
 * when t has none. 1 when t got better, 0 when not, SC_ENOMEM. */
static int apply_debug(struct sc_symbolizer *s, struct table *t, int dfd, const char *path)
{
    char err[SC_ERR_LEN];
    int better = 0;
    if (t->st.source != SC_SYMS_SYMTAB) {
        char *np = strdup(path);
        if (!np)
            return SC_ENOMEM;
        size_t before = t->st.bytes;
        if (sc_elf_load_symtab(dfd, &t->st, err) == 0) {
            free(t->names_path);
            t->names_path = np;
            better = 1;
            if (t->last_use) /* stored already: its share of the budget changed */
                s->table_bytes = s->table_bytes - before + t->st.bytes;
        } else {
            free(np);
        }
    }
    if (!t->has_dwarf) {
        if (!(t->dwarf_path = strdup(path)))
            return SC_ENOMEM;
        t->has_dwarf = 1; /* (dropped at its first use if it has none) */
        better = 1;
    }
    return better;
}

/* What sc_dso_info.symbols says of t: why its code is not all named, or NULL when it is. */
static void set_why(struct table *t, const char *fetch)
{
    free(t->why);
    t->why = NULL;
    if (t->st.source == SC_SYMS_SYMTAB || t->st.source == SC_SYMS_GOPCLNTAB)
        return;
    struct sc_buf b = SC_BUF_INIT;
    sc_buf_printf(&b, "%s, no debug file", t->st.n ? ".dynsym only" : "no symbols");
    if (t->pending)
        sc_buf_printf(&b, "; debuginfod: still fetching");
    else if (fetch && *fetch)
        sc_buf_printf(&b, "; debuginfod: %s", fetch);
    if (!b.oom)
        t->why = sc_buf_detach(&b, NULL);
    sc_buf_release(&b);
}

/* The fetcher, started the first time a debug file is missing. NULL: none configured. */
static struct sc_debuginfod *fetcher(struct sc_symbolizer *s)
{
    if (!s->fetch_tried && !s->o.no_debuginfod) {
        s->fetch_tried = 1;
        struct sc_debuginfod_opts o = {s->o.debuginfod_timeout_ns, 0}; /* $DEBUGINFOD_URLS */
        char err[SC_ERR_LEN];
        if (sc_debuginfod_new(&o, &s->fetch, err)) { /* (said once; then named without) */
            s->fetch = NULL;
            sc_logf("debuginfod: %s: debug files are not fetched", err);
        }
    }
    return s->fetch;
}

/* Asks the fetcher about t's debug file, waiting what is left of the wait budget, and takes
 * it in when it came. Updates t->pending and t->why. */
static void fetch_debug(struct sc_symbolizer *s, struct table *t)
{
    struct sc_debuginfod *f = fetcher(s);
    if (!f) {
        t->pending = 0;
        set_why(t, "");
        return;
    }
    int64_t start = sc_mono_ns();
    char *path = NULL, why[128];
    enum sc_debuginfod_state st =
        sc_debuginfod_get(f, t->st.build_id, t->st.build_id_len,
                          s->wait_left > 0 ? start + s->wait_left : 0, &path, why, sizeof why);
    if (s->wait_left > 0)
        s->wait_left -= sc_mono_ns() - start;
    t->pending = st == SC_DEBUGINFOD_PENDING;
    if (st == SC_DEBUGINFOD_FOUND) {
        int dfd = open(path, O_RDONLY | O_CLOEXEC);
        int better = dfd >= 0 ? apply_debug(s, t, dfd, path) : 0;
        if (dfd >= 0)
            close(dfd);
        if (better > 0) {
            s->st.debuginfod_hits++;
            if (t->last_use)
                s->generation++; /* it named code before: its callers may ask again */
        }
        snprintf(why, sizeof why, "%s", dfd < 0 ? "the fetched file cannot be read" : "");
    } else if (st == SC_DEBUGINFOD_FAILED) {
        s->st.debuginfod_failures++;
    }
    free(path);
    set_why(t, t->st.build_id_len ? why : "no build id");
}

/* Completes the table of a file without .symtab or DWARF: its debug file on disk, else from
 * debuginfod. link: the name its .gnu_debuglink gives, or NULL. 0 or SC_ENOMEM. */
static int find_debug(struct sc_symbolizer *s, const struct dso *d, struct table *t,
                      const char *link)
{
    char *dpath = NULL;
    int dfd = open_debug_file(s, &t->st, &dpath);
    if (dfd < 0 && link)
        dfd = open_debuglink(s, d, &t->st, link, &dpath);
    if (dfd >= 0) {
        int rc = apply_debug(s, t, dfd, dpath);
        close(dfd);
        free(dpath);
        s->st.debug_files++;
        set_why(t, "");
        return rc < 0 ? rc : 0;
    }
    if (t->st.is_go || !t->st.build_id_len) { /* Go binaries name themselves (pclntab) */
        set_why(t, t->st.build_id_len ? "" : "no build id");
        return 0;
    }
    if (t->st.source == SC_SYMS_SYMTAB && s->o.no_dwarf)
        return 0; /* named already, and lines are not wanted: nothing to fetch for */
    fetch_debug(s, t);
    return 0;
}

uint64_t sc_symbolizer_refresh(struct sc_symbolizer *s)
{
    for (uint32_t i = 0; i < s->ntables; i++)
        if (s->tables[i] && s->tables[i]->pending)
            fetch_debug(s, s->tables[i]);
    return s->generation;
}

/* Frees least recently used tables until the budget holds (never one used in this round). */
static void evict(struct sc_symbolizer *s, uint64_t round)
{
    while (s->table_bytes > s->o.max_bytes) {
        uint32_t victim = UINT32_MAX;
        for (uint32_t i = 0; i < s->ntables; i++)
            if (s->tables[i] && s->tables[i]->last_use < round &&
                (victim == UINT32_MAX || s->tables[i]->last_use < s->tables[victim]->last_use))
                victim = i;
        if (victim == UINT32_MAX)
            return;
        for (uint32_t i = 0; i < s->ndsos; i++)
            if (s->dsos[i].table == victim + 1)
                s->dsos[i].table = 0;
        s->table_bytes -= s->tables[victim]->st.bytes;
        s->dwarf_bytes -= s->tables[victim]->dw_bytes;
        free_table(s->tables[victim]);
        s->tables[victim] = NULL;
        s->st.evictions++;
    }
}

/* Closes the least recently used open DWARF until the budget holds (never keep table). */
static void evict_dwarf(struct sc_symbolizer *s, const struct table *keep)
{
    while (s->dwarf_bytes > s->o.dwarf_bytes) {
        struct table *v = NULL;
        for (uint32_t i = 0; i < s->ntables; i++) {
            struct table *t = s->tables[i];
            if (t && t->dw && t != keep && (!v || t->last_use < v->last_use))
                v = t;
        }
        if (!v)
            return;
        sc_elf_dwarf_close(v->dw);
        v->dw = NULL;
        s->dwarf_bytes -= v->dw_bytes;
        v->dw_bytes = 0;
    }
}

static uint32_t table_by_build_id(struct sc_symbolizer *s, const uint8_t *id, uint32_t n)
{
    for (uint32_t i = 0; n && i < s->ntables; i++)
        if (s->tables[i] && s->tables[i]->st.build_id_len == n &&
            !memcmp(s->tables[i]->st.build_id, id, n))
            return i + 1;
    return 0;
}

static int store_table(struct sc_symbolizer *s, struct table *t)
{
    uint32_t slot = s->ntables;
    for (uint32_t i = 0; i < s->ntables; i++)
        if (!s->tables[i]) {
            slot = i;
            break;
        }
    if (slot == s->ntables) {
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
        if (sc_grow_array(&s->tables, &s->tcap, (uint64_t)s->ntables + 1, sizeof *s->tables))
            return 0;
        s->ntables++;
    }
    s->tables[slot] = t;
    s->table_bytes += t->st.bytes;
    return (int)slot + 1;
}

/* Loads (or finds by build id) the table of a file DSO; 0 when it cannot be read. */
static uint32_t load_file(struct sc_symbolizer *s, struct dso *d, uint64_t round,
                          const uint64_t *addrs, uint32_t n)
{
    int fd = open_dso(s, d);
    if (fd < 0) {
        d->failed = 1;
        s->st.load_failures++;
        return 0;
    }
    uint8_t id[20];
    uint32_t idn = sc_elf_build_id(fd, id);
    hex_id(id, idn, d->build_id);
    /* (a table made for one DSO's addresses serves no other) */
    uint32_t have = s->o.one_shot ? 0 : table_by_build_id(s, id, idn);
    if (have) {
        close(fd);
        return have;
    }
    struct table *t = calloc(1, sizeof *t);
    char err[SC_ERR_LEN];
    if (t)
        t->st.names_rule = s->o.perf_names ? SC_SYMTAB_PERF_ELF : SC_SYMTAB_OURS;
    if (t && s->o.one_shot && n && (t->st.want = malloc((size_t)n * sizeof *addrs)) != NULL) {
        memcpy(t->st.want, addrs, (size_t)n * sizeof *addrs);
        t->st.nwant = n;
        t->st.want_offsets = 1;
    }
    if (!t || sc_elf_load(fd, NULL, 0, &t->st, &t->has_dwarf, err)) {
        close(fd);
        free_table(t);
        d->failed = 1;
        s->st.load_failures++;
        return 0;
    }
    /* a stripped file: its debug file has the .symtab and the DWARF */
    char link[256];
    int need = t->st.source != SC_SYMS_SYMTAB || !t->has_dwarf;
    size_t linklen = need ? sc_elf_debuglink(fd, link, sizeof link) : 0;
    close(fd);
    if (need && find_debug(s, d, t, linklen ? link : NULL)) {
        free_table(t);
        return 0;
    }
    free(t->st.want); /* (what comes later, a fetched debug file, adds all its symbols) */
    t->st.want = NULL;
    t->st.nwant = 0;
    s->st.loads++;
    uint32_t k = (uint32_t)store_table(s, t);
    if (!k) {
        free_table(t);
        return 0;
    }
    s->tables[k - 1]->last_use = round;
    evict(s, round);
    return s->tables[k - 1] ? k : 0;
}

/* The kernel's symbol file mapped and its text symbols' lines found (s->ktext, s->klines):
 * fd, or opts.kallsyms opened when -1. 0, or -1 when it cannot be (not a plain file, no
 * memory). */
static int kernel_text_read(struct sc_symbolizer *s, int fd)
{
    int own = fd < 0;
    if (own && (fd = open(s->o.kallsyms, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    struct stat st;
    void *text = MAP_FAILED;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size < (256 << 20))
        /* (not MAP_POPULATE: populating holds the process's memory map, and the thread
         * replaying records meanwhile waits for it at its next mmap) */
        text = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (own)
        close(fd);
    if (text == MAP_FAILED)
        return -1;
    if (sc_symtab_kallsyms_lines(text, (size_t)st.st_size, &s->klines, &s->nklines) != 0) {
        munmap(text, (size_t)st.st_size);
        return -1;
    }
    s->ktext = text;
    s->ktext_len = (size_t)st.st_size;
    return 0;
}

/* The kernel's symbols for addrs[0..n) only (one_shot), from a plain file read whole: 1
 * when done, 0 when not (then all of them are read). */
static int load_kernel_wanted(struct sc_symbolizer *s, int fd, const struct stat *st,
                              const uint64_t *addrs, uint32_t n)
{
    if (!s->o.one_shot || !n || !S_ISREG(st->st_mode) || st->st_size <= 0 ||
        st->st_size >= (256 << 20))
        return 0;
    /* (read ahead, or now: kernel_loaded is set already, which the read-ahead refuses) */
    if (!s->ktext && kernel_text_read(s, fd) != 0)
        return 0;
    struct sc_symtab *t = &s->kernel;
    t->want = malloc((size_t)n * sizeof *addrs);
    if (t->want) {
        memcpy(t->want, addrs, (size_t)n * sizeof *addrs);
        t->nwant = n;
        sc_symtab_want_ready(t);
        sc_symtab_parse_kallsyms_lines(t, s->ktext, s->ktext_len, s->klines, s->nklines);
        free(t->want);
        t->want = NULL;
        t->nwant = 0;
    }
    kernel_text_release(s);
    return t->nadd > 0;
}

int sc_symbolizer_kernel_ahead(struct sc_symbolizer *s, int fd)
{
    if (s->ktext || s->kernel_loaded || !s->o.one_shot)
        return s->ktext ? 0 : -1;
    return kernel_text_read(s, fd);
}

static void load_kernel(struct sc_symbolizer *s, const uint64_t *addrs, uint32_t n)
{
    s->kernel_loaded = 1;
    int fd = open(s->o.kallsyms, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    int plain = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (plain && load_kernel_wanted(s, fd, &st, addrs, n)) {
        close(fd);
        sc_symtab_finish(&s->kernel, KERNEL_GAP);
        s->st.kernel_symbols = s->kernel.n;
        return;
    }
    /* a plain file (perf record's copy) tells its size: room for all its symbols at once
     * (a line has at least 20 bytes; the room not used is given back by the finish) */
    if (plain && st.st_size > 0 && st.st_size < (64 << 20))
        sc_symtab_reserve(&s->kernel, (uint32_t)(st.st_size / 20), (size_t)st.st_size);
    /* parsed a chunk at a time (the text is several MB; its symbols far less) */
    char chunk[65536];
    size_t have = 0;
    ssize_t k;
    while ((k = read(fd, chunk + have, sizeof chunk - have)) > 0) {
        have += (size_t)k;
        char *nl = memrchr(chunk, '\n', have);
        size_t whole = nl ? (size_t)(nl - chunk) + 1 : have; /* a 64 KiB line: cut it */
        if (sc_symtab_parse_kallsyms(&s->kernel, chunk, whole))
            break;
        memmove(chunk, chunk + whole, have - whole);
        have -= whole;
    }
    if (k == 0 && have)
        sc_symtab_parse_kallsyms(&s->kernel, chunk, have);
    close(fd);
    sc_symtab_finish(&s->kernel, KERNEL_GAP);
    s->st.kernel_symbols = s->kernel.n;
}

void *sc_symbolizer_vdso_copy(size_t *len)
{
    *len = 0;
    uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    FILE *f = base ? fopen("/proc/self/maps", "re") : NULL;
    char line[512];
    size_t size = 0;
    while (f && fgets(line, sizeof line, f)) {
        struct sc_maps_line m;
        size_t n = strcspn(line, "\n");
        if (!sc_maps_parse_line(line, n, &m) && m.start == base && m.end > m.start) {
            size = (size_t)(m.end - m.start);
            break;
        }
    }
    if (f)
        fclose(f);
    if (!size || size > (16u << 20))
        return NULL;
    void *copy = malloc(size);
    if (copy) {
        memcpy(copy, (const void *)base, size);
        *len = size;
    }
    return copy;
}

/* The vDSO is the same image in every process: ours, copied from our own memory. */
static void load_vdso(struct sc_symbolizer *s)
{
    s->vdso_loaded = 1;
    size_t size;
    void *copy = sc_symbolizer_vdso_copy(&size);
    if (!copy)
        return;
    int dw;
    char err[SC_ERR_LEN];
    if (sc_elf_load(-1, copy, size, &s->vdso, &dw, err))
        sc_symtab_init(&s->vdso);
    free(copy);
}

/* A JIT's perf map, (re)read when it changed since the last load. The JIT writes it in its
 * own /tmp: the default directory is read through /proc/PID/root while the process lives,
 * so a process with a /tmp of its own (PrivateTmp=, a container) is named, and so are all
 * when we have one (scorch.service); else, or when the process is gone, ours. */
static struct sc_symtab *jit_table(struct sc_symbolizer *s, struct dso *d, uint64_t round)
{
    char p[4200];
    struct stat st;
    int found = 0;
    if (d->pid > 0 && !s->o.root && !strcmp(s->o.perf_map_dir, "/tmp")) {
        snprintf(p, sizeof p, "/proc/%d/root/tmp/perf-%d.map", (int)d->pid, (int)d->pid);
        found = stat(p, &st) == 0;
    }
    if (!found) {
        snprintf(p, sizeof p, "%s/perf-%d.map", s->o.perf_map_dir, (int)d->pid);
        if (stat(p, &st) != 0)
            return d->table ? &s->tables[d->table - 1]->st : NULL;
    }
    if (d->table && st.st_size == d->map_size && (int64_t)st.st_mtime == d->map_mtime)
        return &s->tables[d->table - 1]->st;
    if (d->table) {
        s->table_bytes -= s->tables[d->table - 1]->st.bytes;
        free_table(s->tables[d->table - 1]);
        s->tables[d->table - 1] = NULL;
        d->table = 0;
    }
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct sc_buf b = SC_BUF_INIT;
    char chunk[65536];
    ssize_t k;
    while ((k = read(fd, chunk, sizeof chunk)) > 0 && b.len < (256u << 20))
        sc_buf_append(&b, chunk, (size_t)k);
    close(fd);
    struct table *t = calloc(1, sizeof *t);
    if (!t || b.oom) {
        free(t);
        sc_buf_release(&b);
        return NULL;
    }
    if (b.len)
        sc_symtab_parse_perf_map(&t->st, b.data, b.len);
    sc_buf_release(&b);
    sc_symtab_finish(&t->st, 0);
    t->st.source = SC_SYMS_TEXT;
    uint32_t k2 = (uint32_t)store_table(s, t);
    if (!k2) {
        free_table(t);
        return NULL;
    }
    t->last_use = round;
    d->table = k2;
    d->map_size = st.st_size;
    d->map_mtime = (int64_t)st.st_mtime;
    s->st.loads++;
    return &t->st;
}

/* ---- resolving ---- */

struct resolve {
    struct sc_symbolizer *s;
    const struct dso *d;
    const struct sc_symtab *t;
    const uint64_t *vaddrs;
    sc_sym_cb cb;
    void *ctx;
    char unnamed[300];
    size_t unnamed_len;
    int names_fd;           /* the file of t's names (names_in_file), -1: not open (yet) */
    const char *names_path; /* that file, NULL: the DSO's own */
    char name[4096];        /* a name read from it, or one without its version */
};

/* The name of symbol e: in the table's pool, or read from the file it stays in (names
 * longer than 4 KiB are cut). NULL when it cannot be read. */
static const char *sym_name(struct resolve *r, const struct sc_symtab_ent *e)
{
    if (!r->t->names_in_file)
        return r->t->names + e->name;
    if (r->names_fd == -1)
        r->names_fd =
            r->names_path ? open(r->names_path, O_RDONLY | O_CLOEXEC) : open_dso(r->s, r->d);
    if (r->names_fd < 0) {
        r->names_fd = -2; /* tried */
        return NULL;
    }
    ssize_t k = pread(r->names_fd, r->name, sizeof r->name - 1, (off_t)(r->t->names_off + e->name));
    if (k <= 0)
        return NULL;
    r->name[k] = 0;
    return r->name[0] ? r->name : NULL;
}

/* name without a symbol version ("__libc_start_main@@GLIBC_2.34", "memcpy@GLIBC_2.2.5": what
 * the static linker leaves in .symtab for symbols with versions), or name itself; *versioned
 * says whether there was one. */
static const char *unversioned(struct resolve *r, const char *name, int *versioned)
{
    const char *at = strchr(name, '@');
    *versioned = at && at > name;
    if (!*versioned)
        return name;
    size_t n = (size_t)(at - name);
    if (n >= sizeof r->name)
        n = sizeof r->name - 1;
    memmove(r->name, name, n); /* name may be r->name already */
    r->name[n] = 0;
    return r->name;
}

static struct sc_sym_frame frame(const char *name, size_t nlen, const char *file, int64_t line)
{
    struct sc_sym_frame f = {name, file ? file : "", name, nlen, file ? strlen(file) : 0, nlen,
                             line};
    return f;
}

/* C++ and Rust names as people read them (with parameter types, as perf shows them);
 * NULL when the name is not mangled. The caller frees the result. */
static char *demangle(const char *name)
{
    if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
        return NULL;
    return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
}

/* Combines the symbol table's name with DWARF's frames (which may be none). */
static void emit(void *ctx, uint32_t i, const struct sc_elf_frame *fr, uint32_t n)
{
    struct resolve *r = ctx;
    struct sc_sym sym;
    sym.address = r->vaddrs[i];
    const struct sc_symtab_ent *e = r->t ? sc_symtab_find(r->t, sym.address) : NULL;
    const char *sname = e ? sym_name(r, e) : NULL;
    int versioned = 0;
    if (!sname)
        e = NULL;
    else if (!r->s->o.perf_names) /* (perf keeps versions, and names PLT entries "x@plt") */
        sname = unversioned(r, sname, &versioned);
    sym.found = e != NULL;
    if (!sname)
        sname = r->unnamed;
    size_t slen = strlen(sname);
    sym.nframes = 0;
    for (uint32_t k = 0; k < n && sym.nframes < SC_ELF_MAX_FRAMES; k++) {
        const char *nm = fr[k].function;
        size_t nl = nm ? strlen(nm) : 0;
        if (fr[k].outer || !nm) {
            /* the symbol table's name, but DWARF's where the symbol was a versioned alias
             * (and always where DWARF names it, as perf does, for perf_names) */
            if ((e && !((versioned || r->s->o.perf_names) && nm)) || !nm) {
                nm = sname;
                nl = slen;
            } else {
                sym.found = 1; /* DWARF named what the symbol table does not */
            }
        }
        sym.frames[sym.nframes++] = frame(nm, nl, fr[k].file, fr[k].line);
    }
    if (sym.nframes == 0)
        sym.frames[sym.nframes++] = frame(sname, slen, NULL, 0);
    char *own[SC_ELF_MAX_FRAMES];
    for (uint32_t k = 0; k < sym.nframes; k++) {
        own[k] = demangle(sym.frames[k].name); /* names are NUL-terminated */
        if (own[k]) {
            /* system_name keeps the mangled name, as pprof wants it */
            sym.frames[k].name = own[k];
            sym.frames[k].name_len = strlen(own[k]);
        }
    }
    r->cb(r->ctx, i, &sym);
    for (uint32_t k = 0; k < sym.nframes; k++)
        free(own[k]);
}

void sc_symbolizer_resolve(struct sc_symbolizer *s, uint32_t dso, const uint64_t *addrs, uint32_t n,
                           sc_sym_cb cb, void *ctx)
{
    if (dso >= s->ndsos)
        dso = SC_DSO_ID_UNKNOWN;
    uint64_t round = now_clock(s);
    struct dso *d = &s->dsos[dso];
    struct resolve r = {s, d, NULL, addrs, cb, ctx, "", 0, -1, NULL, ""};
    const char *unnamed = d->kind == SC_DSO_JIT ? "anon" : d->name;
    if (d->kind == SC_DSO_KERNEL || d->kind == SC_DSO_UNKNOWN)
        unnamed = d->path + 1; /* "[kernel.kallsyms]", "[unknown]" as they are */
    r.unnamed_len = (size_t)snprintf(r.unnamed, sizeof r.unnamed, "[%s", unnamed);
    if (r.unnamed_len >= sizeof r.unnamed)
        r.unnamed_len = sizeof r.unnamed - 1;
    if (r.unnamed[r.unnamed_len - 1] != ']' && r.unnamed_len + 1 < sizeof r.unnamed)
        r.unnamed[r.unnamed_len++] = ']';
    r.unnamed[r.unnamed_len] = 0;

    uint64_t *va = NULL;
    int dwarf = 0;
    char *dwarf_path = NULL;
    struct table *tab = NULL;
    switch (d->kind) {
    case SC_DSO_KERNEL:
        if (!s->kernel_loaded)
            load_kernel(s, addrs, n);
        r.t = &s->kernel;
        break;
    case SC_DSO_VDSO:
        if (!s->vdso_loaded)
            load_vdso(s);
        r.t = &s->vdso;
        break;
    case SC_DSO_JIT:
        r.t = jit_table(s, d, round);
        break;
    case SC_DSO_FILE:
        if (!d->table && !d->failed)
            d->table = load_file(s, d, round, addrs, n);
        if (d->table) {
            struct table *t = s->tables[d->table - 1];
            if (t->pending)
                fetch_debug(s, t); /* arrived meanwhile? */
            tab = t;
            t->last_use = round;
            r.t = &t->st;
            r.names_path = t->names_path;
            dwarf = t->has_dwarf && !s->o.no_dwarf;
            dwarf_path = t->dwarf_path;
        }
        break;
    case SC_DSO_UNKNOWN:
        break;
    }
    /* file offsets become link-time addresses (kernel and JIT addresses are already) */
    if (d->kind == SC_DSO_FILE || d->kind == SC_DSO_VDSO) {
        va = malloc(((size_t)n + 1) * sizeof *va);
        if (!va) {
            r.t = NULL;
            dwarf = 0;
        } else {
            for (uint32_t i = 0; i < n; i++)
                if (!r.t || !sc_symtab_vaddr(r.t, addrs[i], &va[i]))
                    va[i] = addrs[i];
            r.vaddrs = va;
        }
    }
    if (dwarf && !tab->dw) {
        int fd = dwarf_path ? open(dwarf_path, O_RDONLY | O_CLOEXEC) : open_dso(s, d);
        char err[SC_ERR_LEN];
        if (fd < 0 || sc_elf_dwarf_open(fd, &tab->dw, &tab->dw_bytes, err) != 0) {
            tab->has_dwarf = 0; /* not again */
            dwarf = 0;
        } else {
            s->dwarf_bytes += tab->dw_bytes;
        }
    }
    if (dwarf) {
        char err[SC_ERR_LEN];
        if (sc_elf_lines(tab->dw, r.vaddrs, n, emit, &r, err) != 0)
            dwarf = 0;
        evict_dwarf(s, s->o.dwarf_bytes ? tab : NULL);
    }
    if (!dwarf)
        for (uint32_t i = 0; i < n; i++)
            emit(&r, i, NULL, 0);
    if (r.names_fd >= 0)
        close(r.names_fd);
    free(va);
}

void sc_symbolizer_stats(struct sc_symbolizer *s, struct sc_symbolizer_stats *st)
{
    *st = s->st;
    st->dsos = s->ndsos;
    st->tables = 0;
    for (uint32_t i = 0; i < s->ntables; i++)
        st->tables += s->tables[i] != NULL;
    st->table_bytes = s->table_bytes + s->kernel.bytes + s->vdso.bytes;
    st->dwarf_bytes = s->dwarf_bytes;
    st->dwarfs = 0;
    for (uint32_t i = 0; i < s->ntables; i++)
        st->dwarfs += s->tables[i] && s->tables[i]->dw;
}
