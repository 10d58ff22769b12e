/* cmd_diff_folded.c - `scorch diff-folded`: pair two profiles' stacks, as difffolded.pl. */
#include "cli/cli.h"
#include "formats/folded.h"
#include "formats/input.h"
#include "model/error.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: scorch diff-folded [-n] [-s] A B\n"
    "\n"
    "Prints \"stack count_a count_b\" for every stack in either input, the input of a\n"
    "differential flame graph (`scorch flamegraph` colours what grew red and what shrank\n"
    "blue). A drop-in for FlameGraph's difffolded.pl; A and B may be folded stacks or any\n"
    "other format scorch reads (any mix). Lines come out sorted by stack.\n"
    "\n"
    "options:\n"
    "  -n   normalize: scale A's counts so both totals are equal\n"
    "  -s   strip hex numbers (addresses) so that they do not split stacks\n"
    "  -o FILE  write to FILE instead of stdout\n"
    "  -h   show this help\n";

/* Loads a profile of any format and renders its default sample type as folded lines. */
static int load_folded(const char *path, struct sc_buf *out, char *err)
{
    struct sc_profile *p;
    int rc = sc_load(path, NULL, &p, err);
    if (rc)
        return rc;
    int vi = sc_profile_sample_index(p, NULL, err);
    rc = vi < 0 ? vi : sc_folded_write(p, vi, out, err);
    sc_profile_free(p);
    if (rc)
        return sc_errwrap(err, rc, "cannot read '%s'", path);
    return 0;
}

static int is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Replaces each 0x<hex digits> with "0x..." (difffolded.pl -s); out has room for 2n. */
static size_t strip_hex(const char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (i + 2 < n && s[i] == '0' && s[i + 1] == 'x' && is_hex(s[i + 2])) {
            i += 3;
            while (i < n && is_hex(s[i]))
                i++;
            /* NOLINTNEXTLINE(bugprone-not-null-terminated-result): out is counted by o */
            memcpy(out + o, "0x...", 5);
            o += 5;
        } else {
            out[o++] = s[i++];
        }
    }
    return o;
}

struct stackset {
    struct sc_arena arena;
    struct sc_strtab names;
    int64_t *count[2];
    uint32_t cap;
};

static int add(struct stackset *ss, int side, const char *s, size_t n, int64_t c)
{
    int64_t i = sc_strtab_intern(&ss->names, s, n);
    if (i < 0)
        return (int)i;
    const struct sc_grow_part cols[] = {SC_GROW_PART(ss->count[0]), SC_GROW_PART(ss->count[1])};
    if (sc_grow_arrays(&ss->cap, (uint64_t)i + 1, 0, cols, 2))
        return SC_ENOMEM;
    ss->count[side][i] += c;
    return 0;
}

static int cmp_names(const void *a, const void *b, void *arg)
{
    const struct sc_str *v = arg;
    const struct sc_str *x = &v[*(const uint32_t *)a], *y = &v[*(const uint32_t *)b];
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->ptr, y->ptr, n);
    if (c)
        return c;
    return (x->len > y->len) - (x->len < y->len);
}

int cmd_diff_folded(int argc, char **argv)
{
    int normalize = 0, striphex = 0, c;
    const char *outpath = NULL;
    static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    optind = 1;
    while ((c = getopt_long(argc, argv, "nsho:", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            normalize = 1;
            break;
        case 's':
            striphex = 1;
            break;
        case 'o':
            outpath = optarg;
            break;
        case 'h':
            return cli_help(usage);
        default:
            return cli_usage("diff-folded", "bad option");
        }
    }
    if (argc - optind != 2)
        return cli_usage("diff-folded", "needs two inputs, A and B");
    char err[SC_ERR_LEN] = "";
    struct stackset ss;
    memset(&ss, 0, sizeof ss);
    sc_arena_init(&ss.arena);
    ss.names.arena = &ss.arena;
    int64_t total[2] = {0, 0};
    int rc = 0;
    char *tmp = NULL;
    uint32_t tmpcap = 0;
    for (int side = 0; side < 2 && rc == 0; side++) {
        struct sc_buf f = SC_BUF_INIT;
        rc = load_folded(argv[optind + side], &f, err);
        for (size_t off = 0; rc == 0 && off < f.len;) {
            char *nl = memchr(f.data + off, '\n', f.len - off);
            size_t end = nl ? (size_t)(nl - f.data) : f.len;
            char *sp = f.data + end;
            while (sp > f.data + off && sp[-1] != ' ')
                sp--;
            size_t slen = (size_t)(sp - (f.data + off)) - 1;
            int64_t cnt = strtoll(sp, NULL, 10);
            const char *stack = f.data + off;
            if (striphex) {
                if ((rc = sc_grow_array(&tmp, &tmpcap, (uint64_t)slen * 3 + 8, 1)))
                    break;
                slen = strip_hex(stack, slen, tmp);
                stack = tmp;
            }
            rc = add(&ss, side, stack, slen, cnt);
            total[side] += cnt;
            off = end + 1;
        }
        sc_buf_release(&f);
    }
    free(tmp);
    struct sc_buf out = SC_BUF_INIT;
    uint32_t n = ss.names.n;
    uint32_t *order = rc ? NULL : malloc((n ? n : 1) * sizeof *order);
    if (!rc && !order)
        rc = SC_ENOMEM;
    if (rc == 0) {
        for (uint32_t i = 0; i < n; i++)
            order[i] = i;
        qsort_r(order, n, sizeof *order, cmp_names, ss.names.v);
        for (uint32_t k = 0; k < n; k++) {
            uint32_t i = order[k];
            int64_t a = ss.count[0][i], b = ss.count[1][i];
            if (normalize && total[0] != total[1] && total[0])
                a = (int64_t)((double)a * (double)total[1] / (double)total[0]);
            sc_buf_append(&out, ss.names.v[i].ptr, ss.names.v[i].len);
            sc_buf_putc(&out, ' ');
            sc_buf_put_i64(&out, a);
            sc_buf_putc(&out, ' ');
            sc_buf_put_i64(&out, b);
            sc_buf_putc(&out, '\n');
        }
    }
    free(order);
    free(ss.count[0]);
    free(ss.count[1]);
    sc_strtab_release(&ss.names);
    sc_arena_release(&ss.arena);
    if (rc) {
        sc_buf_release(&out);
        return cli_error("%s", err[0] ? err : sc_strerror(rc));
    }
    rc = cli_write(outpath, &out);
    sc_buf_release(&out);
    return rc;
}
