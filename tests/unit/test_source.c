/* test_source.c - per-line flat/cum, source lookup (roots, trims, suffixes, containment), output.
 */
#include "t.h"

#include "model/error.h"
#include "model/profile.h"
#include "query/source.h"

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

static void write_file(const char *rel, const char *text)
{
    char path[512], dir[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
    /* make the parent directories */
    for (char *s = strchr(path + strlen(tmpdir) + 1, '/'); s; s = strchr(s + 1, '/')) {
        snprintf(dir, sizeof dir, "%.*s", (int)(s - path), path);
        mkdir(dir, 0755);
    }
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static uint32_t fn(struct sc_profile *p, const char *name, const char *file, int64_t start)
{
    uint32_t n = (uint32_t)sc_profile_intern(p, name, strlen(name));
    uint32_t f = (uint32_t)sc_profile_intern(p, file, strlen(file));
    uint32_t i = (uint32_t)sc_profile_add_function(p, n, f);
    p->functions[i].start_line = start;
    return i;
}

/* A location with frames (function, line) innermost first. */
static uint32_t loc(struct sc_profile *p, const uint32_t *fns, const int64_t *lines, uint32_t n)
{
    p->lines = realloc(p->lines, (p->nlines + n) * sizeof *p->lines);
    p->lines_cap = p->nlines + n;
    p->locations = realloc(p->locations, (p->nlocations + 1) * sizeof *p->locations);
    p->locations_cap = p->nlocations + 1;
    struct sc_location *l = &p->locations[p->nlocations];
    memset(l, 0, sizeof *l);
    l->id = p->nlocations + 1;
    l->line_start = p->nlines;
    l->nlines = n;
    for (uint32_t i = 0; i < n; i++) {
        memset(&p->lines[p->nlines], 0, sizeof *p->lines);
        p->lines[p->nlines].function = fns[i] + 1;
        p->lines[p->nlines++].line = lines[i];
    }
    return p->nlocations++;
}

static uint32_t at(struct sc_profile *p, uint32_t f, int64_t line)
{
    return loc(p, &f, &line, 1);
}

static const struct sc_source_line *line_of(const struct sc_source_routine *r, int64_t n)
{
    for (uint32_t i = 0; i < r->nlines; i++)
        if (r->lines[i].line == n)
            return &r->lines[i];
    return NULL;
}

static const char source_text[] = "package x\n"     /* 1 */
                                  "\n"              /* 2 */
                                  "func work() {\n" /* 3 */
                                  "\tfor {\n"       /* 4 */
                                  "\t\tstep()\n"    /* 5 */
                                  "\t\tstep()\r\n"  /* 6: CR dropped */
                                  "\t}\n"           /* 7 */
                                  "}\n"             /* 8 */
                                  "\n"              /* 9 */
                                  "func step() {\n" /* 10 */
                                  "\twork()\n"      /* 11 */
                                  "}\n"             /* 12 */
                                  "// end\n";       /* 13 */

/* work at lines 5 and 6 calls step (line 11), which recurses into work */
static struct sc_profile *profile(const char *file, struct sc_profile **out)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "cpu", "nanoseconds");
    uint32_t work = fn(p, "x.work", file, 3), step = fn(p, "x.step", file, 10);
    uint32_t main = fn(p, "main", "main.go", 0);
    uint32_t lm = at(p, main, 7);
    int64_t v;
    /* work:5 -> step:11 (leaf) */
    v = 100;
    sc_profile_add_sample(p, (uint32_t[]){at(p, step, 11), at(p, work, 5), lm}, 3, &v, 0);
    /* leaf in work:6 */
    v = 10;
    sc_profile_add_sample(p, (uint32_t[]){at(p, work, 6), lm}, 2, &v, 0);
    /* recursion work:5 -> step:11 -> work:5 (leaf): work:5 counts once for cum */
    v = 1;
    sc_profile_add_sample(p, (uint32_t[]){at(p, work, 5), at(p, step, 11), at(p, work, 5), lm}, 4,
                          &v, 0);
    /* step inlined into work at line 6: flat to the inlined (innermost) step:11 */
    v = 1000;
    uint32_t fns[] = {step, work};
    int64_t lines[] = {11, 6};
    sc_profile_add_sample(p, (uint32_t[]){loc(p, fns, lines, 2), lm}, 2, &v, 0);
    *out = p;
    return p;
}

static void test_values(void)
{
    struct sc_profile *p;
    profile("x/x.go", &p);
    const char *roots[] = {tmpdir};
    struct sc_source_opts o = {.regex = "^x\\.", .roots = roots, .nroots = 1};
    struct sc_source s;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_source_compute(p, 0, &o, &s, err), 0);
    T_EQ_INT(s.total, 1111);
    T_EQ_INT(s.n, 2);
    const struct sc_source_routine *step = &s.routines[0], *work = &s.routines[1];
    T_EQ_MEM(step->name.ptr, step->name.len, "x.step"); /* by name */
    T_EQ_MEM(work->name.ptr, work->name.len, "x.work");
    T_EQ_MEM(work->file.ptr, work->file.len, "x/x.go");
    T_EQ_INT(work->start_line, 3);
    T_CHECK(work->has_text && step->has_text);
    /* work: flat 10 (line 6) + 1 (line 5); cum once per sample: all four samples */
    T_EQ_INT(work->flat, 11);
    T_EQ_INT(work->cum, 1111);
    const struct sc_source_line *l5 = line_of(work, 5), *l6 = line_of(work, 6);
    T_CHECK(l5 && l6);
    if (l5 && l6) {
        T_EQ_INT(l5->flat, 1);
        T_EQ_INT(l5->cum, 101); /* the recursive sample once */
        T_EQ_INT(l6->flat, 10);
        T_EQ_INT(l6->cum, 1010);
        T_EQ_MEM(l6->text.ptr, l6->text.len, "\t\tstep()"); /* no CR */
    }
    T_EQ_INT(work->lines_cum, 1111);
    /* the window: from the start line to 5 lines after the last sampled line, cut at EOF */
    T_EQ_INT(work->lines[0].line, 3);
    T_EQ_INT(work->lines[work->nlines - 1].line, 11);
    T_EQ_INT(step->lines[0].line, 10);
    T_EQ_INT(step->lines[step->nlines - 1].line, 13); /* 11 + 5, but the file ends at 13 */
    T_EQ_INT(step->flat, 1100);
    T_EQ_INT(step->cum, 1101);
    const struct sc_source_line *l11 = line_of(step, 11);
    T_CHECK(l11 && l11->flat == 1100 && l11->cum == 1101);
    T_EQ_MEM(l11 ? l11->text.ptr : "", l11 ? l11->text.len : 0, "\twork()");

    struct sc_buf b = SC_BUF_INIT;
    sc_source_write_text(p, 0, &s, &b);
    T_CHECK(b.data && !strncmp(b.data, "Total: 1.11us\n", 14));
    T_CHECK(b.data && strstr(b.data, "ROUTINE ======================== x.work in x/x.go\n"
                                     "      11ns     1.11us (flat, cum)   100% of Total\n"
                                     "         .          .      3:func work() {\n"));
    T_CHECK(b.data && strstr(b.data, "       1ns      101ns      5:\t\tstep()\n"));
    sc_buf_release(&b);
    sc_buf_init(&b);
    sc_source_write_json(p, 0, &s, &b);
    T_CHECK(b.data && !strncmp(b.data,
                               "{\"sample_type\":\"cpu\",\"unit\":\"nanoseconds\",\"total\":"
                               "1111,\"truncated\":false,\"functions\":[{\"name\":\"x.step\"",
                               100));
    T_CHECK(b.data &&
            strstr(b.data, "{\"line\":6,\"flat\":10,\"cum\":1010,\"text\":\"\\t\\tstep()\"}"));
    T_CHECK(b.data && strstr(b.data, "\"lines_cum\":1111,\"source\":true,"));
    sc_buf_release(&b);
    sc_source_release(&s);

    /* exact names; unknown names; bad patterns */
    o.regex = NULL;
    o.function = "x.work";
    T_EQ_INT(sc_source_compute(p, 0, &o, &s, err), 0);
    T_EQ_INT(s.n, 1);
    sc_source_release(&s);
    o.function = "x.wor";
    T_EQ_INT(sc_source_compute(p, 0, &o, &s, err), SC_ENOTFOUND);
    T_CHECK(strstr(err, "'x.wor'") != NULL);
    sc_source_release(&s);
    o.function = NULL;
    o.regex = "x.(";
    T_EQ_INT(sc_source_compute(p, 0, &o, &s, err), SC_EINVAL);
    T_CHECK(strstr(err, "bad regular expression 'x.('") != NULL);
    sc_source_release(&s);
    o.regex = NULL;
    T_EQ_INT(sc_source_compute(p, 0, &o, &s, err), SC_EINVAL);
    sc_source_release(&s);
    /* a limit on routines */
    o.regex = ".";
    o.max_functions = 1;
    T_EQ_INT(sc_source_compute(p, 0, &o, &s, err), 0);
    T_EQ_INT(s.n, 1);
    T_CHECK(s.truncated);
    sc_source_release(&s);
    sc_profile_free(p);
}

/* where a file name is looked for */
static void test_lookup(void)
{
    const char *roots[] = {tmpdir};
    char root_proj[300];
    snprintf(root_proj, sizeof root_proj, "%s/proj", tmpdir);
    const char *proj[] = {root_proj};
    struct {
        const char *file; /* in the profile */
        const char *const *roots;
        const char *trim;
        int found;
        const char *shown;
    } cases[] = {
        {"x/x.go", roots, NULL, 1, "x/x.go"},
        {"x/./y/../x.go", roots, NULL, 1, "x/x.go"},             /* cleaned */
        {"/proc/self/cwd/x/x.go", roots, NULL, 1, "x/x.go"},     /* pprof's trims */
        {"/build/abc/x/x.go", roots, "/build/abc", 1, "x/x.go"}, /* -trim_path */
        {"/home/ci/proj/src/y.go", proj, NULL, 1, "src/y.go"},   /* "/<root base>/" guessed */
        {"/elsewhere/deep/x/x.go", roots, NULL, 1, "/elsewhere/deep/x/x.go"}, /* suffix */
        {"no/such/file.go", roots, NULL, 0, "no/such/file.go"},
        {"../x/x.go", proj, NULL, 0, "../x/x.go"},          /* outside the root */
        {"/etc/hostname", roots, NULL, 0, "/etc/hostname"}, /* absolute: not trusted */
        {"link/hostname", roots, NULL, 0, "link/hostname"}, /* symlink out of the root */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sc_profile *p = sc_profile_new();
        sc_profile_add_sample_type(p, "samples", "count");
        uint32_t f = fn(p, "f", cases[i].file, 0);
        int64_t v = 3;
        sc_profile_add_sample(p, (uint32_t[]){at(p, f, 2)}, 1, &v, 0);
        struct sc_source_opts o = {.function = "f", .roots = cases[i].roots, .nroots = 1};
        if (cases[i].trim) {
            o.trim = &cases[i].trim;
            o.ntrim = 1;
        }
        struct sc_source s;
        char err[SC_ERR_LEN] = "";
        T_EQ_INT(sc_source_compute(p, 0, &o, &s, err), 0);
        if (s.n == 1) {
            const struct sc_source_routine *r = &s.routines[0];
            if (r->has_text != cases[i].found)
                fprintf(stderr, "  case %zu (%s): found %d\n", i, cases[i].file, r->has_text);
            T_EQ_INT(r->has_text, cases[i].found);
            T_EQ_MEM(r->file.ptr, r->file.len, cases[i].shown);
            if (!cases[i].found) {
                /* the numbers still come back, without text */
                T_CHECK(r->error && strstr(r->error, "could not find file"));
                T_EQ_INT(r->nlines, 1);
                T_CHECK(r->nlines && r->lines[0].line == 2 && r->lines[0].flat == 3 &&
                        r->lines[0].text.ptr == NULL);
            }
        }
        sc_source_release(&s);
        sc_profile_free(p);
    }

    /* the CLI trusts absolute names */
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "samples", "count");
    char abs[400];
    snprintf(abs, sizeof abs, "%s/x/x.go", tmpdir);
    uint32_t f = fn(p, "f", abs, 0);
    int64_t v = 3;
    sc_profile_add_sample(p, (uint32_t[]){at(p, f, 2)}, 1, &v, 0);
    const char *nowhere[] = {"/nonexistent"};
    struct sc_source_opts o = {.function = "f", .roots = nowhere, .nroots = 1};
    struct sc_source s;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_source_compute(p, 0, &o, &s, err), 0);
    T_CHECK(s.n == 1 && !s.routines[0].has_text);
    sc_source_release(&s);
    o.allow_absolute = 1;
    T_EQ_INT(sc_source_compute(p, 0, &o, &s, err), 0);
    T_CHECK(s.n == 1 && s.routines[0].has_text);
    sc_source_release(&s);
    /* files over the size limit are not read */
    o.max_file_bytes = 10;
    T_EQ_INT(sc_source_compute(p, 0, &o, &s, err), 0);
    T_CHECK(s.n == 1 && !s.routines[0].has_text);
    sc_source_release(&s);
    sc_profile_free(p);
}

/* a function without a file: numbers only, and pprof's words in the text */
static void test_no_file(void)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "samples", "count");
    uint32_t f = fn(p, "anon", "", 0);
    int64_t v = 5;
    sc_profile_add_sample(p, (uint32_t[]){at(p, f, 0)}, 1, &v, 0);
    struct sc_source_opts o = {.regex = "anon"};
    struct sc_source s;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_source_compute(p, 0, &o, &s, err), 0);
    T_CHECK(s.n == 1 && !s.routines[0].has_text && s.routines[0].flat == 5);
    struct sc_buf b = SC_BUF_INIT;
    sc_source_write_text(p, 0, &s, &b);
    T_CHECK(b.data && strstr(b.data, "No source information for anon\n"));
    sc_buf_release(&b);
    sc_source_release(&s);
    sc_profile_free(p);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/scorch-test-source-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    write_file("x/x.go", source_text);
    write_file("proj/src/y.go", "package y\nfunc f() {}\n");
    char link[400];
    snprintf(link, sizeof link, "%s/link", tmpdir);
    mkdir(link, 0755);
    snprintf(link, sizeof link, "%s/link/hostname", tmpdir);
    T_EQ_INT(symlink("/etc/hostname", link), 0);
    T_RUN(test_values);
    T_RUN(test_lookup);
    T_RUN(test_no_file);
    t_rmrf(tmpdir);
    return t_done();
}
