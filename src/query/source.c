/* source.c - per-line flat/cum of functions with their source text (go tool pprof -list). */
#include "query/source.h"
#include "model/error.h"
#include "model/json.h"
#include "model/units.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NONE UINT32_MAX
#define MARGIN 5                       /* lines shown around sampled ones, as pprof */
#define DEFAULT_MAX_FILE (32ull << 20) /* bytes of one source file */
#define MAX_TOTAL_FILES_FACTOR 8       /* all files read: 8 x the per-file limit */

static int64_t abs64(int64_t v)
{
    return v < 0 ? -v : v;
}

/* ---- paths ------------------------------------------------------------------------------ */

/* Go's filepath.Clean: the shortest lexically equal path. malloc'd, NULL on OOM. */
static char *clean_path(const char *p, size_t n)
{
    char *out = malloc(n + 2);
    if (!out)
        return NULL;
    if (n == 0) {
        memcpy(out, ".", 2);
        return out;
    }
    int rooted = p[0] == '/';
    size_t w = 0, r = 0, dotdot = 0;
    if (rooted) {
        out[w++] = '/';
        dotdot = 1;
    }
    while (r < n) {
        if (p[r] == '/' || (p[r] == '.' && (r + 1 == n || p[r + 1] == '/'))) {
            r++; /* empty and "." elements */
        } else if (p[r] == '.' && r + 1 < n && p[r + 1] == '.' && (r + 2 == n || p[r + 2] == '/')) {
            r += 2;
            if (w > dotdot) {
                w--;
                while (w > dotdot && out[w] != '/')
                    w--;
            } else if (!rooted) {
                if (w > 0)
                    out[w++] = '/';
                out[w++] = '.';
                out[w++] = '.';
                dotdot = w;
            }
        } else {
            if ((rooted && w != 1) || (!rooted && w != 0))
                out[w++] = '/';
            while (r < n && p[r] != '/')
                out[w++] = p[r++];
        }
    }
    if (w == 0)
        out[w++] = '.';
    out[w] = 0;
    return out;
}

/* The last element of a directory name, trailing slashes ignored (Go's filepath.Base). */
static void base_of(const char *dir, const char **b, size_t *n)
{
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    size_t s = len;
    while (s > 0 && dir[s - 1] != '/')
        s--;
    if (len == 1 && dir[0] == '/')
        s = 0;
    *b = dir + s;
    *n = len - s;
}

/* pprof's trimPath: configured prefixes, or its guess from the roots, and /proc/self/cwd. */
static const char *trim_path(const char *path, const struct sc_source_opts *o)
{
    if (o->ntrim == 0) {
        for (uint32_t i = 0; i < o->nroots; i++) {
            const char *b;
            size_t bn;
            base_of(o->roots[i], &b, &bn);
            char want[PATH_MAX + 3];
            if (bn == 0 || bn + 3 > sizeof want)
                continue;
            want[0] = '/';
            memcpy(want + 1, b, bn);
            want[bn + 1] = '/';
            want[bn + 2] = 0;
            const char *f = strstr(path, want);
            if (f)
                return f + bn + 2;
        }
    }
    static const char *const always[] = {"/proc/self/cwd/./", "/proc/self/cwd/"};
    for (uint32_t i = 0; i < o->ntrim + 2; i++) {
        const char *t = i < o->ntrim ? o->trim[i] : always[i - o->ntrim];
        size_t tn = strlen(t);
        if (tn == 0)
            continue;
        if (strncmp(path, t, tn) == 0) {
            if (t[tn - 1] == '/')
                return path + tn;
            if (path[tn] == '/')
                return path + tn + 1;
        }
    }
    return path;
}

/* The file's name as shown: trimmed and cleaned. malloc'd. */
static char *shown_name(struct sc_str f, const struct sc_source_opts *o)
{
    char *z = malloc((size_t)f.len + 1);
    if (!z)
        return NULL;
    memcpy(z, f.ptr, f.len);
    z[f.len] = 0;
    const char *t = trim_path(z, o);
    char *c = clean_path(t, strlen(t));
    free(z);
    return c;
}

/* A regular file no larger than max, and (unless absolute names are trusted) inside one
 * of the roots after resolving symlinks. */
static int usable(const char *path, const struct sc_source_opts *o, const char *root_real,
                  uint64_t max)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max)
        return 0;
    if (o->allow_absolute)
        return 1;
    if (!root_real)
        return 0;
    char real[PATH_MAX];
    if (!realpath(path, real))
        return 0;
    size_t rn = strlen(root_real);
    if (rn == 1 && root_real[0] == '/')
        return 1;
    return strncmp(real, root_real, rn) == 0 && real[rn] == '/';
}

static char *join(const char *dir, const char *rel)
{
    size_t dn = strlen(dir), rn = strlen(rel);
    if (dn + rn + 2 > PATH_MAX)
        return NULL;
    char *s = malloc(dn + rn + 2);
    if (!s)
        return NULL;
    /* NOLINTNEXTLINE(bugprone-not-null-terminated-result): rel's copy below ends it */
    memcpy(s, dir, dn);
    size_t k = dn;
    if (k && s[k - 1] != '/')
        s[k++] = '/';
    memcpy(s + k, rel, rn + 1);
    return s;
}

/* Where to read `shown` from, malloc'd, or NULL. */
static char *find_file(const char *shown, const struct sc_source_opts *o, char **root_real,
                       uint64_t max)
{
    const char *rel = trim_path(shown, o);
    if (rel[0] == '/') {
        if (o->allow_absolute)
            return usable(rel, o, NULL, max) ? strdup(rel) : NULL;
    } else if (o->allow_absolute || (strcmp(rel, "..") != 0 && strncmp(rel, "../", 3) != 0)) {
        for (uint32_t i = 0; i < o->nroots; i++) {
            char *dir = strdup(o->roots[i]);
            while (dir) {
                char *cand = join(dir, rel);
                if (cand && usable(cand, o, root_real[i], max)) {
                    free(dir);
                    return cand;
                }
                free(cand);
                if (!o->search_parents)
                    break;
                char *slash = strrchr(dir, '/');
                if (!slash || (slash == dir && dir[1] == 0))
                    break;
                slash[slash == dir ? 1 : 0] = 0;
            }
            free(dir);
        }
    }
    /* shorter and shorter suffixes of the name, under the roots only */
    const char *s = rel;
    while (*s == '/')
        s++;
    for (const char *x = strchr(s, '/'); x; x = strchr(x + 1, '/')) {
        const char *suffix = x + 1;
        if (!*suffix || strncmp(suffix, "../", 3) == 0 || strcmp(suffix, "..") == 0)
            continue;
        for (uint32_t i = 0; i < o->nroots; i++) {
            char *cand = join(o->roots[i], suffix);
            if (cand && usable(cand, o, root_real[i], max))
                return cand;
            free(cand);
        }
    }
    return NULL;
}

/* ---- the listing -------------------------------------------------------------------------- */

struct entry {
    uint32_t routine;
    int64_t line;
    int64_t flat, cum;
    uint32_t stamp;
};

struct rt {
    char *name_file; /* interned "name\0file" key */
    struct sc_str name, file;
    int64_t start_line;
    int64_t flat, cum;
    uint32_t stamp;
    int used;
};

struct walk {
    const uint32_t *fn_routine; /* function index -> routine, NONE = not listed */
    const struct sc_profile *p;
    struct rt *rts;
    struct sc_map64 map; /* routine << 32 | line -> entry */
    struct entry *e;
    uint32_t ne, ecap;
    uint32_t stamp;
    int vi;
    int64_t total;
};

static uint32_t line_key(int64_t line)
{
    return line < 0 || line > (int64_t)UINT32_MAX - 1 ? 0 : (uint32_t)line;
}

static struct entry *entry_get(struct walk *w, uint32_t r, int64_t line)
{
    int added;
    uint32_t *slot = sc_map64_upsert(&w->map, (uint64_t)r << 32 | line_key(line), w->ne, &added);
    if (!slot)
        return NULL;
    if (added) {
        if (sc_grow_array(&w->e, &w->ecap, (uint64_t)w->ne + 1, sizeof *w->e))
            return NULL;
        struct entry *e = &w->e[w->ne++];
        memset(e, 0, sizeof *e);
        e->routine = r;
        e->line = line_key(line);
        return e;
    }
    return &w->e[*slot];
}

static int visit(void *ctx, const uint32_t *locs, uint32_t nlocs, const int64_t *values)
{
    struct walk *w = ctx;
    int64_t v = values[w->vi];
    w->total += abs64(v);
    if (v == 0 || nlocs == 0)
        return 0;
    uint32_t stamp = ++w->stamp;
    const struct sc_profile *p = w->p;
    for (uint32_t k = 0; k < nlocs; k++) {
        const struct sc_location *l = &p->locations[locs[k]];
        const struct sc_line *lines = sc_location_lines(p, l);
        for (uint32_t j = 0; j < l->nlines; j++) {
            uint32_t fn = lines[j].function;
            uint32_t r = fn ? w->fn_routine[fn - 1] : NONE;
            if (r == NONE)
                continue;
            struct entry *e = entry_get(w, r, lines[j].line);
            if (!e)
                return SC_ENOMEM;
            if (k == 0 && j == 0) {
                e->flat += v;
                w->rts[r].flat += v;
            }
            if (e->stamp != stamp) {
                e->stamp = stamp;
                e->cum += v;
            }
            if (w->rts[r].stamp != stamp) {
                w->rts[r].stamp = stamp;
                w->rts[r].cum += v;
            }
        }
    }
    return 0;
}

static int cmp_str(struct sc_str a, struct sc_str b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int r = n ? memcmp(a.ptr, b.ptr, n) : 0;
    if (r == 0 && a.len != b.len)
        r = a.len < b.len ? -1 : 1;
    return r;
}

/* pprof's order: by name, then file, then start line. */
static int cmp_routines(const void *a, const void *b, void *arg)
{
    const struct rt *rts = arg;
    const struct rt *x = &rts[*(const uint32_t *)a], *y = &rts[*(const uint32_t *)b];
    int r = cmp_str(x->name, y->name);
    if (!r)
        r = cmp_str(x->file, y->file);
    if (!r && x->start_line != y->start_line)
        r = x->start_line < y->start_line ? -1 : 1;
    return r;
}

static int cmp_entries(const void *a, const void *b)
{
    const struct entry *x = *(const struct entry *const *)a, *y = *(const struct entry *const *)b;
    if (x->routine != y->routine)
        return x->routine < y->routine ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* A source file read whole, split in lines (Go's bufio.Scanner: '\n' ends a line, a '\r'
 * before it is dropped). */
struct srcfile {
    char *shown;
    char *data;
    struct sc_str *lines; /* lines[0] is line 1 */
    uint32_t n;
    uint64_t size;
    char *error; /* malloc'd, when not read */
};

/* Reads path into f: 0, 1 when it cannot be read (or is larger than max), or SC_ENOMEM. */
static int read_lines(const char *path, uint64_t max, struct srcfile *f)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
        close(fd);
        return 1;
    }
    size_t size = (size_t)st.st_size, got = 0;
    f->data = malloc(size + 1);
    if (!f->data) {
        close(fd);
        return SC_ENOMEM;
    }
    while (got < size) {
        ssize_t r = read(fd, f->data + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    f->size = got;
    size_t nl = 0;
    for (size_t i = 0; i < got; i++)
        nl += f->data[i] == '\n';
    f->lines = malloc((nl + 2) * sizeof *f->lines);
    if (!f->lines)
        return SC_ENOMEM;
    size_t start = 0;
    for (size_t i = 0; i <= got; i++) {
        if (i == got && start == got)
            break;
        if (i == got || f->data[i] == '\n') {
            size_t end = i;
            if (end > start && f->data[end - 1] == '\r')
                end--;
            f->lines[f->n].ptr = f->data + start;
            f->lines[f->n++].len = (uint32_t)(end - start);
            start = i + 1;
        }
    }
    return 0;
}

static void path_list(struct sc_buf *b, const struct sc_source_opts *o)
{
    for (uint32_t i = 0; i < o->nroots; i++) {
        if (i)
            sc_buf_putc(b, ':');
        sc_buf_puts(b, o->roots[i]);
    }
}

int sc_source_compute(const struct sc_profile *p, int vi, const struct sc_source_opts *o,
                      struct sc_source *s, char *err)
{
    memset(s, 0, sizeof *s);
    sc_arena_init(&s->arena);
    if (vi < 0 || (uint32_t)vi >= p->nsample_types)
        return sc_errf(err, SC_EINVAL, "sample index %d out of range", vi);
    if (!o->function && !o->regex)
        return sc_errf(err, SC_EINVAL, "no function or regular expression given");
    pcre2_code *re = NULL;
    pcre2_match_data *md = NULL;
    if (!o->function) {
        int ecode;
        PCRE2_SIZE eoff;
        re = pcre2_compile((PCRE2_SPTR)o->regex, PCRE2_ZERO_TERMINATED, 0, &ecode, &eoff, NULL);
        if (!re) {
            PCRE2_UCHAR msg[128];
            pcre2_get_error_message(ecode, msg, sizeof msg);
            return sc_errf(err, SC_EINVAL, "bad regular expression '%s': %s at offset %zu",
                           o->regex, (const char *)msg, (size_t)eoff);
        }
        md = pcre2_match_data_create_from_pattern(re, NULL);
        if (!md) {
            pcre2_code_free(re);
            return sc_errf(err, SC_ENOMEM, "out of memory");
        }
    }
    int rc = 0;
    uint32_t nf = p->nfunctions, nrt = 0;
    uint32_t *fn_routine = malloc(((size_t)nf + 1) * sizeof *fn_routine);
    struct rt *rts = calloc((size_t)nf + 1, sizeof *rts);
    struct sc_strtab keys = {0};
    keys.arena = &s->arena;
    struct walk w;
    memset(&w, 0, sizeof w);
    struct entry **order = NULL;
    struct srcfile *files = NULL;
    uint32_t nfiles = 0;
    char **root_real = calloc((size_t)o->nroots + 1, sizeof *root_real);
    if (!fn_routine || !rts || !root_real)
        goto nomem;

    /* which functions are listed, grouped into routines by (name, shown file) */
    size_t fl = o->function ? strlen(o->function) : 0;
    for (uint32_t f = 0; f < nf; f++) {
        fn_routine[f] = NONE;
        struct sc_str name = sc_profile_str(p, p->functions[f].name);
        if (!name.len)
            continue;
        if (o->function) {
            if (name.len != fl || memcmp(name.ptr, o->function, fl) != 0)
                continue;
        } else if (pcre2_match(re, (PCRE2_SPTR)name.ptr, name.len, 0, 0, md, NULL) < 0) {
            continue;
        }
        char *shown = NULL;
        struct sc_str file = sc_profile_str(p, p->functions[f].filename);
        if (file.len && !(shown = shown_name(file, o)))
            goto nomem;
        size_t sl = shown ? strlen(shown) : 0;
        char *key = malloc((size_t)name.len + sl + 2);
        if (!key) {
            free(shown);
            goto nomem;
        }
        memcpy(key, name.ptr, name.len);
        key[name.len] = 0;
        if (sl)
            memcpy(key + name.len + 1, shown, sl);
        free(shown);
        int64_t r = sc_strtab_intern(&keys, key, (size_t)name.len + 1 + sl);
        free(key);
        if (r < 0)
            goto nomem;
        fn_routine[f] = (uint32_t)r;
        if ((uint32_t)r >= nrt) {
            nrt = (uint32_t)r + 1;
            struct sc_str k = keys.v[r];
            rts[r].name.ptr = k.ptr;
            rts[r].name.len = name.len;
            rts[r].file.ptr = k.ptr + name.len + 1;
            rts[r].file.len = (uint32_t)sl;
            rts[r].start_line = p->functions[f].start_line;
        } else if (!rts[r].start_line) {
            rts[r].start_line = p->functions[f].start_line;
        }
    }

    /* flat and cum per (routine, line) in one walk over the samples */
    w.fn_routine = fn_routine;
    w.p = p;
    w.rts = rts;
    w.vi = vi;
    rc = sc_profile_foreach_sample(p, visit, &w, err);
    if (rc == SC_ENOMEM)
        goto nomem;
    if (rc)
        goto out;
    s->total = w.total;
    uint32_t used = 0;
    for (uint32_t i = 0; i < w.ne; i++)
        if (w.e[i].flat || w.e[i].cum) {
            if (!rts[w.e[i].routine].used)
                used++;
            rts[w.e[i].routine].used = 1;
        }
    if (used == 0) {
        rc = sc_errf(err, SC_ENOTFOUND, "no function with samples matches '%s'",
                     o->function ? o->function : o->regex);
        goto out;
    }
    s->routines = calloc(used, sizeof *s->routines);
    uint32_t *rt_out = malloc(((size_t)nrt + 1) * sizeof *rt_out);
    uint32_t *sorted = malloc(((size_t)used + 1) * sizeof *sorted);
    if (!s->routines || !rt_out || !sorted) {
        free(rt_out);
        free(sorted);
        goto nomem;
    }
    for (uint32_t r = 0; r < nrt; r++)
        if (rts[r].used)
            sorted[s->n++] = r;
    qsort_r(sorted, s->n, sizeof *sorted, cmp_routines, rts);
    for (uint32_t i = 0; i < nrt; i++)
        rt_out[i] = NONE;
    for (uint32_t i = 0; i < s->n; i++) {
        const struct rt *r = &rts[sorted[i]];
        struct sc_source_routine *sr = &s->routines[i];
        sr->name = r->name;
        sr->file = r->file;
        sr->start_line = r->start_line;
        sr->flat = r->flat;
        sr->cum = r->cum;
        rt_out[sorted[i]] = i;
    }
    free(sorted);
    /* entries by routine and line */
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    order = malloc(((size_t)w.ne + 1) * sizeof *order);
    if (!order) {
        free(rt_out);
        goto nomem;
    }
    uint32_t no = 0;
    for (uint32_t i = 0; i < w.ne; i++)
        if (w.e[i].flat || w.e[i].cum) {
            w.e[i].routine = rt_out[w.e[i].routine];
            order[no++] = &w.e[i];
        }
    free(rt_out);
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    qsort(order, no, sizeof *order, cmp_entries);
    if (o->max_functions && s->n > o->max_functions) {
        s->truncated = 1;
        s->n = o->max_functions;
    }

    uint64_t max = o->max_file_bytes ? o->max_file_bytes : DEFAULT_MAX_FILE;
    uint64_t budget = max * MAX_TOTAL_FILES_FACTOR;
    for (uint32_t i = 0; i < o->nroots; i++) {
        char real[PATH_MAX];
        if (realpath(o->roots[i], real) && !(root_real[i] = strdup(real)))
            goto nomem;
    }
    files = calloc((size_t)s->n + 1, sizeof *files);
    if (!files)
        goto nomem;
    struct sc_buf msg = SC_BUF_INIT;
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        struct sc_source_routine *sr = &s->routines[i];
        uint32_t b = k;
        while (k < no && order[k]->routine == i)
            k++;
        uint32_t ne = k - b;
        for (uint32_t j = b; j < k; j++)
            sr->lines_cum += order[j]->cum;
        /* the source file, read once per run */
        struct srcfile *f = NULL;
        if (sr->file.len) {
            for (uint32_t j = 0; j < nfiles && !f; j++)
                if (strlen(files[j].shown) == sr->file.len &&
                    memcmp(files[j].shown, sr->file.ptr, sr->file.len) == 0)
                    f = &files[j];
            if (!f) {
                f = &files[nfiles++];
                f->shown = strndup(sr->file.ptr, sr->file.len);
                if (!f->shown)
                    goto nomem_msg;
                /* all files read together stay within a budget too */
                uint64_t lim = budget < max ? budget : max;
                char *path = lim ? find_file(f->shown, o, root_real, lim) : NULL;
                int r = path ? read_lines(path, lim, f) : 1;
                if (r == SC_ENOMEM) {
                    free(path);
                    goto nomem_msg;
                }
                if (r == 0) {
                    budget -= f->size < budget ? f->size : budget;
                } else {
                    msg.len = 0;
                    if (lim) {
                        sc_buf_printf(&msg, "could not find file %s on path ", f->shown);
                        path_list(&msg, o);
                    } else {
                        sc_buf_printf(&msg, "not reading %s: source size limit reached", f->shown);
                    }
                    if (msg.oom || !(f->error = strdup(msg.data))) {
                        free(path);
                        goto nomem_msg;
                    }
                }
                free(path);
            }
        }
        if (f && f->error)
            sr->error = sc_arena_strndup(&s->arena, f->error, strlen(f->error));
        else if (!f)
            sr->error = "no source information";
        if (f && f->data && f->lines) {
            /* pprof's window: start line (or 5 before the first line) to 5 after the last */
            int64_t start = INT64_MAX, end = 0;
            for (uint32_t j = b; j < k; j++) {
                int64_t ln = order[j]->line;
                int64_t ns = sr->start_line ? sr->start_line : ln - MARGIN;
                if (ns < start)
                    start = ns;
                if (ln + MARGIN > end)
                    end = ln + MARGIN;
            }
            if (start < 1)
                start = 1;
            if (end > (int64_t)f->n)
                end = f->n;
            uint32_t n = end >= start ? (uint32_t)(end - start + 1) : 0;
            sr->lines = sc_arena_calloc(&s->arena, (size_t)n + 1, sizeof *sr->lines);
            if (!sr->lines)
                goto nomem_msg;
            uint32_t j = b;
            for (int64_t ln = start; ln <= end; ln++) {
                struct sc_source_line *sl = &sr->lines[sr->nlines++];
                sl->line = ln;
                while (j < k && order[j]->line < ln)
                    j++;
                if (j < k && order[j]->line == ln) {
                    sl->flat = order[j]->flat;
                    sl->cum = order[j]->cum;
                }
                struct sc_str t = f->lines[ln - 1];
                char *copy = sc_arena_strndup(&s->arena, t.ptr, t.len);
                if (!copy)
                    goto nomem_msg;
                sl->text.ptr = copy;
                sl->text.len = t.len;
            }
            sr->has_text = 1;
            sr->error = NULL;
        } else {
            sr->lines = sc_arena_calloc(&s->arena, (size_t)ne + 1, sizeof *sr->lines);
            if (!sr->lines)
                goto nomem_msg;
            for (uint32_t j = b; j < k; j++) {
                struct sc_source_line *sl = &sr->lines[sr->nlines++];
                sl->line = order[j]->line;
                sl->flat = order[j]->flat;
                sl->cum = order[j]->cum;
            }
        }
    }
    sc_buf_release(&msg);
    rc = 0;
    goto out;
nomem_msg:
    sc_buf_release(&msg);
nomem:
    rc = sc_errf(err, SC_ENOMEM, "out of memory");
out:
    if (re) {
        pcre2_match_data_free(md);
        pcre2_code_free(re);
    }
    for (uint32_t i = 0; files && i < nfiles; i++) {
        free(files[i].shown);
        free(files[i].data);
        free(files[i].lines);
        free(files[i].error);
    }
    free(files);
    for (uint32_t i = 0; root_real && i < o->nroots; i++)
        free(root_real[i]);
    free(root_real);
    free(order);
    free(fn_routine);
    free(rts);
    sc_map64_release(&w.map);
    free(w.e);
    sc_strtab_release(&keys);
    return rc;
}

void sc_source_release(struct sc_source *s)
{
    free(s->routines);
    sc_arena_release(&s->arena);
    memset(s, 0, sizeof *s);
}

/* ---- output ------------------------------------------------------------------------------ */

static void unit_of(const struct sc_profile *p, int vi, char unit[64])
{
    struct sc_str u = sc_profile_str(p, p->sample_types[vi].unit);
    snprintf(unit, 64, "%.*s", (int)u.len, u.ptr ? u.ptr : "");
}

/* A value as pprof's list prints it: in its own best unit, "." for zero, right-aligned. */
static void put_cell(struct sc_buf *out, int64_t v, const char *unit, int dot)
{
    struct sc_buf t = SC_BUF_INIT;
    if (v == 0 && dot)
        sc_buf_putc(&t, '.');
    else
        sc_units_label(&t, v, unit, "minimum");
    for (size_t i = t.len; i < 10; i++)
        sc_buf_putc(out, ' ');
    sc_buf_append(out, t.data, t.len);
    if (t.oom)
        out->oom = 1;
    sc_buf_release(&t);
}

void sc_source_write_text(const struct sc_profile *p, int vi, const struct sc_source *s,
                          struct sc_buf *out)
{
    char unit[64];
    unit_of(p, vi, unit);
    sc_buf_puts(out, "Total: ");
    sc_units_label(out, s->total, unit, "minimum");
    sc_buf_putc(out, '\n');
    for (uint32_t i = 0; i < s->n; i++) {
        const struct sc_source_routine *r = &s->routines[i];
        if (!r->file.len) {
            sc_buf_printf(out, "No source information for %.*s\n", (int)r->name.len, r->name.ptr);
            continue;
        }
        sc_buf_printf(out, "ROUTINE ======================== %.*s in %.*s\n", (int)r->name.len,
                      r->name.ptr, (int)r->file.len, r->file.ptr);
        put_cell(out, r->flat, unit, 0);
        sc_buf_putc(out, ' ');
        put_cell(out, r->lines_cum, unit, 0);
        sc_buf_puts(out, " (flat, cum) ");
        sc_units_percent(out, r->lines_cum, s->total);
        sc_buf_puts(out, " of Total\n");
        if (!r->has_text)
            sc_buf_printf(out, " Error: %s\n", r->error ? r->error : "no source");
        for (uint32_t j = 0; j < r->nlines; j++) {
            const struct sc_source_line *l = &r->lines[j];
            put_cell(out, l->flat, unit, 1);
            sc_buf_putc(out, ' ');
            put_cell(out, l->cum, unit, 1);
            sc_buf_printf(out, " %6lld:", (long long)l->line);
            if (l->text.ptr)
                sc_buf_append(out, l->text.ptr, l->text.len);
            sc_buf_putc(out, '\n');
        }
    }
}

static void put_json_s(struct sc_json *j, const char *key, struct sc_str s)
{
    sc_json_kv_strn(j, key, s.ptr ? s.ptr : "", s.ptr ? s.len : 0);
}

void sc_source_write_json(const struct sc_profile *p, int vi, const struct sc_source *s,
                          struct sc_buf *out)
{
    struct sc_json j;
    sc_json_init(&j, out);
    sc_json_obj_begin(&j);
    put_json_s(&j, "sample_type", sc_profile_str(p, p->sample_types[vi].type));
    put_json_s(&j, "unit", sc_profile_str(p, p->sample_types[vi].unit));
    sc_json_kv_i64(&j, "total", s->total);
    sc_json_kv_bool(&j, "truncated", s->truncated);
    sc_json_key(&j, "functions");
    sc_json_arr_begin(&j);
    for (uint32_t i = 0; i < s->n; i++) {
        const struct sc_source_routine *r = &s->routines[i];
        sc_json_obj_begin(&j);
        put_json_s(&j, "name", r->name);
        put_json_s(&j, "file", r->file);
        sc_json_kv_i64(&j, "start_line", r->start_line);
        sc_json_kv_i64(&j, "flat", r->flat);
        sc_json_kv_i64(&j, "cum", r->cum);
        sc_json_kv_i64(&j, "lines_cum", r->lines_cum);
        sc_json_kv_bool(&j, "source", r->has_text);
        if (!r->has_text && r->error)
            sc_json_kv_str(&j, "error", r->error);
        sc_json_key(&j, "lines");
        sc_json_arr_begin(&j);
        for (uint32_t k = 0; k < r->nlines; k++) {
            const struct sc_source_line *l = &r->lines[k];
            sc_json_obj_begin(&j);
            sc_json_kv_i64(&j, "line", l->line);
            sc_json_kv_i64(&j, "flat", l->flat);
            sc_json_kv_i64(&j, "cum", l->cum);
            if (l->text.ptr)
                put_json_s(&j, "text", l->text);
            sc_json_obj_end(&j);
        }
        sc_json_arr_end(&j);
        sc_json_obj_end(&j);
    }
    sc_json_arr_end(&j);
    sc_json_obj_end(&j);
    sc_buf_putc(out, '\n');
}
