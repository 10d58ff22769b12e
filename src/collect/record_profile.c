/* record_profile.c - a take: new locations symbolized once, the window's profile built. */
#include "collect/record_int.h"
#include "model/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where a thread's or process's user stack begins: a walk that ends anywhere else was cut
 * short (by code without frame pointers, nearly always). */
static const char *const roots[] = {
    "_start",
    "__libc_start_main",
    "__libc_start_main_impl", /* its name in libc's DWARF */
    "__libc_start_call_main",
    "start_thread",
    "clone",
    "clone3",
    "__clone",
    "__clone3",
    "__clone_internal",
    "thread_start",
    "_dl_start",
    "_dl_start_user",
    "__restore_rt",
    "runtime.goexit",
    "runtime.goexit.abi0",
    "runtime.rt0_go",
    "runtime.rt0_go.abi0",
    "runtime.mstart",
    "runtime.mstart.abi0",
    "runtime.sigtramp",
    "runtime.sigtramp.abi0",
    "runtime.sigreturn__sigaction",
    "runtime.sigreturn.abi0",
    "runtime.morestack",
    "runtime.morestack.abi0",
    "runtime.mcall",
    "runtime.clone",
    "runtime.clone.abi0",
    "runtime.systemstack_switch",
    "runtime.asmcgocall.abi0",
    "runtime.asmcgocall",
};

static int is_root(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++)
        if (strlen(roots[i]) == n && !memcmp(roots[i], s, n))
            return 1;
    return 0;
}

/* ---- symbolizing the window's new locations ---- */

struct symctx {
    struct sc_recorder *r;
    const uint32_t *ids; /* loc ids, in the order of the addresses resolved */
    int rc;
};

static void on_sym(void *ctx, uint32_t i, const struct sc_sym *sym)
{
    struct symctx *c = ctx;
    struct sc_recorder *r = c->r;
    if (c->rc)
        return;
    if (sc_grow_array(&r->syms, &r->scap, (uint64_t)r->nsyms + 1, sizeof *r->syms) ||
        sc_grow_array(&r->frames, &r->fcap, (uint64_t)r->nframes + sym->nframes,
                      sizeof *r->frames)) {
        c->rc = SC_ENOMEM;
        return;
    }
    struct rec_sym *s = &r->syms[r->nsyms];
    s->vaddr = sym->address;
    s->frame_start = r->nframes;
    s->nframes = sym->nframes;
    s->found = (uint8_t)sym->found;
    const struct sc_sym_frame *outer = &sym->frames[sym->nframes - 1];
    s->root = (uint8_t)is_root(outer->name, outer->name_len);
    for (uint32_t k = 0; k < sym->nframes; k++) {
        const struct sc_sym_frame *f = &sym->frames[k];
        int64_t nm = sc_strtab_intern(&r->symstr, f->name, f->name_len);
        int64_t sn = sc_strtab_intern(&r->symstr, f->system_name, f->system_name_len);
        int64_t fl = sc_strtab_intern(&r->symstr, f->file, f->file_len);
        if (nm < 0 || sn < 0 || fl < 0) {
            c->rc = SC_ENOMEM;
            return;
        }
        r->frames[r->nframes++] =
            (struct rec_frame){(uint32_t)nm, (uint32_t)sn, (uint32_t)fl, f->line};
    }
    r->locs[c->ids[i]].sym = ++r->nsyms;
}

static int cmp_loc(const void *a, const void *b, void *ctx)
{
    const struct rec_loc *locs = ctx;
    const struct rec_loc *x = &locs[*(const uint32_t *)a], *y = &locs[*(const uint32_t *)b];
    if (x->dso != y->dso)
        return x->dso < y->dso ? -1 : 1;
    return (x->addr > y->addr) - (x->addr < y->addr);
}

static int symbolize(struct sc_recorder *r)
{
    uint32_t n = 0;
    uint32_t *ids = malloc(((size_t)r->nstack_locs + 1) * sizeof *ids);
    if (!ids)
        return SC_ENOMEM;
    for (uint32_t i = 0; i < r->nstack_locs; i++) {
        struct rec_loc *l = &r->locs[r->stack_locs[i]];
        if (!l->sym && l->win_gen != r->gen) {
            l->win_gen = r->gen; /* listed once */
            l->win_loc = UINT32_MAX;
            ids[n++] = r->stack_locs[i];
        }
    }
    qsort_r(ids, n, sizeof *ids, cmp_loc, r->locs);
    uint64_t *addrs = malloc(((size_t)n + 1) * sizeof *addrs);
    int rc = addrs ? 0 : SC_ENOMEM;
    for (uint32_t i = 0; !rc && i < n;) {
        uint32_t j = i, dso = r->locs[ids[i]].dso;
        for (; j < n && r->locs[ids[j]].dso == dso; j++)
            addrs[j - i] = r->locs[ids[j]].addr;
        struct symctx c = {r, ids + i, 0};
        sc_symbolizer_resolve(r->sym, dso, addrs, j - i, on_sym, &c);
        rc = c.rc;
        i = j;
    }
    free(addrs);
    free(ids);
    return rc;
}

/* ---- the profile ---- */

struct build {
    struct sc_recorder *r;
    struct sc_profile *p;
    uint32_t *str_map;            /* symstr id -> window string id + 1 */
    struct sc_map64 fn_index;     /* (system name, file) window ids -> function index */
    struct sc_map64 map_index;    /* dso -> mapping index */
    struct sc_map64 marker_index; /* dso -> location index of its [truncated] frame */
    uint64_t *trunc_counts;       /* per dso in trunc_dsos */
    uint32_t *trunc_dsos, ntrunc;
    struct rec_trunc *unsym; /* samples with frames no symbol named, per file DSO */
    uint32_t nunsym, uncap, unsym_samples;
};

static int64_t win_str(struct build *b, uint32_t id)
{
    if (b->str_map[id])
        return b->str_map[id] - 1;
    struct sc_str s = b->r->symstr.v[id];
    int64_t k = sc_profile_intern(b->p, s.ptr, s.len);
    if (k >= 0)
        b->str_map[id] = (uint32_t)k + 1;
    return k;
}

static int64_t mapping_of(struct build *b, uint32_t dso, const char *build_id)
{
    int added;
    uint32_t *slot = sc_map64_upsert(&b->map_index, dso, b->p->nmappings, &added);
    if (!slot)
        return SC_ENOMEM;
    if (!added)
        return *slot;
    struct sc_profile *p = b->p;
    if (sc_grow_array(&p->mappings, &p->mappings_cap, (uint64_t)p->nmappings + 1,
                      sizeof *p->mappings))
        return SC_ENOMEM;
    struct sc_dso_info di;
    sc_symbolizer_info(b->r->sym, dso, &di);
    int64_t fn = sc_profile_intern(p, di.path, strlen(di.path));
    int64_t bid = sc_profile_intern(p, build_id ? build_id : di.build_id,
                                    strlen(build_id ? build_id : di.build_id));
    if (fn < 0 || bid < 0)
        return SC_ENOMEM;
    struct sc_mapping *m = &p->mappings[p->nmappings];
    memset(m, 0, sizeof *m);
    m->id = p->nmappings + 1;
    /* locations of every process share it: addresses are link-time addresses */
    m->limit = UINT64_MAX;
    m->filename = (uint32_t)fn;
    m->build_id = (uint32_t)bid;
    m->has_functions = 1;
    m->has_filenames = m->has_line_numbers = di.kind == SC_DSO_FILE;
    m->has_inline_frames = di.kind == SC_DSO_FILE;
    return p->nmappings++;
}

/* The function (system_name, file): its name follows from its system name. */
static int64_t function_of(struct build *b, uint32_t name, uint32_t system_name, uint32_t file)
{
    int added;
    uint64_t key = (uint64_t)system_name << 32 | file;
    uint32_t *slot = sc_map64_upsert(&b->fn_index, key, b->p->nfunctions, &added);
    if (!slot)
        return SC_ENOMEM;
    if (!added)
        return *slot;
    int64_t fn = sc_profile_add_function(b->p, name, file);
    if (fn >= 0)
        b->p->functions[fn].system_name = system_name;
    return fn;
}

/* A location with frames (innermost first) in mapping + 1 mapping. */
static int64_t add_location(struct build *b, uint64_t address, uint32_t mapping,
                            const struct rec_frame *fr, uint32_t n, const char *name)
{
    struct sc_profile *p = b->p;
    if (sc_grow_array(&p->locations, &p->locations_cap, (uint64_t)p->nlocations + 1,
                      sizeof *p->locations) ||
        sc_grow_array(&p->lines, &p->lines_cap, (uint64_t)p->nlines + (n ? n : 1),
                      sizeof *p->lines))
        return SC_ENOMEM;
    uint32_t start = p->nlines;
    for (uint32_t k = 0; k < (n ? n : 1); k++) {
        int64_t nm = name ? sc_profile_intern(p, name, strlen(name)) : win_str(b, fr[k].name);
        int64_t sn = name ? nm : win_str(b, fr[k].system_name);
        int64_t fl = name ? 0 : win_str(b, fr[k].file);
        int64_t fn = nm < 0 || sn < 0 || fl < 0
                         ? SC_ENOMEM
                         : function_of(b, (uint32_t)nm, (uint32_t)sn, (uint32_t)fl);
        if (fn < 0)
            return SC_ENOMEM;
        p->lines[p->nlines++] = (struct sc_line){(uint32_t)fn + 1, name ? 0 : fr[k].line, 0};
    }
    struct sc_location *l = &p->locations[p->nlocations];
    memset(l, 0, sizeof *l);
    l->id = p->nlocations + 1;
    l->address = address;
    l->mapping = mapping;
    l->line_start = start;
    l->nlines = p->nlines - start;
    return p->nlocations++;
}

static int64_t window_loc(struct build *b, uint32_t id)
{
    struct rec_loc *l = &b->r->locs[id];
    if (l->win_gen == b->r->gen && l->win_loc != UINT32_MAX)
        return l->win_loc;
    const struct rec_sym *s = &b->r->syms[l->sym - 1];
    int64_t m = mapping_of(b, l->dso, NULL);
    if (m < 0)
        return m;
    int64_t k =
        add_location(b, s->vaddr, (uint32_t)m + 1, b->r->frames + s->frame_start, s->nframes, NULL);
    if (k >= 0) {
        l->win_gen = b->r->gen;
        l->win_loc = (uint32_t)k;
    }
    return k;
}

/* The DSO a truncated stack is blamed on: that of its outermost user frame in a known
 * DSO; UINT32_MAX when the stack is whole (the unwind tables said its outermost frame is
 * one, or that frame is a thread's or process's entry by its name) or has no user part. */
static uint32_t truncated_at(struct sc_recorder *r, const struct rec_stack *st)
{
    if (st->n <= st->nkernel || st->whole)
        return UINT32_MAX;
    const uint32_t *ls = r->stack_locs + st->start;
    const struct rec_loc *outer = &r->locs[ls[st->n - 1]];
    if (r->syms[outer->sym - 1].root)
        return UINT32_MAX;
    for (uint32_t k = st->n; k > st->nkernel; k--)
        if (r->locs[ls[k - 1]].dso != SC_DSO_ID_UNKNOWN)
            return r->locs[ls[k - 1]].dso;
    return SC_DSO_ID_UNKNOWN;
}

static int64_t marker_of(struct build *b, uint32_t dso)
{
    int added;
    uint32_t *slot = sc_map64_upsert(&b->marker_index, dso, 0, &added);
    if (!slot)
        return SC_ENOMEM;
    if (!added)
        return *slot;
    struct sc_dso_info di;
    sc_symbolizer_info(b->r->sym, dso, &di);
    char name[300];
    snprintf(name, sizeof name, "[truncated: %s]", di.name);
    int64_t m = mapping_of(b, dso, NULL);
    int64_t k = m < 0 ? m : add_location(b, 0, (uint32_t)m + 1, NULL, 0, name);
    if (k < 0)
        return k;
    /* the slot may have moved while the mapping and location were added */
    slot = sc_map64_get(&b->marker_index, dso);
    *slot = (uint32_t)k;
    b->trunc_dsos[b->ntrunc++] = dso;
    return k;
}

static void count_trunc(struct sc_recorder *r, uint32_t dso)
{
    int added;
    uint32_t *slot = sc_map64_upsert(&r->trunc_index, dso, r->ntrunc, &added);
    if (!slot)
        return;
    if (added) {
        if (sc_grow_array(&r->trunc, &r->trcap, (uint64_t)r->ntrunc + 1, sizeof *r->trunc)) {
            *slot = UINT32_MAX - 1;
            return;
        }
        r->trunc[r->ntrunc++] = (struct rec_trunc){dso, 0};
    }
    if (*slot < r->ntrunc)
        r->trunc[*slot].count++;
    r->st.truncated++;
}

/* Adds add to dso's count in v (a short list: the binaries a window could not name). */
static int count_dso(struct rec_trunc **v, uint32_t *n, uint32_t *cap, uint32_t dso, uint64_t add)
{
    for (uint32_t i = 0; i < *n; i++)
        if ((*v)[i].dso == dso) {
            (*v)[i].count += add;
            return 0;
        }
    if (sc_grow_array(v, cap, (uint64_t)*n + 1, sizeof **v))
        return SC_ENOMEM;
    (*v)[(*n)++] = (struct rec_trunc){dso, add};
    return 0;
}

/* The samples of each binary (file DSO) that have frames in it no symbol named: the
 * window's (for its comments) and the recording's (sc_recorder_unsymbolized). A sample
 * counts once per binary. */
static int count_unsymbolized(struct build *b)
{
    struct sc_recorder *r = b->r;
    uint32_t *weight = calloc((size_t)r->nstacks + 1, sizeof *weight);
    if (!weight)
        return SC_ENOMEM;
    for (uint32_t i = 0; i < r->nsamples; i++)
        weight[r->samples[i].stack]++;
    int rc = 0;
    for (uint32_t i = 0; !rc && i < r->nstacks; i++) {
        const struct rec_stack *st = &r->stacks[i];
        uint32_t seen[8], nseen = 0, any = 0;
        for (uint32_t k = 0; !rc && weight[i] && k < st->n; k++) {
            const struct rec_loc *l = &r->locs[r->stack_locs[st->start + k]];
            if (l->dso <= SC_DSO_ID_VDSO || r->syms[l->sym - 1].found)
                continue;
            uint32_t j = 0;
            while (j < nseen && seen[j] != l->dso)
                j++;
            if (j < nseen)
                continue;
            struct sc_dso_info di;
            sc_symbolizer_info(r->sym, l->dso, &di);
            if (di.kind != SC_DSO_FILE)
                continue;
            if (nseen < 8)
                seen[nseen++] = l->dso;
            any = 1;
            rc = count_dso(&b->unsym, &b->nunsym, &b->uncap, l->dso, weight[i]);
            if (!rc)
                rc = count_dso(&r->unsym, &r->nunsym, &r->uncap, l->dso, weight[i]);
        }
        b->unsym_samples += any ? weight[i] : 0;
    }
    free(weight);
    return rc;
}

static int add_comment(struct sc_profile *p, const char *text)
{
    int64_t s = sc_profile_intern(p, text, strlen(text));
    if (s < 0)
        return SC_ENOMEM;
    /* one at a time: a recording has a handful (no capacity kept in the profile) */
    uint32_t *c = realloc(p->comments, (p->ncomments + 1) * sizeof *c);
    if (!c)
        return SC_ENOMEM;
    p->comments = c;
    c[p->ncomments++] = (uint32_t)s;
    return 0;
}

static int comments(struct build *b, uint32_t ntrunc_samples)
{
    struct sc_recorder *r = b->r;
    char line[512], target[32], unwind[64];
    if (r->o.pid > 0)
        snprintf(target, sizeof target, "-p %d", (int)r->o.pid);
    else
        snprintf(target, sizeof target, "-a");
    if (r->o.unwind == SC_RECORD_UNWIND_FP)
        snprintf(unwind, sizeof unwind, "--unwind=fp");
    else
        snprintf(unwind, sizeof unwind, "--unwind=%s --stack-size %u",
                 r->o.unwind == SC_RECORD_UNWIND_CFI ? "cfi" : "auto", r->o.stack_bytes);
    char off[64] = "";
    if (r->o.off_cpu)
        snprintf(off, sizeof off, " --off-cpu --off-cpu-min %lldus",
                 (long long)(r->offcpu_min / 1000));
    snprintf(line, sizeof line, "scorch record %s -F %u %s%s (cpu-clock%s)%s", target,
             r->o.frequency, unwind, off, r->o.off_cpu ? ", sched:sched_switch" : "",
             r->user_only ? ", user frames only" : "");
    int rc = add_comment(b->p, line);
    if (!rc && r->win_switch_lost) {
        snprintf(line, sizeof line,
                 "lost switch samples: %llu (the switch rings were full; those spans off CPU "
                 "are missing)",
                 (unsigned long long)r->win_switch_lost);
        rc = add_comment(b->p, line);
    }
    if (!rc && (r->win_short || r->win_dropped)) {
        snprintf(line, sizeof line,
                 "off-CPU spans not in the profile: %llu under the minimum (%.3f ms in all), "
                 "%llu stacks not kept (table full or records lost)",
                 (unsigned long long)r->win_short, (double)r->win_short_ns / 1e6,
                 (unsigned long long)r->win_dropped);
        rc = add_comment(b->p, line);
    }
    if (!rc && r->win_lost) {
        snprintf(line, sizeof line, "lost samples: %llu (the ring buffers were full)",
                 (unsigned long long)r->win_lost);
        rc = add_comment(b->p, line);
    }
    if (!rc && ntrunc_samples) {
        snprintf(line, sizeof line,
                 "truncated stacks: %u of %u samples (not walked to a thread's entry); by DSO:",
                 ntrunc_samples, r->nsamples);
        rc = add_comment(b->p, line);
    }
    for (uint32_t i = 0; !rc && i < b->ntrunc; i++) {
        struct sc_dso_info di;
        sc_symbolizer_info(r->sym, b->trunc_dsos[i], &di);
        snprintf(line, sizeof line, "  %s: %llu", di.path, (unsigned long long)b->trunc_counts[i]);
        rc = add_comment(b->p, line);
    }
    if (!rc && b->unsym_samples) {
        snprintf(line, sizeof line,
                 "unsymbolized frames in %u of %u samples; by binary:", b->unsym_samples,
                 r->nsamples);
        rc = add_comment(b->p, line);
    }
    for (uint32_t i = 0; !rc && i < b->nunsym; i++) {
        struct sc_dso_info di;
        sc_symbolizer_info(r->sym, b->unsym[i].dso, &di);
        snprintf(line, sizeof line, "  %s: %llu%s%s%s", di.path,
                 (unsigned long long)b->unsym[i].count, *di.symbols ? " (" : "", di.symbols,
                 *di.symbols ? ")" : "");
        rc = add_comment(b->p, line);
    }
    return rc;
}

static int build_samples(struct build *b)
{
    struct sc_recorder *r = b->r;
    struct sc_profile *p = b->p;
    int64_t kpid = sc_profile_intern(p, "pid", 3), ktid = sc_profile_intern(p, "tid", 3);
    int64_t kcomm = sc_profile_intern(p, "comm", 4);
    if (kpid < 0 || ktid < 0 || kcomm < 0)
        return SC_ENOMEM;
    /* the extra labels of every sample */
    const struct sc_labels *xl = r->o.sample_labels;
    uint32_t nx = xl ? xl->n : 0;
    uint32_t xk[64], xv[64];
    if (nx > 64)
        nx = 64;
    for (uint32_t i = 0; i < nx; i++) {
        int64_t k = sc_profile_intern(p, xl->v[i].name.ptr, xl->v[i].name.len);
        int64_t v = sc_profile_intern(p, xl->v[i].value.ptr, xl->v[i].value.len);
        if (k < 0 || v < 0)
            return SC_ENOMEM;
        xk[i] = (uint32_t)k;
        xv[i] = (uint32_t)v;
    }
    /* per stack: its window locations (and marker), computed on first use */
    uint32_t *st_trunc = malloc(((size_t)r->nstacks + 1) * sizeof *st_trunc);
    int64_t *st_marker = malloc(((size_t)r->nstacks + 1) * sizeof *st_marker);
    uint32_t *locs = malloc(((size_t)r->nstack_locs + r->nstacks + 1) * sizeof *locs);
    uint32_t *loc_at = malloc(((size_t)r->nstacks + 1) * sizeof *loc_at);
    int rc = st_trunc && st_marker && locs && loc_at ? 0 : SC_ENOMEM;
    uint32_t nl = 0, ntrunc_samples = 0;
    for (uint32_t i = 0; !rc && i < r->nstacks; i++) {
        const struct rec_stack *st = &r->stacks[i];
        loc_at[i] = nl;
        for (uint32_t k = 0; !rc && k < st->n; k++) {
            int64_t w = window_loc(b, r->stack_locs[st->start + k]);
            if (w < 0)
                rc = (int)w;
            else
                locs[nl++] = (uint32_t)w;
        }
        st_trunc[i] = truncated_at(r, st);
        st_marker[i] = -1;
        if (!rc && st_trunc[i] != UINT32_MAX) {
            st_marker[i] = marker_of(b, st_trunc[i]);
            if (st_marker[i] < 0)
                rc = (int)st_marker[i];
            else
                locs[nl++] = (uint32_t)st_marker[i];
        }
    }
    for (uint32_t i = 0; !rc && i < r->nsamples; i++) {
        const struct rec_sample *s = &r->samples[i];
        const struct rec_stack *st = &r->stacks[s->stack];
        uint32_t n = st->n + (st_marker[s->stack] >= 0);
        if (st_marker[s->stack] >= 0) {
            ntrunc_samples++;
            count_trunc(r, st_trunc[s->stack]);
            for (uint32_t k = 0; k < b->ntrunc; k++)
                b->trunc_counts[k] += b->trunc_dsos[k] == st_trunc[s->stack];
        }
        /* samples, cpu[, offcpu, wall]: see record.h */
        int64_t ns = (int64_t)s->period;
        int64_t v[4] = {s->kind == REC_ONCPU, s->kind == REC_ONCPU ? ns : 0,
                        s->kind == REC_BLOCKED ? ns : 0, ns};
        int64_t t = s->time ? s->time + r->mono_to_real : 0;
        if (sc_profile_add_sample(p, locs + loc_at[s->stack], n, v, t) < 0 ||
            sc_profile_add_label(p, (uint32_t)kpid, s->s_pid, 0, 0) ||
            sc_profile_add_label(p, (uint32_t)ktid, s->s_tid, 0, 0) ||
            sc_profile_add_label(p, (uint32_t)kcomm, s->s_comm, 0, 0))
            rc = SC_ENOMEM;
        for (uint32_t k = 0; !rc && k < nx; k++)
            if (sc_profile_add_label(p, xk[k], xv[k], 0, 0))
                rc = SC_ENOMEM;
    }
    if (!rc)
        rc = count_unsymbolized(b);
    if (!rc)
        rc = comments(b, ntrunc_samples);
    free(st_trunc);
    free(st_marker);
    free(locs);
    free(loc_at);
    return rc;
}

int sc_rec_take(struct sc_recorder *r, struct sc_profile **out, char *err)
{
    *out = NULL;
    int rc = r->o.off_cpu ? sc_rec_offcpu_flush(r) : 0;
    if (!rc)
        rc = symbolize(r);
    struct build b;
    memset(&b, 0, sizeof b);
    b.r = r;
    b.p = r->win;
    b.str_map = calloc((size_t)r->symstr.n + 1, sizeof *b.str_map);
    b.trunc_counts = calloc((size_t)r->nstacks + 1, sizeof *b.trunc_counts);
    b.trunc_dsos = calloc((size_t)r->nstacks + 1, sizeof *b.trunc_dsos);
    if (!rc && (!b.str_map || !b.trunc_counts || !b.trunc_dsos))
        rc = SC_ENOMEM;
    /* the program (of -p; else the kernel) as mapping 1: pprof names the profile after it */
    uint32_t *ps = r->o.pid > 0 ? sc_map64_get(&r->proc_index, (uint32_t)r->o.pid) : NULL;
    uint32_t first = UINT32_MAX;
    if (ps && *ps < r->nprocs && r->procs[*ps].nmaps)
        first = r->procs[*ps].maps[0].dso;
    else if (r->o.pid <= 0 && r->nsamples)
        first = SC_DSO_ID_KERNEL;
    if (!rc && first != UINT32_MAX && mapping_of(&b, first, NULL) < 0)
        rc = SC_ENOMEM;
    if (!rc)
        rc = build_samples(&b);
    free(b.str_map);
    free(b.trunc_counts);
    free(b.trunc_dsos);
    free(b.unsym);
    sc_map64_release(&b.fn_index);
    sc_map64_release(&b.map_index);
    sc_map64_release(&b.marker_index);
    if (rc)
        return sc_errf(err, rc, "building the profile: %s", sc_strerror(rc));
    struct sc_profile *p = r->win;
    r->win = NULL;
    p->period = r->o.frequency ? 1000000000LL / r->o.frequency : 0;
    if (sc_profile_validate(p, err)) {
        sc_profile_free(p);
        return SC_EINTERNAL;
    }
    *out = p;
    return 0;
}
