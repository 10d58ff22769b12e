/* test_jfr.c - the JFR decoder on the synthetic recording (fuzz/corpus/jfr/synth-labels, made
 * by tests/e2e/jfr_synth.py): kinds, values, times, context labels, limits, and every
 * truncation and many corruptions of it refused with a reason or read, never a crash. */
#include "t.h"

#include "formats/jfr.h"
#include "model/error.h"

#include <stdlib.h>
#include <string.h>

static unsigned char *seed;
static size_t seed_len;
static const unsigned char *rec, *labels;
static size_t rec_len, labels_len;

/* The seed: two bytes of labels length, the LabelsSnapshot, the recording. */
static void load(void)
{
    const char *src = getenv("SCORCH_SRC");
    char path[4096];
    snprintf(path, sizeof path, "%s/fuzz/corpus/jfr/synth-labels", src ? src : ".");
    FILE *f = fopen(path, "rb");
    if (!f)
        T_SKIP("fuzz/corpus/jfr/synth-labels is absent (SCORCH_SRC unset?)");
    seed = malloc(1 << 16);
    seed_len = fread(seed, 1, 1 << 16, f);
    fclose(f);
    labels_len = (size_t)seed[0] | (size_t)seed[1] << 8;
    labels = seed + 2;
    rec = labels + labels_len;
    rec_len = seed_len - 2 - labels_len;
}

static const char *label_of(const struct sc_profile *p, const struct sc_sample *s, const char *k)
{
    static char buf[64];
    for (uint32_t i = 0; i < s->nlabels; i++) {
        const struct sc_label *l = &p->labels[s->label_start + i];
        struct sc_str ks = sc_profile_str(p, l->key), vs = sc_profile_str(p, l->str);
        if (ks.len == strlen(k) && !memcmp(ks.ptr, k, ks.len)) {
            snprintf(buf, sizeof buf, "%.*s", (int)vs.len, vs.ptr);
            return buf;
        }
    }
    return NULL;
}

/* the kinds, their values, the chunks' own time bases and the context labels */
static void test_kinds(void)
{
    char err[SC_ERR_LEN];
    struct sc_profile *k[SC_JFR_NKINDS];
    struct sc_jfr_opts o = {0, labels, labels_len};
    T_EQ_INT(sc_jfr_decode_kinds(rec, rec_len, &o, NULL, k, err), 0);
    T_CHECK(k[SC_JFR_CPU] && k[SC_JFR_WALL] && k[SC_JFR_ALLOC_TLAB] && k[SC_JFR_ALLOC_OUTSIDE] &&
            k[SC_JFR_LOCK] && k[SC_JFR_PARK]);
    T_CHECK(!k[SC_JFR_ALLOC_SAMPLE]);
    if (!k[SC_JFR_CPU] || !k[SC_JFR_PARK] || !k[SC_JFR_WALL])
        return;
    /* native method samples are wall time, each worth their own event's period (30 ms) */
    T_EQ_INT(k[SC_JFR_WALL]->nsamples, 2);
    T_EQ_INT(k[SC_JFR_WALL]->values[0], 30000000);
    T_EQ_INT(k[SC_JFR_WALL]->period, 30000000);
    const struct sc_profile *cpu = k[SC_JFR_CPU];
    /* ten samples (one of eleven sleeps), each worth the recording's 20 ms */
    T_EQ_INT(cpu->nsamples, 10);
    T_EQ_INT(cpu->period, 20000000);
    int a = 0, b = 0;
    for (uint32_t i = 0; i < cpu->nsamples; i++) {
        const struct sc_sample *s = &cpu->samples[i];
        T_EQ_INT(cpu->values[i], 20000000);
        T_CHECK(s->time_ns >= cpu->time_nanos);
        const char *ep = label_of(cpu, s, "endpoint");
        a += ep && !strcmp(ep, "/api/a");
        b += ep && !strcmp(ep, "/api/b");
        if (ep && !strcmp(ep, "/api/a"))
            T_EQ_STR(label_of(cpu, s, "user"), "u1");
    }
    T_EQ_INT(a, 7);
    T_EQ_INT(b, 2);
    /* chunk 1's first sample is 100 ms into it; chunk 2 starts 2 s later and counts
     * microsecond ticks: its park event 200 ms in, 2,000 ticks long */
    T_EQ_INT(cpu->samples[0].time_ns - cpu->time_nanos, 100000000);
    const struct sc_profile *park = k[SC_JFR_PARK];
    T_EQ_INT(park->nsamples, 1);
    T_EQ_INT(park->samples[0].time_ns - cpu->time_nanos, 2200000000LL);
    T_EQ_INT(park->values[0], 1);
    T_EQ_INT(park->values[1], 2000000);
    T_EQ_INT(k[SC_JFR_LOCK]->values[1], 5000);
    T_EQ_INT(k[SC_JFR_ALLOC_OUTSIDE]->values[1], 70000); /* allocationSize, not tlabSize */
    /* a push's sampleRate decides a CPU sample's worth */
    for (int i = 0; i < SC_JFR_NKINDS; i++)
        sc_profile_free(k[i]);
    o.period_ns = 10000000;
    T_EQ_INT(sc_jfr_decode_kinds(rec, rec_len, &o, NULL, k, err), 0);
    T_EQ_INT(k[SC_JFR_CPU]->values[0], 10000000);
    T_EQ_INT(k[SC_JFR_WALL]->values[0], 10000000);
    for (int i = 0; i < SC_JFR_NKINDS; i++)
        sc_profile_free(k[i]);
    T_EQ_STR(sc_jfr_kind_profile(SC_JFR_ALLOC_SAMPLE), "heap");
    T_EQ_STR(sc_jfr_kind_profile(SC_JFR_PARK), "block");
    T_CHECK(sc_jfr_kind_profile(SC_JFR_NKINDS) == NULL);
}

/* the one-profile form: every kind's columns, unique names, cpu the default */
static void test_one_profile(void)
{
    char err[SC_ERR_LEN];
    struct sc_profile *p = sc_profile_new();
    T_EQ_INT(sc_jfr_decode(rec, rec_len, NULL, NULL, p, err), 0);
    T_EQ_INT(p->nsample_types, 10);
    T_EQ_INT(sc_profile_sample_index(p, NULL, err), 0);
    T_CHECK(sc_profile_sample_index(p, "wall", err) == 1);
    T_CHECK(sc_profile_sample_index(p, "alloc_outside_tlab_bytes", err) == 5);
    T_CHECK(sc_profile_sample_index(p, "park_delay", err) == 9);
    T_CHECK(sc_profile_sample_index(p, "delay", err) == 7);
    T_EQ_INT(p->nsamples, 17);
    sc_profile_free(p);
}

/* limits name themselves; detection; an unfinished chunk */
static void test_limits(void)
{
    char err[SC_ERR_LEN];
    struct sc_profile *k[SC_JFR_NKINDS];
    struct sc_limits lim = sc_limits_cli;
    lim.max_samples = 3;
    T_EQ_INT(sc_jfr_decode_kinds(rec, rec_len, NULL, &lim, k, err), SC_ELIMIT);
    T_CHECK(strstr(err, "limits.max_samples") != NULL);
    T_CHECK(k[SC_JFR_CPU] == NULL);
    lim = sc_limits_cli;
    lim.max_stack_depth = 2;
    T_EQ_INT(sc_jfr_decode_kinds(rec, rec_len, NULL, &lim, k, err), SC_ELIMIT);
    T_CHECK(strstr(err, "limits.max_stack_depth") != NULL);
    lim = sc_limits_cli;
    lim.max_labels = 1;
    struct sc_jfr_opts o = {0, labels, labels_len};
    T_EQ_INT(sc_jfr_decode_kinds(rec, rec_len, &o, &lim, k, err), SC_ELIMIT);
    T_CHECK(strstr(err, "limits.max_labels") != NULL);

    T_CHECK(sc_jfr_detect(rec, rec_len));
    T_CHECK(!sc_jfr_detect(rec, 7));
    T_CHECK(!sc_jfr_detect("FLR\0\0\3\0\0", 8));
    unsigned char *c = malloc(rec_len);
    memcpy(c, rec, rec_len);
    memset(c + 8, 0, 8); /* the size the JVM writes last */
    T_EQ_INT(sc_jfr_decode_kinds(c, rec_len, NULL, NULL, k, err), SC_EFORMAT);
    T_CHECK(strstr(err, "unfinished") != NULL);
    /* zero padding after the last chunk is no chunk */
    unsigned char *z = calloc(1, rec_len + 100);
    memcpy(z, rec, rec_len);
    T_EQ_INT(sc_jfr_decode_kinds(z, rec_len + 100, NULL, NULL, k, err), 0);
    for (int i = 0; i < SC_JFR_NKINDS; i++)
        sc_profile_free(k[i]);
    free(c);
    free(z);
    o.labels = "\xff\xff\xff";
    o.labels_len = 3;
    T_EQ_INT(sc_jfr_decode_kinds(rec, rec_len, &o, NULL, k, err), SC_EFORMAT);
    T_CHECK(strstr(err, "LabelsSnapshot") != NULL);
}

static int decodes_or_says_why(const unsigned char *b, size_t n, const void *lab, size_t ln)
{
    char err[SC_ERR_LEN] = "";
    struct sc_profile *k[SC_JFR_NKINDS];
    struct sc_jfr_opts o = {0, lab, ln};
    int rc = sc_jfr_decode_kinds(b, n, &o, &sc_limits_server, k, err);
    for (int i = 0; i < SC_JFR_NKINDS; i++) {
        if (k[i] && sc_profile_validate(k[i], err))
            rc = SC_EINTERNAL;
        sc_profile_free(k[i]);
    }
    if (rc == 0)
        return 1;
    return (rc == SC_EFORMAT || rc == SC_ELIMIT) && err[0];
}

/* every truncation, every byte of the recording and of the labels flipped two ways */
static void test_hostile(void)
{
    int bad = 0;
    for (size_t n = 0; n < rec_len; n++)
        bad += !decodes_or_says_why(rec, n, labels, labels_len);
    unsigned char *c = malloc(rec_len);
    for (size_t i = 0; i < rec_len; i++) {
        for (int m = 0; m < 2; m++) {
            memcpy(c, rec, rec_len);
            c[i] ^= m ? 0xff : 0x41;
            bad += !decodes_or_says_why(c, rec_len, labels, labels_len);
        }
    }
    unsigned char *l = malloc(labels_len + 1);
    for (size_t i = 0; i < labels_len; i++) {
        memcpy(l, labels, labels_len);
        l[i] ^= 0x80;
        bad += !decodes_or_says_why(rec, rec_len, l, labels_len);
    }
    T_EQ_INT(bad, 0);
    free(c);
    free(l);
}

int main(void)
{
    load();
    T_RUN(test_kinds);
    T_RUN(test_one_profile);
    T_RUN(test_limits);
    T_RUN(test_hostile);
    free(seed);
    return t_done();
}
