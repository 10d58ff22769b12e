/* test_pprof.c - profile.proto decode/encode: every field, wire-format variants, round trips. */
#include "t.h"

#include "formats/input.h"
#include "formats/pprof.h"
#include "model/error.h"
#include "model/profile.h"

#include <dirent.h>

static uint32_t S(struct sc_profile *p, const char *s)
{
    return (uint32_t)sc_profile_intern(p, s, strlen(s));
}

static int str_eq(const struct sc_profile *a, uint32_t i, const struct sc_profile *b, uint32_t j)
{
    struct sc_str x = sc_profile_str(a, i), y = sc_profile_str(b, j);
    return x.len == y.len && memcmp(x.ptr, y.ptr, x.len) == 0;
}

/* Structural equality through strings (indexes may differ between tables). */
static int profiles_equal(const struct sc_profile *a, const struct sc_profile *b)
{
    int ok = 1;
#define EQ(c)                                                                                      \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "  differs: %s\n", #c);                                                \
            ok = 0;                                                                                \
        }                                                                                          \
    } while (0)
    EQ(a->nsample_types == b->nsample_types);
    EQ(a->nsamples == b->nsamples);
    EQ(a->nlocations == b->nlocations);
    EQ(a->nfunctions == b->nfunctions);
    EQ(a->nmappings == b->nmappings);
    EQ(a->nlabels == b->nlabels);
    EQ(a->ncomments == b->ncomments);
    if (!ok)
        return 0;
    for (uint32_t i = 0; i < a->nsample_types; i++) {
        EQ(str_eq(a, a->sample_types[i].type, b, b->sample_types[i].type));
        EQ(str_eq(a, a->sample_types[i].unit, b, b->sample_types[i].unit));
    }
    EQ(str_eq(a, a->default_sample_type, b, b->default_sample_type));
    EQ(str_eq(a, a->period_type.type, b, b->period_type.type));
    EQ(str_eq(a, a->period_type.unit, b, b->period_type.unit));
    EQ(a->period == b->period && a->time_nanos == b->time_nanos);
    EQ(a->duration_nanos == b->duration_nanos);
    EQ(str_eq(a, a->drop_frames, b, b->drop_frames) &&
       str_eq(a, a->keep_frames, b, b->keep_frames));
    for (uint32_t i = 0; i < a->ncomments; i++)
        EQ(str_eq(a, a->comments[i], b, b->comments[i]));
    for (uint32_t i = 0; i < a->nfunctions; i++) {
        const struct sc_function *x = &a->functions[i], *y = &b->functions[i];
        EQ(str_eq(a, x->name, b, y->name) && str_eq(a, x->system_name, b, y->system_name));
        EQ(str_eq(a, x->filename, b, y->filename) && x->start_line == y->start_line);
    }
    for (uint32_t i = 0; i < a->nmappings; i++) {
        const struct sc_mapping *x = &a->mappings[i], *y = &b->mappings[i];
        EQ(x->start == y->start && x->limit == y->limit && x->offset == y->offset);
        EQ(str_eq(a, x->filename, b, y->filename) && str_eq(a, x->build_id, b, y->build_id));
        EQ(x->has_functions == y->has_functions && x->has_inline_frames == y->has_inline_frames);
        EQ(x->has_filenames == y->has_filenames && x->has_line_numbers == y->has_line_numbers);
    }
    for (uint32_t i = 0; i < a->nlocations && ok; i++) {
        const struct sc_location *x = &a->locations[i], *y = &b->locations[i];
        EQ(x->address == y->address && x->mapping == y->mapping && x->nlines == y->nlines);
        EQ(x->is_folded == y->is_folded);
        for (uint32_t j = 0; j < x->nlines && j < y->nlines; j++) {
            const struct sc_line *l = &a->lines[x->line_start + j],
                                 *m = &b->lines[y->line_start + j];
            EQ(l->function == m->function && l->line == m->line && l->column == m->column);
        }
    }
    for (uint32_t i = 0; i < a->nsamples && ok; i++) {
        const struct sc_sample *x = &a->samples[i], *y = &b->samples[i];
        EQ(x->nlocs == y->nlocs && x->nlabels == y->nlabels);
        if (!ok)
            break;
        EQ(!memcmp(a->sample_locs + x->loc_start, b->sample_locs + y->loc_start,
                   x->nlocs * sizeof(uint32_t)));
        EQ(!memcmp(a->values + (size_t)i * a->nsample_types,
                   b->values + (size_t)i * b->nsample_types, a->nsample_types * sizeof(int64_t)));
        for (uint32_t j = 0; j < x->nlabels; j++) {
            const struct sc_label *l = &a->labels[x->label_start + j];
            const struct sc_label *m = &b->labels[y->label_start + j];
            EQ(str_eq(a, l->key, b, m->key) && str_eq(a, l->str, b, m->str));
            EQ(l->num == m->num && str_eq(a, l->num_unit, b, m->num_unit));
        }
    }
#undef EQ
    return ok;
}

/* A profile using every field of profile.proto. */
static struct sc_profile *rich_profile(void)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "alloc_objects", "count");
    sc_profile_add_sample_type(p, "alloc_space", "bytes");
    p->default_sample_type = S(p, "alloc_space");
    p->period_type.type = S(p, "space");
    p->period_type.unit = S(p, "bytes");
    p->period = 524288;
    p->time_nanos = 1700000000123456789LL;
    p->duration_nanos = 10000000000LL;
    p->drop_frames = S(p, "runtime\\..*");
    p->keep_frames = S(p, "main\\..*");
    p->comments = malloc(2 * sizeof *p->comments);
    p->comments[0] = S(p, "first comment");
    p->comments[1] = S(p, "#hidden");
    p->ncomments = 2;
    p->mappings = calloc(1, sizeof *p->mappings);
    p->mappings[0] = (struct sc_mapping){
        1, 0x400000, 0x500000, 0x1000, S(p, "/bin/app"), S(p, "abc123"), 1, 1, 1, 1};
    p->nmappings = p->mappings_cap = 1;
    const char *names[] = {"main.main", "main.work", "main.inlined", "runtime.mallocgc"};
    for (int i = 0; i < 4; i++) {
        int64_t f = sc_profile_add_function(p, S(p, names[i]), S(p, "/src/main.go"));
        p->functions[f].system_name = S(p, "sys.name");
        p->functions[f].start_line = 10 * (i + 1);
    }
    for (int i = 0; i < 4; i++) {
        int64_t l = sc_profile_add_simple_location(p, (uint32_t)i);
        p->locations[l].address = 0x401000 + 16 * (uint64_t)i;
        p->locations[l].mapping = 1;
        p->lines[p->locations[l].line_start].line = 100 + i;
        p->lines[p->locations[l].line_start].column = i;
    }
    /* location 1 (main.work) has main.inlined inlined into it: innermost first */
    p->lines = realloc(p->lines, (p->nlines + 2) * sizeof *p->lines);
    p->lines[p->nlines] = (struct sc_line){3, 7, 0};
    p->lines[p->nlines + 1] = (struct sc_line){2, 42, 3};
    p->locations[1].line_start = p->nlines;
    p->locations[1].nlines = 2;
    p->nlines += 2;
    p->locations[3].is_folded = 1;
    uint32_t s1[] = {3, 1, 0}, s2[] = {1, 0};
    int64_t v1[] = {2, 4096}, v2[] = {1, -512};
    sc_profile_add_sample(p, s1, 3, v1, 0);
    sc_profile_add_label(p, S(p, "bytes"), 0, 2048, S(p, "bytes"));
    sc_profile_add_label(p, S(p, "thread"), S(p, "worker-1"), 0, 0);
    sc_profile_add_sample(p, s2, 2, v2, 0);
    return p;
}

static struct sc_profile *decode(const void *buf, size_t n, int *rc, char *err)
{
    struct sc_profile *p = sc_profile_new();
    *rc = sc_pprof_decode(buf, n, &sc_limits_cli, p, err);
    if (*rc) {
        sc_profile_free(p);
        return NULL;
    }
    return p;
}

static void test_roundtrip_all_fields(void)
{
    struct sc_profile *p = rich_profile();
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_profile_validate(p, err), 0);
    struct sc_buf b = SC_BUF_INIT;
    T_EQ_INT(sc_pprof_encode(p, &b), 0);
    T_CHECK(sc_pprof_looks_valid(b.data, b.len));
    T_EQ_INT(sc_detect_format(b.data, b.len), SC_FMT_PPROF);
    int rc;
    struct sc_profile *q = decode(b.data, b.len, &rc, err);
    T_EQ_INT(rc, 0);
    if (q) {
        T_CHECK(profiles_equal(p, q));
        /* zero-copy: decoded strings point into the input */
        struct sc_str s = sc_profile_str(q, q->functions[0].name);
        T_CHECK(s.ptr >= b.data && s.ptr < b.data + b.len);
        /* encode(decode(x)) == x */
        struct sc_buf b2 = SC_BUF_INIT;
        T_EQ_INT(sc_pprof_encode(q, &b2), 0);
        T_CHECK(b2.len == b.len && memcmp(b.data, b2.data, b.len) == 0);
        sc_buf_release(&b2);
        sc_profile_free(q);
    }
    /* gzip through sc_decode */
    struct sc_buf gz = SC_BUF_INIT;
    T_EQ_INT(sc_gzip(b.data, b.len, 6, &gz), 0);
    struct sc_input in = {gz.data, gz.len, SC_INPUT_BORROWED};
    struct sc_profile *r = NULL;
    T_EQ_INT(sc_decode(&in, NULL, &r, err), 0);
    if (r) {
        T_CHECK(profiles_equal(p, r));
        sc_profile_free(r);
    }
    sc_buf_release(&gz);
    sc_buf_release(&b);
    sc_profile_free(p);
}

/* Hand-made wire bytes. */
static void put_varint(struct sc_buf *b, uint64_t v)
{
    while (v >= 0x80) {
        sc_buf_putc(b, (char)(v | 0x80));
        v >>= 7;
    }
    sc_buf_putc(b, (char)v);
}
static void put_key(struct sc_buf *b, int field, int wt)
{
    put_varint(b, (uint64_t)field << 3 | (uint64_t)wt);
}
static void put_bytes(struct sc_buf *b, int field, const void *p, size_t n)
{
    put_key(b, field, 2);
    put_varint(b, n);
    sc_buf_append(b, p, n);
}
static void put_msg(struct sc_buf *b, int field, struct sc_buf *m)
{
    put_bytes(b, field, m->data, m->len);
    m->len = 0;
}
static void put_uint(struct sc_buf *b, int field, uint64_t v)
{
    put_key(b, field, 0);
    put_varint(b, v);
}

static void test_wire_variants(void)
{
    /* strings first, unpacked location ids, sparse ids, unknown fields of every wire
     * type, samples before locations, functions last */
    struct sc_buf b = SC_BUF_INIT, m = SC_BUF_INIT, l = SC_BUF_INIT;
    const char *strs[] = {"", "samples", "count", "f1", "f2"};
    for (int i = 0; i < 5; i++)
        put_bytes(&b, 6, strs[i], strlen(strs[i]));
    put_uint(&m, 1, 1);
    put_uint(&m, 2, 2);
    put_msg(&b, 1, &m);
    /* sample: unpacked ids 900000 then 5, unpacked value */
    put_uint(&m, 1, 900000);
    put_uint(&m, 1, 5);
    put_uint(&m, 2, 17);
    put_key(&m, 99, 5); /* unknown fixed32 */
    sc_buf_append(&m, "\1\2\3\4", 4);
    put_msg(&b, 2, &m);
    /* sample: packed ids and packed value */
    sc_buf_append(&l, "\x05", 1);
    put_bytes(&m, 1, l.data, l.len);
    l.len = 0;
    put_varint(&l, 3);
    put_bytes(&m, 2, l.data, l.len);
    l.len = 0;
    put_msg(&b, 2, &m);
    /* locations with sparse ids */
    put_uint(&m, 1, 900000);
    put_uint(&l, 1, 77);
    put_uint(&l, 2, 12);
    put_msg(&m, 4, &l);
    put_key(&m, 50, 1); /* unknown fixed64 */
    sc_buf_append(&m, "12345678", 8);
    put_msg(&b, 4, &m);
    put_uint(&m, 1, 5);
    put_uint(&l, 1, 1000000000000ULL);
    put_msg(&m, 4, &l);
    put_msg(&b, 4, &m);
    put_bytes(&b, 1000, "unknown top-level field", 23);
    /* functions last, sparse ids */
    put_uint(&m, 1, 77);
    put_uint(&m, 2, 3);
    put_msg(&b, 5, &m);
    put_uint(&m, 1, 1000000000000ULL);
    put_uint(&m, 2, 4);
    put_msg(&b, 5, &m);
    /* packed comments */
    put_varint(&l, 3);
    put_varint(&l, 4);
    put_bytes(&b, 13, l.data, l.len);
    l.len = 0;

    char err[SC_ERR_LEN] = "";
    int rc;
    struct sc_profile *p = decode(b.data, b.len, &rc, err);
    T_EQ_INT(rc, 0);
    if (rc)
        fprintf(stderr, "  %s\n", err);
    if (p) {
        T_EQ_INT(p->nsamples, 2);
        T_EQ_INT(p->nlocations, 2);
        T_EQ_INT(p->nfunctions, 2);
        T_EQ_INT(p->ncomments, 2);
        T_EQ_INT(p->samples[0].nlocs, 2);
        T_EQ_INT(p->values[0], 17);
        T_EQ_INT(p->values[1], 3);
        /* sample 0 leaf is location id 900000 -> index 0 -> function id 77 -> "f1" */
        uint32_t li = p->sample_locs[p->samples[0].loc_start];
        T_EQ_INT(li, 0);
        const struct sc_line *ln = sc_location_lines(p, &p->locations[li]);
        T_EQ_INT(ln[0].line, 12);
        struct sc_str n = sc_function_name(p, ln[0].function - 1);
        T_EQ_MEM(n.ptr, n.len, "f1");
        uint32_t l2 = p->sample_locs[p->samples[1].loc_start];
        n = sc_function_name(p, sc_location_lines(p, &p->locations[l2])[0].function - 1);
        T_EQ_MEM(n.ptr, n.len, "f2");
        sc_profile_free(p);
    }
    sc_buf_release(&b);
    sc_buf_release(&m);
    sc_buf_release(&l);
}

/* Collects every visited sample as "v0,v1|loc,loc;" text, so walks can be compared. */
struct collect {
    struct sc_buf out;
    uint32_t nt;
    uint32_t count;
};

static int collect_visit(void *ctx, const uint32_t *locs, uint32_t nlocs, const int64_t *vals)
{
    struct collect *c = ctx;
    for (uint32_t i = 0; i < c->nt; i++) {
        sc_buf_put_i64(&c->out, vals[i]);
        sc_buf_putc(&c->out, ',');
    }
    sc_buf_putc(&c->out, '|');
    for (uint32_t i = 0; i < nlocs; i++) {
        sc_buf_put_u64(&c->out, locs[i]);
        sc_buf_putc(&c->out, ',');
    }
    sc_buf_putc(&c->out, ';');
    c->count++;
    return 0;
}

static void test_errors(void)
{
    char err[SC_ERR_LEN] = "";
    int rc;
    struct sc_buf b = SC_BUF_INIT, m = SC_BUF_INIT;
    /* a sample pointing at a missing location */
    put_bytes(&b, 6, "", 0);
    put_bytes(&b, 6, "t", 1);
    put_uint(&m, 1, 1);
    put_msg(&b, 1, &m);
    put_uint(&m, 1, 42);
    put_uint(&m, 2, 1);
    put_msg(&b, 2, &m);
    T_CHECK(decode(b.data, b.len, &rc, err) == NULL);
    T_EQ_INT(rc, SC_EFORMAT);
    T_CHECK(strstr(err, "unknown location id 42") != NULL);
    /* lazily, the same sample fails when walked, not when decoded */
    struct sc_profile *lz = sc_profile_new();
    T_EQ_INT(sc_pprof_decode_lazy(b.data, b.len, &sc_limits_cli, lz, err), 0);
    struct collect c = {SC_BUF_INIT, 1, 0};
    err[0] = 0;
    T_EQ_INT(sc_profile_foreach_sample(lz, collect_visit, &c, err), SC_EFORMAT);
    T_CHECK(strstr(err, "unknown location id 42") != NULL);
    T_EQ_INT(c.count, 0);
    sc_buf_release(&c.out);
    sc_profile_free(lz);
    /* a string index past the table */
    b.len = 0;
    put_bytes(&b, 6, "", 0);
    put_uint(&m, 1, 9);
    put_msg(&b, 1, &m);
    T_CHECK(decode(b.data, b.len, &rc, err) == NULL);
    T_EQ_INT(rc, SC_EFORMAT);
    T_CHECK(strstr(err, "string 9") != NULL);
    /* string 0 must be empty */
    b.len = 0;
    put_bytes(&b, 6, "x", 1);
    T_CHECK(decode(b.data, b.len, &rc, err) == NULL);
    T_EQ_INT(rc, SC_EFORMAT);
    /* limits: more samples than allowed */
    b.len = 0;
    put_bytes(&b, 6, "", 0);
    for (int i = 0; i < 10; i++) {
        put_uint(&m, 2, 1);
        put_msg(&b, 2, &m);
    }
    struct sc_limits lim = sc_limits_cli;
    lim.max_samples = 5;
    struct sc_profile *p = sc_profile_new();
    T_EQ_INT(sc_pprof_decode(b.data, b.len, &lim, p, err), SC_ELIMIT);
    T_CHECK(strstr(err, "10 samples") != NULL);
    sc_profile_free(p);
    /* empty input is a valid empty profile */
    p = decode("", 0, &rc, err);
    T_EQ_INT(rc, 0);
    if (p) {
        T_EQ_INT(p->nsamples, 0);
        T_EQ_INT(p->strings.n, 1);
        sc_profile_free(p);
    }
    sc_buf_release(&b);
    sc_buf_release(&m);
}

/* Every real profile: decode, encode, decode again gives the same profile, and the
 * encoding is a fixed point. */
static void test_testdata_roundtrip(void)
{
    const char *dir = t_testdata("pprof");
    if (!dir) {
        fprintf(stderr, "  (../shared/testdata absent: real-data round trips skipped)\n");
        return;
    }
    char dirpath[4096];
    snprintf(dirpath, sizeof dirpath, "%s", dir);
    DIR *d = opendir(dirpath);
    T_CHECK(d != NULL);
    if (!d)
        return;
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d))) {
        if (!strstr(e->d_name, ".pb.gz"))
            continue;
        char path[8192], err[SC_ERR_LEN] = "";
        snprintf(path, sizeof path, "%s/%s", dirpath, e->d_name);
        struct sc_profile *p;
        T_EQ_INT(sc_load(path, NULL, &p, err), 0);
        if (err[0])
            fprintf(stderr, "  %s\n", err);
        struct sc_buf b = SC_BUF_INIT, b2 = SC_BUF_INIT;
        T_EQ_INT(sc_pprof_encode(p, &b), 0);
        int rc;
        struct sc_profile *q = decode(b.data, b.len, &rc, err);
        T_EQ_INT(rc, 0);
        if (q) {
            T_CHECK(profiles_equal(p, q));
            T_EQ_INT(sc_pprof_encode(q, &b2), 0);
            T_CHECK(b.len == b2.len && !memcmp(b.data, b2.data, b.len));
            sc_profile_free(q);
        }
        T_CHECK(p->nsamples > 0);
        sc_buf_release(&b);
        sc_buf_release(&b2);
        sc_profile_free(p);
        files++;
    }
    closedir(d);
    T_CHECK(files >= 10);
}

static int stop_visit(void *ctx, const uint32_t *locs, uint32_t nlocs, const int64_t *vals)
{
    (void)locs, (void)nlocs, (void)vals;
    return ++*(int *)ctx == 3 ? 42 : 0;
}

/* Lazy decoding visits exactly the samples a materialized decode stores, in order, whole
 * or in parts (concurrently), and stores none itself. */
static void test_lazy_samples(void)
{
    struct sc_profile *rich = rich_profile();
    struct sc_buf b = SC_BUF_INIT;
    T_EQ_INT(sc_pprof_encode(rich, &b), 0);
    const char *real = t_testdata("pprof/synthetic-allocs-100k.pb.gz");
    struct sc_input in;
    char err[SC_ERR_LEN] = "";
    void *raw = NULL;
    size_t rawlen = 0;
    if (real && sc_input_read(real, 1 << 30, &in, err) == 0) {
        T_EQ_INT(sc_gunzip(in.data, in.len, 1 << 30, &raw, &rawlen, err), 0);
        sc_input_release(&in);
    }
    struct {
        const void *data;
        size_t len;
    } cases[2] = {{b.data, b.len}, {raw, rawlen}};
    for (int c = 0; c < 2; c++) {
        if (!cases[c].data)
            continue;
        struct sc_profile *m = sc_profile_new(), *z = sc_profile_new();
        T_EQ_INT(sc_pprof_decode(cases[c].data, cases[c].len, &sc_limits_cli, m, err), 0);
        T_EQ_INT(sc_pprof_decode_lazy(cases[c].data, cases[c].len, &sc_limits_cli, z, err), 0);
        T_EQ_INT(z->nsamples, 0);
        T_CHECK(z->samples == NULL && z->sample_locs == NULL);
        T_EQ_INT(sc_profile_nsamples(z), m->nsamples);
        struct collect a = {SC_BUF_INIT, m->nsample_types, 0};
        struct collect l = {SC_BUF_INIT, z->nsample_types, 0};
        T_EQ_INT(sc_profile_foreach_sample(m, collect_visit, &a, err), 0);
        T_EQ_INT(sc_profile_foreach_sample(z, collect_visit, &l, err), 0);
        T_EQ_INT(a.count, m->nsamples);
        T_CHECK(a.out.len == l.out.len && !memcmp(a.out.data, l.out.data, a.out.len));
        /* three parts walked on three threads, concatenated, are the whole walk */
        for (int lazy = 0; lazy < 2; lazy++) {
            struct collect parts[3] = {{SC_BUF_INIT, m->nsample_types, 0},
                                       {SC_BUF_INIT, m->nsample_types, 0},
                                       {SC_BUF_INIT, m->nsample_types, 0}};
            void *ctxs[3] = {&parts[0], &parts[1], &parts[2]};
            T_EQ_INT(sc_profile_foreach_sample_parallel(lazy ? z : m, 3, collect_visit, ctxs, err),
                     0);
            struct sc_buf all = SC_BUF_INIT;
            for (int k = 0; k < 3; k++) {
                sc_buf_append(&all, parts[k].out.data, parts[k].out.len);
                sc_buf_release(&parts[k].out);
            }
            T_CHECK(all.len == a.out.len && !memcmp(all.data, a.out.data, a.out.len));
            sc_buf_release(&all);
        }
        /* a visitor's non-zero result stops the walk and comes back */
        int seen = 0;
        T_EQ_INT(sc_profile_foreach_sample(z, stop_visit, &seen, err), m->nsamples >= 3 ? 42 : 0);
        sc_buf_release(&a.out);
        sc_buf_release(&l.out);
        sc_profile_free(m);
        sc_profile_free(z);
    }
    free(raw);
    sc_buf_release(&b);
    sc_profile_free(rich);
}

/* A sample's time travels as the numeric label timestamp_ns: encoded for samples with a
 * time, decoded back into time_ns (not kept as a label), also from Datadog's
 * end_timestamp_ns; a lazy decode of such a profile keeps its samples (and times). */
static void test_sample_times(void)
{
    struct sc_profile *p = rich_profile();
    p->samples[0].time_ns = 1700000000123456789LL;
    p->samples[1].time_ns = 0;
    struct sc_buf b = SC_BUF_INIT;
    T_EQ_INT(sc_pprof_encode(p, &b), 0);
    char err[SC_ERR_LEN] = "";
    int rc;
    struct sc_profile *q = decode(b.data, b.len, &rc, err);
    T_EQ_INT(rc, 0);
    if (q) {
        T_EQ_INT(q->samples[0].time_ns, 1700000000123456789LL);
        T_EQ_INT(q->samples[1].time_ns, 0);
        T_EQ_INT(q->samples[0].nlabels, 2); /* bytes, thread: the time is no label */
        T_CHECK(profiles_equal(p, q));
        /* the two strings were appended once; encode(decode(x)) is a fixed point */
        T_EQ_INT(q->strings.n, p->strings.n + 2);
        struct sc_buf b2 = SC_BUF_INIT;
        T_EQ_INT(sc_pprof_encode(q, &b2), 0);
        T_CHECK(b2.len == b.len && memcmp(b.data, b2.data, b.len) == 0);
        sc_buf_release(&b2);
        sc_profile_free(q);
    }
    /* lazy decoding keeps timestamped samples in the profile */
    struct sc_profile *z = sc_profile_new();
    T_EQ_INT(sc_pprof_decode_lazy(b.data, b.len, &sc_limits_cli, z, err), 0);
    T_CHECK(z->lazy == NULL);
    T_EQ_INT(z->nsamples, 2);
    if (z->nsamples == 2)
        T_EQ_INT(z->samples[0].time_ns, 1700000000123456789LL);
    sc_profile_free(z);
    sc_buf_release(&b);

    /* Datadog's key, written by hand: one sample, one location, end_timestamp_ns = 42 s */
    struct sc_buf w = SC_BUF_INIT, m = SC_BUF_INIT, l = SC_BUF_INIT;
    put_uint(&m, 1, 1); /* sample type: type "samples", unit "count" */
    put_uint(&m, 2, 2);
    put_msg(&w, 1, &m);
    m.len = 0;
    put_uint(&m, 1, 1); /* location id 1 */
    put_msg(&w, 4, &m);
    m.len = 0;
    put_uint(&m, 1, 1); /* location_id */
    put_uint(&m, 2, 7); /* value */
    put_uint(&l, 1, 3);
    put_uint(&l, 3, 42000000000ULL);
    put_uint(&l, 4, 4);
    put_msg(&m, 3, &l);
    l.len = 0;
    put_uint(&l, 1, 5); /* a string label stays */
    put_uint(&l, 2, 6);
    put_msg(&m, 3, &l);
    put_msg(&w, 2, &m);
    const char *strs[] = {"", "samples", "count", "end_timestamp_ns", "nanoseconds", "comm", "x"};
    for (int i = 0; i < 7; i++)
        put_bytes(&w, 6, strs[i], strlen(strs[i]));
    q = decode(w.data, w.len, &rc, err);
    T_EQ_INT(rc, 0);
    if (q) {
        T_EQ_INT(q->samples[0].time_ns, 42000000000LL);
        T_EQ_INT(q->samples[0].nlabels, 1);
        T_EQ_INT(q->labels[q->samples[0].label_start].key, 5);
        sc_profile_free(q);
    }
    sc_buf_release(&w);
    sc_buf_release(&m);
    sc_buf_release(&l);
    sc_profile_free(p);
}

/* Writes n bytes to dir/name; the path goes to path. 0 or -1. */
static int put_file(const char *dir, const char *name, const void *data, size_t n, char *path,
                    size_t cap)
{
    snprintf(path, cap, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Loads dir/name holding data; 0, or the error with its message in err. */
static int load_bytes(const char *dir, const char *name, const void *data, size_t n,
                      const struct sc_decode_opts *o, struct sc_profile **p, char *err)
{
    char path[4200];
    *p = NULL;
    err[0] = 0;
    if (put_file(dir, name, data, n, path, sizeof path))
        return -100;
    return sc_load(path, o, p, err);
}

/* sc_load, the commands' one way in: what go tool pprof refuses (an empty input, also
 * gzipped; a profile without sample types) is refused, Go's legacy text profiles are named
 * as such, and every error, also one a lazy walk meets later, reads "cannot read 'path'". */
static void test_load_refusals(void)
{
    char dir[] = "/tmp/scorch-test-load-XXXXXX";
    if (!mkdtemp(dir))
        T_SKIP("no temporary directory");
    char err[SC_ERR_LEN], want[4300];
    struct sc_profile *p;

    T_EQ_INT(load_bytes(dir, "empty", "", 0, NULL, &p, err), SC_EFORMAT);
    snprintf(want, sizeof want, "cannot read '%s/empty': empty input", dir);
    T_EQ_STR(err, want);
    T_CHECK(p == NULL);
    struct sc_buf gz = SC_BUF_INIT;
    T_EQ_INT(sc_gzip("", 0, 6, &gz), 0);
    T_EQ_INT(load_bytes(dir, "empty.gz", gz.data, gz.len, NULL, &p, err), SC_EFORMAT);
    T_CHECK(strstr(err, "empty.gz': empty input") != NULL);
    sc_buf_release(&gz);
    /* named as perf script, an empty input is one without samples (collapse perf) */
    struct sc_decode_opts perf = {.format = SC_FMT_PERF};
    T_EQ_INT(load_bytes(dir, "empty.perf", "", 0, &perf, &p, err), 0);
    T_CHECK(p && p->nsamples == 0);
    sc_profile_free(p);

    /* a string table and nothing else: no sample types */
    struct sc_buf b = SC_BUF_INIT, m = SC_BUF_INIT;
    put_bytes(&b, 6, "", 0);
    T_EQ_INT(load_bytes(dir, "no-types.pb", b.data, b.len, NULL, &p, err), SC_EFORMAT);
    snprintf(want, sizeof want, "cannot read '%s/no-types.pb': profile has no sample types", dir);
    T_EQ_STR(err, want);

    /* Go's text profiles (debug=1) are legacy profiles, read as go tool pprof reads them */
    const char *go = "goroutine profile: total 0\n";
    T_EQ_INT(load_bytes(dir, "goroutine.txt", go, strlen(go), NULL, &p, err), 0);
    T_EQ_INT(p->nsample_types, 1);
    sc_profile_free(p);
    const char *heap = "heap profile: 0: 0 [0: 0] @ heap/1048576\n";
    T_EQ_INT(load_bytes(dir, "heap.txt", heap, strlen(heap), NULL, &p, err), 0);
    T_EQ_INT(p->period, 524288);
    sc_profile_free(p);
    const char *bad = "goroutine profile: total 2\n2 @ zz\n";
    T_EQ_INT(load_bytes(dir, "bad.txt", bad, strlen(bad), NULL, &p, err), SC_EFORMAT);
    T_CHECK(strstr(err, "bad.txt': malformed profile format") != NULL);
    T_EQ_INT(sc_detect_format(go, strlen(go)), SC_FMT_LEGACY);
    T_EQ_INT(sc_detect_format("a profile: total 3;x 2\n", 23), SC_FMT_FOLDED);

    /* a sample on a location that is not there: found by a lazy decode on its walk */
    b.len = 0;
    const char *strs[] = {"", "samples", "count", "f"};
    for (int i = 0; i < 4; i++)
        put_bytes(&b, 6, strs[i], strlen(strs[i]));
    put_uint(&m, 1, 1);
    put_uint(&m, 2, 2);
    put_msg(&b, 1, &m);
    put_uint(&m, 1, 1);
    put_uint(&m, 2, 3);
    put_msg(&b, 5, &m);
    struct sc_buf l = SC_BUF_INIT;
    put_uint(&l, 1, 1);
    put_uint(&m, 1, 1);
    put_msg(&m, 4, &l);
    put_msg(&b, 4, &m);
    put_uint(&m, 1, 9); /* location 9 */
    put_uint(&m, 2, 1);
    put_msg(&b, 2, &m);
    snprintf(want, sizeof want,
             "cannot read '%s/bad.pb': malformed pprof: sample refers to unknown location id 9",
             dir);
    T_EQ_INT(load_bytes(dir, "bad.pb", b.data, b.len, NULL, &p, err), SC_EFORMAT);
    T_EQ_STR(err, want);
    struct sc_decode_opts lazy = {.lazy_samples = SC_PPROF_LAZY};
    T_EQ_INT(load_bytes(dir, "bad.pb", b.data, b.len, &lazy, &p, err), 0);
    T_CHECK(p && p->lazy);
    if (p) {
        int seen = 0;
        err[0] = 0;
        T_EQ_INT(sc_profile_foreach_sample(p, stop_visit, &seen, err), SC_EFORMAT);
        T_EQ_STR(err, want);
        sc_profile_free(p);
    }
    sc_buf_release(&b);
    sc_buf_release(&m);
    sc_buf_release(&l);
    T_EQ_INT(t_rmrf(dir), 0);
}

int main(void)
{
    T_RUN(test_roundtrip_all_fields);
    T_RUN(test_wire_variants);
    T_RUN(test_errors);
    T_RUN(test_testdata_roundtrip);
    T_RUN(test_lazy_samples);
    T_RUN(test_sample_times);
    T_RUN(test_load_refusals);
    return t_done();
}
