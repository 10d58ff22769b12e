/* test_unwind.c - unwind tables from CFI: rows of known functions in programs built here
 * without frame pointers (a frameless leaf, deep recursion, a shared library, the PLT), every
 * row against readelf's reading of the same CFI (those programs, libc, this binary),
 * hand-made CFI for the rules compilers rarely emit and for hostile input; the unwinder on
 * this test's own stack up to main and _start; the cache of a recording. */
#include "t.h"

#include "collect/symbols.h"
#include "collect/symtab.h"
#include "collect/unwind.h"
#include "model/error.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];
static int built; /* the programs below compiled */

/* ---- programs built here ---- */

static const char prog_c[] =
    "volatile unsigned long sink;\n"
    "int lib_work(int n);\n"
    "unsigned long with_fp(int n);\n"
    "__attribute__((noinline)) unsigned long leaf_frameless(unsigned long x)\n"
    "{\n"
    "    for (int i = 0; i < 100; i++)\n"
    "        x = x * 31 + (unsigned long)i;\n"
    "    return x;\n"
    "}\n"
    "/* rbp is an ordinary register here: this function saves it */\n"
    "__attribute__((noinline)) unsigned long saves_rbp(unsigned long x)\n"
    "{\n"
    "    __asm__ volatile(\"\" ::: \"rbp\", \"rbx\");\n"
    "    return leaf_frameless(x) + x;\n"
    "}\n"
    "__attribute__((noinline)) unsigned long recurse(int n, unsigned long x)\n"
    "{\n"
    "    volatile char pad[32];\n"
    "    pad[0] = (char)n;\n"
    "    if (n <= 0)\n"
    "        return leaf_frameless(x);\n"
    "    return recurse(n - 1, x + (unsigned long)pad[0]) * 3 + 1;\n"
    "}\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "    (void)argv;\n"
    "    sink = recurse(argc + 100, 1) + saves_rbp((unsigned long)argc) + with_fp(argc) +\n"
    "           (unsigned long)lib_work(argc);\n"
    "    return 0;\n"
    "}\n";

static const char fp_c[] = "unsigned long leaf_frameless(unsigned long x);\n"
                           "__attribute__((noinline)) unsigned long with_fp(int n)\n"
                           "{\n"
                           "    volatile char pad[64];\n"
                           "    pad[n & 63] = 1;\n"
                           "    return pad[3] + leaf_frameless((unsigned long)n);\n"
                           "}\n";

static const char lib_c[] = "__attribute__((noinline)) int lib_work(int n)\n"
                            "{\n"
                            "    volatile int a[16];\n"
                            "    for (int i = 0; i < 16; i++)\n"
                            "        a[i] = n + i;\n"
                            "    return a[n & 15];\n"
                            "}\n";

static int write_file(const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

static int run(const char *fmt, const char *a)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, fmt, a, a, a, a, a, a);
    return system(cmd);
}

static void build_programs(void)
{
    snprintf(dir, sizeof dir, "/tmp/scorch-unwind-XXXXXX");
    if (!mkdtemp(dir))
        return;
    if (write_file("prog.c", prog_c) || write_file("fp.c", fp_c) || write_file("lib.c", lib_c))
        return;
    if (run("cc -O2 -g -fomit-frame-pointer -shared -fPIC -o %s/libt.so %s/lib.c", dir) ||
        run("cc -O2 -g -fno-omit-frame-pointer -c -o %s/fp.o %s/fp.c", dir) ||
        run("cc -O2 -g -fomit-frame-pointer -o %s/prog %s/prog.c %s/fp.o -L%s -lt "
            "-Wl,-rpath,%s",
            dir))
        return;
    built = 1;
}

/* ---- ELF facts the checks need, read with libelf ---- */

/* The file offset of vaddr through the executable PT_LOAD segments; 0 when in none. */
static uint64_t file_off(Elf *e, uint64_t vaddr)
{
    size_t n = 0;
    if (elf_getphdrnum(e, &n))
        return 0;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
            vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz)
            return vaddr - ph.p_vaddr + ph.p_offset;
    }
    return 0;
}

/* A function's file offset and size in path (.symtab), or a section's (name starting with
 * '.'). 0 when found. */
static int locate(const char *path, const char *name, uint64_t *off, uint64_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    int found = 0;
    size_t shstr = 0;
    elf_getshdrstrndx(e, &shstr);
    Elf_Scn *scn = NULL;
    while (e && !found && (scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        const char *sn = elf_strptr(e, shstr, sh.sh_name);
        if (name[0] == '.' && sn && !strcmp(sn, name)) {
            *off = file_off(e, sh.sh_addr);
            *size = sh.sh_size;
            found = 1;
        } else if (name[0] != '.' && sh.sh_type == SHT_SYMTAB) {
            Elf_Data *d = elf_getdata(scn, NULL);
            for (size_t i = 0; d && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
                GElf_Sym s;
                const char *nm;
                if (gelf_getsym(d, (int)i, &s) && GELF_ST_TYPE(s.st_info) == STT_FUNC &&
                    (nm = elf_strptr(e, sh.sh_link, s.st_name)) && !strcmp(nm, name)) {
                    *off = file_off(e, s.st_value);
                    *size = s.st_size;
                    found = 1;
                    break;
                }
            }
        }
    }
    if (e)
        elf_end(e);
    close(fd);
    return found ? 0 : -1;
}

static struct sc_unwind_table *load(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct sc_unwind_table *t = NULL;
    char err[SC_ERR_LEN] = "";
    if (fd >= 0 && sc_unwind_load(fd, NULL, 0, NULL, &t, err))
        fprintf(stderr, "%s: %s\n", path, err);
    if (fd >= 0)
        close(fd);
    return t;
}

/* ---- readelf's reading of the same CFI ---- */

struct cie_row {
    unsigned long off;
    char cfa[32], rbp[32], ra[32];
};

/* Whether the table's rule at offset off is what readelf -wF says for it: CFA "rsp+N" or
 * "rbp+N" (else an expression or another register: a rule the table marks as such), the
 * frame pointer ("u" unset, "s" same value, "c-N" saved, else not modelled), the return
 * address ("c-8", or "u": the outermost frame). */
static int same_as_readelf(const struct sc_unwind_table *t, uint64_t off, const char *cfa,
                           const char *rbp, const char *ra)
{
    struct sc_unwind_rule u;
    if (!sc_unwind_find(t, off, &u))
        return 0;
    if (!strcmp(ra, "u"))
        return u.cfa == SC_UW_CFA_END;
    char reg[8];
    int n, k;
    if (sscanf(cfa, "%3s+%d", reg, &n) == 2 && (!strcmp(reg, "rsp") || !strcmp(reg, "rbp"))) {
        if (u.cfa != (reg[1] == 's' ? SC_UW_CFA_SP : SC_UW_CFA_FP) || u.cfa_off != n)
            return 0;
    } else if (u.cfa != SC_UW_CFA_PLT && u.cfa != SC_UW_CFA_DEREF_FP &&
               u.cfa != SC_UW_CFA_UNKNOWN) {
        return 0;
    } else {
        return 1; /* the rest of an expression's row is not compared */
    }
    if (u.ra != SC_UW_RA_AT_CFA || sscanf(ra, "c%d", &k) != 1 || k != u.ra_off)
        return 0;
    if (!rbp[0] || !strcmp(rbp, "u") || !strcmp(rbp, "s"))
        return u.fp == SC_UW_FP_SAME;
    if (sscanf(rbp, "c%d", &k) == 1)
        return u.fp == SC_UW_FP_AT_CFA && u.fp_off == k;
    return u.fp == SC_UW_FP_UNKNOWN;
}

/* Splits line at blanks into at most max tokens; their count. */
static int split(char *line, char **tok, int max)
{
    int n = 0;
    for (char *sv = NULL, *t = strtok_r(line, " \t\n", &sv); t && n < max;
         t = strtok_r(NULL, " \t\n", &sv))
        tok[n++] = t;
    return n;
}

struct fde_seen {
    unsigned long cie, lo, hi;
    int rows, open;
};

/* An FDE without instructions keeps its CIE's first row (readelf prints none for it). */
static void check_rowless(const struct sc_unwind_table *t, Elf *e, const struct fde_seen *f,
                          const struct cie_row *cies, uint32_t ncies, const char *path,
                          long *compared, long *bad)
{
    if (!f->open || f->rows || !file_off(e, f->lo))
        return;
    for (uint32_t i = 0; i < ncies; i++)
        if (cies[i].off == f->cie) {
            ++*compared;
            if (!same_as_readelf(t, file_off(e, f->lo), cies[i].cfa, cies[i].rbp, cies[i].ra) &&
                ++*bad <= 5)
                fprintf(stderr, "%s: %#lx (FDE without rows) differs from readelf\n", path, f->lo);
        }
}

/* Compares every row readelf -wF prints for path's .eh_frame with the table built from it;
 * the number compared (mismatches in *bad, the first few printed), -1 without readelf. */
static long readelf_check(const char *path, long *bad)
{
    *bad = 0;
    struct sc_unwind_table *t = load(path);
    if (!t)
        return 0;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "readelf -wF '%s' 2>/dev/null", path);
    FILE *p = popen(cmd, "r");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
    static struct cie_row cies[64];
    uint32_t ncies = 0;
    char line[4096], cols[32][16];
    int ncols = 0, in_cie = 0;
    unsigned long cie = 0;
    struct fde_seen f = {0, 0, 0, 0, 0};
    long compared = 0;
    while (p && e && fgets(line, sizeof line, p)) {
        unsigned long a, b, c;
        char *tok[34];
        if (strstr(line, "Contents of the .debug_frame"))
            break;
        if (strstr(line, " CIE") && sscanf(line, "%lx %lx %lx", &a, &b, &c) == 3) {
            check_rowless(t, e, &f, cies, ncies, path, &compared, bad);
            f.open = 0;
            in_cie = 1;
            cie = a;
            ncols = 0;
            continue;
        }
        struct fde_seen next = {0, 0, 0, 0, 1};
        if (strstr(line, " FDE ") && sscanf(line, "%lx %lx %lx FDE cie=%lx pc=%lx..%lx", &a, &b, &c,
                                            &next.cie, &next.lo, &next.hi) == 6) {
            check_rowless(t, e, &f, cies, ncies, path, &compared, bad);
            f = next;
            in_cie = 0;
            ncols = 0;
            continue;
        }
        int n = split(line, tok, 34);
        if (n > 1 && !strcmp(tok[0], "LOC")) {
            ncols = n - 1 < 32 ? n - 1 : 32;
            for (int i = 0; i < ncols; i++)
                snprintf(cols[i], sizeof cols[i], "%s", tok[i + 1]);
            continue;
        }
        if (n != ncols + 1 || ncols == 0 || strlen(tok[0]) != 16)
            continue;
        const char *cfa = "", *rbp = "", *ra = "u";
        for (int i = 0; i < ncols; i++) {
            if (!strcmp(cols[i], "CFA"))
                cfa = tok[i + 1];
            else if (!strcmp(cols[i], "rbp"))
                rbp = tok[i + 1];
            else if (!strcmp(cols[i], "ra"))
                ra = tok[i + 1];
        }
        unsigned long loc = strtoul(tok[0], NULL, 16);
        if (in_cie) {
            if (ncies < 64) {
                struct cie_row *r = &cies[ncies++];
                r->off = cie;
                snprintf(r->cfa, sizeof r->cfa, "%s", cfa);
                snprintf(r->rbp, sizeof r->rbp, "%s", rbp);
                snprintf(r->ra, sizeof r->ra, "%s", ra);
            }
            in_cie = 0; /* its first row is the state every FDE starts from */
            continue;
        }
        f.rows++;
        if (loc < f.lo || loc >= f.hi || !file_off(e, loc))
            continue; /* readelf prints a row at the FDE's end too */
        compared++;
        if (!same_as_readelf(t, file_off(e, loc), cfa, rbp, ra) && ++*bad <= 5)
            fprintf(stderr, "%s: %#lx differs from readelf (cfa %s rbp %s ra %s)\n", path, loc, cfa,
                    rbp, ra);
    }
    check_rowless(t, e, &f, cies, ncies, path, &compared, bad);
    int rc = p ? pclose(p) : -1;
    if (e)
        elf_end(e);
    if (fd >= 0)
        close(fd);
    sc_unwind_table_free(t);
    /* (readelf fails when it follows a debug link to a file whose .eh_frame is NOBITS, after
     * printing the file's own) */
    return rc != 0 && compared == 0 ? -1 : compared;
}

/* ---- the programs' tables ---- */

static void path_of(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

/* Every rule of [off, off + size): cb says whether each is as expected; returns how many
 * rules there are, and counts in *matching those cb accepts. */
static int rules_in(const struct sc_unwind_table *t, uint64_t off, uint64_t size,
                    int (*cb)(const struct sc_unwind_rule *), int *matching)
{
    struct sc_unwind_rule u;
    int n = 0;
    *matching = 0;
    for (uint64_t a = off; a < off + size && sc_unwind_find(t, a, &u); a = u.end) {
        n++;
        *matching += cb(&u);
    }
    return n;
}

static int is_entry_rule(const struct sc_unwind_rule *u)
{
    return u->cfa == SC_UW_CFA_SP && u->cfa_off == 8 && u->ra == SC_UW_RA_AT_CFA &&
           u->ra_off == -8 && u->fp == SC_UW_FP_SAME;
}
static int saves_fp(const struct sc_unwind_rule *u)
{
    return u->cfa == SC_UW_CFA_SP && u->fp == SC_UW_FP_AT_CFA;
}
static int fp_frame(const struct sc_unwind_rule *u)
{
    return u->cfa == SC_UW_CFA_FP && u->cfa_off == 16 && u->fp == SC_UW_FP_AT_CFA &&
           u->fp_off == -16;
}
static int has_frame(const struct sc_unwind_rule *u)
{
    return u->cfa == SC_UW_CFA_SP && u->cfa_off > 8;
}
static int is_plt(const struct sc_unwind_rule *u)
{
    return u->cfa == SC_UW_CFA_PLT && u->cfa_off == 8 && u->plt_mask == 15;
}

static void test_program_rows(void)
{
#if !defined(__x86_64__)
    fprintf(stderr, "(x86-64 rows only: skipped)\n");
    return;
#endif
    if (!built) {
        fprintf(stderr, "(no C compiler: the programs' rows are not checked)\n");
        return;
    }
    char prog[300], lib[300];
    path_of(prog, sizeof prog, "prog");
    path_of(lib, sizeof lib, "libt.so");
    struct sc_unwind_table *t = load(prog), *tl = load(lib);
    T_CHECK(t && tl);
    if (!t || !tl) {
        sc_unwind_table_free(t);
        sc_unwind_table_free(tl);
        return;
    }
    struct sc_unwind_table_stats st;
    sc_unwind_table_stats(t, &st);
    T_CHECK(st.fdes >= 6 && st.rows > st.fdes && st.fdes_bad == 0 && !st.truncated);
    T_EQ_INT(st.fdes_hdr, st.fdes); /* found through .eh_frame_hdr */
    T_EQ_INT(st.arch, SC_UW_ARCH_X86_64);
    uint64_t off, size;
    int n, ok;
    /* a leaf without a frame: the return address at the stack pointer, all through */
    T_EQ_INT(locate(prog, "leaf_frameless", &off, &size), 0);
    n = rules_in(t, off, size, is_entry_rule, &ok);
    T_CHECK(n >= 1 && ok == n);
    /* rbp saved like any register, the CFA on the stack pointer */
    T_EQ_INT(locate(prog, "saves_rbp", &off, &size), 0);
    n = rules_in(t, off, size, saves_fp, &ok);
    T_CHECK(n >= 2 && ok >= 1);
    struct sc_unwind_rule u;
    T_CHECK(sc_unwind_find(t, off, &u) && is_entry_rule(&u) && u.start == off);
    /* a frame pointer frame (fp.c) */
    T_EQ_INT(locate(prog, "with_fp", &off, &size), 0);
    n = rules_in(t, off, size, fp_frame, &ok);
    T_CHECK(n >= 2 && ok >= 1);
    /* the recursive function keeps a frame on the stack */
    T_EQ_INT(locate(prog, "recurse", &off, &size), 0);
    n = rules_in(t, off, size, has_frame, &ok);
    T_CHECK(ok >= 1);
    T_CHECK(sc_unwind_find(t, off, &u) && is_entry_rule(&u));
    T_EQ_INT(locate(prog, "main", &off, &size), 0);
    T_CHECK(sc_unwind_find(t, off, &u) && is_entry_rule(&u));
    /* the PLT's entries (after its first 16 bytes): the expression read as the PLT rule */
    T_EQ_INT(locate(prog, ".plt", &off, &size), 0);
    T_CHECK(size > 16 && sc_unwind_find(t, off + 16, &u) && is_plt(&u));
    T_CHECK(sc_unwind_find(t, off + 16 + 11, &u) && is_plt(&u) && u.plt_min >= 6 &&
            u.plt_min <= 11);
    /* the shared library's function */
    T_EQ_INT(locate(lib, "lib_work", &off, &size), 0);
    T_CHECK(sc_unwind_find(tl, off, &u) && is_entry_rule(&u));
    /* outside the table */
    T_CHECK(!sc_unwind_find(t, 0, &u));
    sc_unwind_table_free(t);
    sc_unwind_table_free(tl);
}

/* The path of the file this process maps that holds fn (libc: a function of it). */
static int mapped_path(const void *fn, char *out, size_t n)
{
    FILE *f = fopen("/proc/self/maps", "re");
    char line[8192];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        struct sc_maps_line l;
        if (!sc_maps_parse_line(line, strcspn(line, "\n"), &l) &&
            (uint64_t)(uintptr_t)fn >= l.start && (uint64_t)(uintptr_t)fn < l.end && l.path_len) {
            snprintf(out, n, "%.*s", (int)l.path_len, l.path);
            found = 1;
        }
    }
    if (f)
        fclose(f);
    return found;
}

static void test_readelf(void)
{
#if !defined(__x86_64__)
    return;
#endif
    char libc[4096], self[4096], prog[300], lib[300];
    const char *files[4];
    int nf = 0;
    if (mapped_path((const void *)(uintptr_t)&fopen, libc, sizeof libc))
        files[nf++] = libc;
    if (mapped_path((const void *)(uintptr_t)&test_readelf, self, sizeof self))
        files[nf++] = self;
    if (built) {
        path_of(prog, sizeof prog, "prog");
        path_of(lib, sizeof lib, "libt.so");
        files[nf++] = prog;
        files[nf++] = lib;
    }
    for (int i = 0; i < nf; i++) {
        long bad;
        long n = readelf_check(files[i], &bad);
        if (n < 0) {
            fprintf(stderr, "(readelf -wF '%s' failed: rows not compared with it)\n", files[i]);
            return;
        }
        fprintf(stderr, "  %s: %ld rows as readelf reads them, %ld differ\n", files[i], n, bad);
        T_CHECK(n > 0);
        T_EQ_INT(bad, 0);
    }
}

/* ---- hand-made CFI ---- */

struct cfi {
    uint8_t b[8192];
    size_t n;
};

#define ADDR 0x1000 /* the .eh_frame section's address */

static void put(struct cfi *c, const void *p, size_t n)
{
    if (n && c->n + n <= sizeof c->b) {
        memcpy(c->b + c->n, p, n);
        c->n += n;
    }
}
static void put32(struct cfi *c, uint32_t v)
{
    put(c, &v, 4);
}
static void patch_len(struct cfi *c, size_t at)
{
    while ((c->n - at) % 4)
        c->b[c->n++] = 0; /* DW_CFA_nop */
    uint32_t len = (uint32_t)(c->n - at - 4);
    memcpy(c->b + at, &len, 4);
}

/* A CIE (augmentation "zR", pcrel sdata4 pointers, code align 1, data align -8, return
 * address r16) with x86-64's initial rules (CFA rsp+8, ra at cfa-8) and more. Its offset. */
static size_t cie(struct cfi *c, const void *more, size_t n)
{
    size_t at = c->n;
    static const uint8_t head[] = {0,    0,  0, 0,    1,    'z', 'R', 0,    1,
                                   0x78, 16, 1, 0x1b, 0x0c, 7,   8,   0x90, 1};
    put32(c, 0);
    put(c, head, sizeof head);
    put(c, more, n);
    patch_len(c, at);
    return at;
}

/* An FDE of the CIE at cie_off for [lo, lo + range). */
static void fde(struct cfi *c, size_t cie_off, uint32_t lo, uint32_t range, const void *insns,
                size_t n)
{
    size_t at = c->n;
    put32(c, 0);
    put32(c, (uint32_t)(c->n - cie_off));
    int32_t rel = (int32_t)(lo - (ADDR + c->n));
    put(c, &rel, 4);
    put32(c, range);
    uint8_t zero = 0;
    put(c, &zero, 1);
    put(c, insns, n);
    patch_len(c, at);
}

static int build_cfi(const struct cfi *c, uint32_t max_rows, struct sc_unwind_table **t)
{
    struct sc_elf_cfi e;
    memset(&e, 0, sizeof e);
    e.machine = EM_X86_64;
    e.eh_frame = c->b;
    e.eh_frame_len = c->n;
    e.eh_frame_addr = ADDR;
    e.seg[0] = (struct sc_segment){0, 0, 1u << 30};
    e.nseg = 1;
    struct sc_unwind_limits lim = {max_rows, 0};
    char err[SC_ERR_LEN];
    return sc_unwind_build(&e, &lim, t, err);
}

static void test_rules(void)
{
    struct cfi c = {{0}, 0};
    size_t ci = cie(&c, NULL, 0);
    /* a realigned frame: push rbp; the CFA and rbp through rbp; a part where the return
     * address is undefined (an outermost frame); back by restore_state */
    static const uint8_t realign[] = {
        0x41,                    /* advance 1 */
        0x0e, 16,                /* def_cfa_offset 16 */
        0x86, 2,                 /* rbp at cfa-16 */
        0x43,                    /* advance 3 (to lo + 4) */
        0x0f, 3,  0x76, 0x78, 6, /* def_cfa_expression: breg6 -8; deref */
        0x10, 6,  2,    0x76, 0, /* expression rbp: breg6 0 */
        0x44,                    /* advance 4 (lo + 8) */
        0x0a,                    /* remember_state */
        0x07, 16,                /* undefined r16 */
        0x42,                    /* advance 2 (lo + 10) */
        0x0b,                    /* restore_state */
        0x42,                    /* advance 2 (lo + 12) */
        0x0c, 10, 0,             /* def_cfa r10+0: another register */
    };
    fde(&c, ci, 0x2000, 0x20, realign, sizeof realign);
    /* the PLT's expression */
    static const uint8_t plt[] = {0x0f, 11,   0x77, 8,    0x80, 0,   0x3f,
                                  0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22};
    fde(&c, ci, 0x2040, 0x40, plt, sizeof plt);
    struct sc_unwind_table *t = NULL;
    T_EQ_INT(build_cfi(&c, 0, &t), 0);
    if (!t)
        return;
    struct sc_unwind_rule u;
    T_CHECK(sc_unwind_find(t, 0x2000, &u) && is_entry_rule(&u) && u.end == 0x2001);
    T_CHECK(sc_unwind_find(t, 0x2002, &u) && u.cfa == SC_UW_CFA_SP && u.cfa_off == 16 &&
            u.fp == SC_UW_FP_AT_CFA && u.fp_off == -16);
    T_CHECK(sc_unwind_find(t, 0x2004, &u) && u.cfa == SC_UW_CFA_DEREF_FP && u.cfa_off == -8 &&
            u.fp == SC_UW_FP_AT_FP && u.fp_off == 0 && u.ra == SC_UW_RA_AT_CFA);
    T_CHECK(sc_unwind_find(t, 0x2008, &u) && u.cfa == SC_UW_CFA_END && u.end == 0x200a);
    T_CHECK(sc_unwind_find(t, 0x200a, &u) && u.cfa == SC_UW_CFA_DEREF_FP);
    T_CHECK(sc_unwind_find(t, 0x200c, &u) && u.cfa == SC_UW_CFA_UNKNOWN && u.end == 0x2020);
    T_CHECK(sc_unwind_find(t, 0x2030, &u) && u.cfa == SC_UW_CFA_NONE && u.end == 0x2040);
    T_CHECK(sc_unwind_find(t, 0x2050, &u) && is_plt(&u) && u.plt_min == 11);
    T_CHECK(!sc_unwind_find(t, 0x2080, &u)); /* past the last FDE */
    struct sc_unwind_table_stats st;
    sc_unwind_table_stats(t, &st);
    T_EQ_INT(st.fdes, 2);
    T_EQ_INT(st.fdes_bad, 0);
    T_EQ_INT(st.unknown, 1);
    sc_unwind_table_free(t);

    /* .eh_frame_hdr's table finds the same FDEs */
    struct cfi hdr = {{0}, 0};
    static const uint8_t head[] = {1, 0x1b, 0x03, 0x3b};
    put(&hdr, head, 4);
    int32_t eh = (int32_t)(ADDR - (0x800 + 4));
    put(&hdr, &eh, 4);
    put32(&hdr, 2);
    int32_t pairs[4] = {0x2000 - 0x800, (int32_t)(ADDR + 0x18 - 0x800), 0x2040 - 0x800, 0};
    /* the second FDE's offset: after the first (its length + 4) */
    uint32_t len1;
    memcpy(&len1, c.b + 0x18, 4);
    pairs[3] = (int32_t)(ADDR + 0x18 + len1 + 4 - 0x800);
    put(&hdr, pairs, sizeof pairs);
    struct sc_elf_cfi e;
    memset(&e, 0, sizeof e);
    e.machine = EM_X86_64;
    e.eh_frame = c.b;
    e.eh_frame_len = c.n;
    e.eh_frame_addr = ADDR;
    e.eh_frame_hdr = hdr.b;
    e.eh_frame_hdr_len = hdr.n;
    e.eh_frame_hdr_addr = 0x800;
    e.seg[0] = (struct sc_segment){0, 0, 1u << 30};
    e.nseg = 1;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_unwind_build(&e, NULL, &t, err), 0);
    sc_unwind_table_stats(t, &st);
    T_EQ_INT(st.fdes_hdr, 2);
    T_CHECK(sc_unwind_find(t, 0x2004, &u) && u.cfa == SC_UW_CFA_DEREF_FP);
    sc_unwind_table_free(t);

    /* a Go binary: frame pointers; an architecture not known */
    e.is_go = 1;
    T_EQ_INT(sc_unwind_build(&e, NULL, &t, err), 0);
    sc_unwind_table_stats(t, &st);
    T_CHECK(st.frame_pointers_only && st.rows == 0 && !sc_unwind_find(t, 0x2004, &u));
    sc_unwind_table_free(t);
    e.machine = EM_386;
    T_EQ_INT(sc_unwind_build(&e, NULL, &t, err), SC_EUNSUPPORTED);
    T_CHECK(t == NULL);
    T_EQ_INT(sc_unwind_load(-1, "not an elf file", 15, NULL, &t, err), SC_EFORMAT);
}

/* Hostile CFI: each must build (a partial table, its bad entries counted) or fail with an
 * error, within its limits. */
static void test_hostile(void)
{
    struct sc_unwind_table *t = NULL;
    struct sc_unwind_table_stats st;
    struct sc_unwind_rule u;
    struct cfi c;

    /* an empty section, a length past the end, a 64-bit length past the end */
    memset(&c, 0, sizeof c);
    T_EQ_INT(build_cfi(&c, 0, &t), 0);
    sc_unwind_table_free(t);
    c.n = 8;
    uint32_t big = 0x7fffffff;
    memcpy(c.b, &big, 4);
    T_EQ_INT(build_cfi(&c, 0, &t), 0);
    sc_unwind_table_stats(t, &st);
    T_EQ_INT(st.rows, 0);
    sc_unwind_table_free(t);
    memset(c.b, 0xff, 16);
    c.n = 16;
    T_EQ_INT(build_cfi(&c, 0, &t), 0);
    sc_unwind_table_free(t);

    /* an FDE whose CIE pointer points at itself, one before the section, one at an FDE */
    memset(&c, 0, sizeof c);
    size_t ci = cie(&c, NULL, 0);
    fde(&c, ci, 0x2000, 0x10, NULL, 0);
    size_t self = c.n;
    fde(&c, ci, 0x3000, 0x10, NULL, 0);
    uint32_t v = 0; /* 0 would say CIE: make it point 4 bytes back, at its own length */
    v = 4;
    memcpy(c.b + self + 4, &v, 4);
    size_t before = c.n;
    fde(&c, ci, 0x4000, 0x10, NULL, 0);
    v = (uint32_t)(before + 4 + 64);
    memcpy(c.b + before + 4, &v, 4);
    fde(&c, self, 0x5000, 0x10, NULL, 0);
    T_EQ_INT(build_cfi(&c, 0, &t), 0);
    sc_unwind_table_stats(t, &st);
    T_EQ_INT(st.fdes, 1);
    T_EQ_INT(st.fdes_bad, 3);
    T_CHECK(sc_unwind_find(t, 0x2000, &u) && is_entry_rule(&u));
    T_CHECK(!sc_unwind_find(t, 0x3000, &u) || u.cfa == SC_UW_CFA_NONE);
    sc_unwind_table_free(t);

    /* remember_state 17 deep; an unknown instruction; an augmentation without 'z'; an
     * advance by a huge code alignment; a def_cfa_offset past 32 bits */
    memset(&c, 0, sizeof c);
    ci = cie(&c, NULL, 0);
    uint8_t deep[40];
    deep[0] = 0x41;
    deep[1] = 0x0e;
    deep[2] = 16;
    deep[3] = 0x41;
    memset(deep + 4, 0x0a, 17);
    fde(&c, ci, 0x2000, 0x10, deep, 21);
    static const uint8_t unknown_op[] = {0x41, 0x3f, 0x41};
    fde(&c, ci, 0x2010, 0x10, unknown_op, sizeof unknown_op);
    static const uint8_t huge[] = {0x41, 0x0e, 0xff, 0xff, 0xff, 0xff, 0x7f};
    fde(&c, ci, 0x2020, 0x10, huge, sizeof huge);
    size_t ci2 = c.n;
    static const uint8_t odd_aug[] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 'x', 0, 1, 0x78, 16};
    put(&c, odd_aug, sizeof odd_aug);
    patch_len(&c, ci2);
    fde(&c, ci2, 0x2030, 0x10, NULL, 0);
    size_t ci3 = c.n;
    static const uint8_t big_align[] = {
        0,    0,    0,    0,    0,    0, 0,    0,  1, 'z',  'R',  0, 0x80, 0x80, 0x80, 0x80,
        0x80, 0x80, 0x80, 0x80, 0x80, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8,    0x90, 1};
    put(&c, big_align, sizeof big_align);
    patch_len(&c, ci3);
    static const uint8_t adv[] = {0x04, 0xff, 0xff, 0xff, 0xff, 0x0e, 16, 0x7f};
    fde(&c, ci3, 0x2040, 0x10, adv, sizeof adv);
    T_EQ_INT(build_cfi(&c, 0, &t), 0);
    sc_unwind_table_stats(t, &st);
    T_EQ_INT(st.fdes_bad, 3); /* deep, unknown_op, odd_aug (its CIE) */
    /* the rows before a bad instruction stay; after it, not modelled */
    T_CHECK(sc_unwind_find(t, 0x2000, &u) && is_entry_rule(&u));
    T_CHECK(sc_unwind_find(t, 0x2001, &u) && u.cfa == SC_UW_CFA_SP && u.cfa_off == 16);
    T_CHECK(sc_unwind_find(t, 0x2002, &u) && u.cfa == SC_UW_CFA_UNKNOWN);
    T_CHECK(sc_unwind_find(t, 0x2011, &u) && u.cfa == SC_UW_CFA_UNKNOWN);
    T_CHECK(sc_unwind_find(t, 0x2021, &u) && u.cfa == SC_UW_CFA_UNKNOWN); /* 2^35: no int32 */
    T_CHECK(sc_unwind_find(t, 0x204f, &u) && is_entry_rule(&u));          /* advanced past */
    sc_unwind_table_free(t);

    /* more FDEs than rows allowed: the first ones, cut and said to be */
    memset(&c, 0, sizeof c);
    ci = cie(&c, NULL, 0);
    static const uint8_t two[] = {0x41, 0x0e, 16};
    for (uint32_t i = 0; i < 100; i++)
        fde(&c, ci, 0x2000 + 0x10 * i, 0x10, two, sizeof two);
    T_EQ_INT(build_cfi(&c, 8, &t), 0);
    sc_unwind_table_stats(t, &st);
    T_CHECK(st.truncated && st.rows <= 8 && st.rows >= 2);
    T_CHECK(sc_unwind_find(t, 0x2000, &u) && is_entry_rule(&u));
    T_CHECK(!sc_unwind_find(t, 0x2000 + 0x10 * 99, &u));
    sc_unwind_table_free(t);
}

/* ---- the unwinder ---- */

/* Frame pointer frames on a made-up stack at 0x7000; code at [0x400000, 0x500000). */
static int fake_find(void *ctx, uint64_t pc, const struct sc_unwind_table **t, uint64_t *off)
{
    (void)ctx;
    *t = NULL;
    *off = pc;
    return pc >= 0x400000 && pc < 0x500000;
}

static void test_unwinder_fp(void)
{
    uint64_t w[64] = {0}, pcs[16];
    const uint64_t base = 0x7000;
    struct sc_unwind_regs regs = {0x401000, base, base + 16, 0};
    struct sc_unwind_result res;
    /* frame 1 at base + 16: caller's fp base + 48, return 0x401100; frame 2 at base + 48:
     * fp 0 (the outermost), return 0x401200 */
    w[2] = base + 48;
    w[3] = 0x401100;
    w[6] = 0;
    w[7] = 0x401200;
    sc_unwind_stack(SC_UW_ARCH_X86_64, &regs, (const uint8_t *)w, sizeof w, fake_find, NULL, pcs,
                    16, &res);
    T_EQ_INT(res.n, 3);
    T_EQ_INT(res.stop, SC_UNWIND_ZERO);
    T_EQ_INT(res.fp, 2);
    T_CHECK(pcs[0] == 0x401000 && pcs[1] == 0x401100 && pcs[2] == 0x401200);
    /* a return address in no mapping is no frame */
    w[7] = 0x900000;
    sc_unwind_stack(SC_UW_ARCH_X86_64, &regs, (const uint8_t *)w, sizeof w, fake_find, NULL, pcs,
                    16, &res);
    T_EQ_INT(res.n, 2);
    T_EQ_INT(res.stop, SC_UNWIND_UNMAPPED);
    /* a frame pointer past the copy; one below the stack pointer; one pointing at itself */
    w[7] = 0x401200;
    w[6] = base + 4096;
    sc_unwind_stack(SC_UW_ARCH_X86_64, &regs, (const uint8_t *)w, sizeof w, fake_find, NULL, pcs,
                    16, &res);
    T_EQ_INT(res.stop, SC_UNWIND_STACK_END);
    T_EQ_INT(res.n, 3);
    w[6] = base - 64;
    sc_unwind_stack(SC_UW_ARCH_X86_64, &regs, (const uint8_t *)w, sizeof w, fake_find, NULL, pcs,
                    16, &res);
    T_EQ_INT(res.stop, SC_UNWIND_BAD);
    w[6] = base + 48;
    sc_unwind_stack(SC_UW_ARCH_X86_64, &regs, (const uint8_t *)w, sizeof w, fake_find, NULL, pcs,
                    16, &res);
    T_EQ_INT(res.stop, SC_UNWIND_BAD);
    T_CHECK(res.n <= 4);
    /* a chain longer than max */
    for (int i = 2; i + 3 < 64; i += 2) {
        w[i] = base + 8 * (uint64_t)(i + 2);
        w[i + 1] = 0x401000 + (uint64_t)i;
    }
    sc_unwind_stack(SC_UW_ARCH_X86_64, &regs, (const uint8_t *)w, sizeof w, fake_find, NULL, pcs,
                    10, &res);
    T_EQ_INT(res.n, 10);
    T_EQ_INT(res.stop, SC_UNWIND_DEPTH);
    /* no stack at all */
    sc_unwind_stack(SC_UW_ARCH_X86_64, &regs, NULL, 0, fake_find, NULL, pcs, 16, &res);
    T_EQ_INT(res.n, 1);
    T_EQ_INT(res.stop, SC_UNWIND_STACK_END);
}

/* A table for [0x2000, 0x2010), code without one at [0x400000, 0x500000). */
static int mixed_find(void *ctx, uint64_t pc, const struct sc_unwind_table **t, uint64_t *off)
{
    *off = pc;
    *t = pc >= 0x2000 && pc < 0x2010 ? ctx : NULL;
    return (pc >= 0x2000 && pc < 0x2010) || (pc >= 0x400000 && pc < 0x500000);
}

/* At an epilogue's ret, after pop rbp: GCC's CFI may still say rbp is saved at cfa-16, a
 * slot now below the stack pointer (outside the copy). The register holds the caller's
 * value then, and the walk goes on with it. */
static void test_unwinder_popped_fp(void)
{
    struct cfi c = {{0}, 0};
    size_t ci = cie(&c, NULL, 0);
    static const uint8_t saved[] = {0x86, 2}; /* rbp at cfa-16, never restored */
    fde(&c, ci, 0x2000, 0x10, saved, sizeof saved);
    struct sc_unwind_table *t = NULL;
    T_EQ_INT(build_cfi(&c, 0, &t), 0);
    if (!t)
        return;
    const uint64_t base = 0x7000;
    uint64_t w[8] = {0}, pcs[8];
    /* at the ret: [sp] the return address into code without a table; rbp (restored) is the
     * caller's frame at base + 16: [fp] 0, the outermost, [fp + 8] its return address */
    w[0] = 0x401000;
    w[2] = 0;
    w[3] = 0x402000;
    struct sc_unwind_regs regs = {0x200f, base, base + 16, 0};
    struct sc_unwind_result res;
    sc_unwind_stack(SC_UW_ARCH_X86_64, &regs, (const uint8_t *)w, sizeof w, mixed_find, t, pcs, 8,
                    &res);
    T_EQ_INT(res.n, 3);
    T_EQ_INT(res.stop, SC_UNWIND_ZERO);
    T_CHECK(pcs[1] == 0x401000 && pcs[2] == 0x402000);
    sc_unwind_table_free(t);
}

/* ---- this test's own stack ---- */

struct self_bin {
    uint64_t start, end, offset, ino;
    uint32_t maj, min;
    char path[512];
    struct sc_unwind_table *t;
    int loaded;
};

struct self {
    struct self_bin bins[64];
    uint32_t n;
    uint64_t stack_end;
};

static void self_maps(struct self *s)
{
    FILE *f = fopen("/proc/self/maps", "re");
    char line[8192];
    s->n = 0;
    while (f && fgets(line, sizeof line, f)) {
        struct sc_maps_line l;
        if (sc_maps_parse_line(line, strcspn(line, "\n"), &l))
            continue;
        if (l.path_len == 7 && !memcmp(l.path, "[stack]", 7))
            s->stack_end = l.end;
        if (!l.exec || s->n >= 64)
            continue;
        struct self_bin *b = &s->bins[s->n++];
        memset(b, 0, sizeof *b);
        b->start = l.start;
        b->end = l.end;
        b->offset = l.offset;
        b->ino = l.inode;
        b->maj = l.dev_major;
        b->min = l.dev_minor;
        snprintf(b->path, sizeof b->path, "%.*s", (int)l.path_len, l.path);
    }
    if (f)
        fclose(f);
}

static int self_find(void *ctx, uint64_t pc, const struct sc_unwind_table **t, uint64_t *off)
{
    struct self *s = ctx;
    for (uint32_t i = 0; i < s->n; i++) {
        struct self_bin *b = &s->bins[i];
        if (pc < b->start || pc >= b->end)
            continue;
        if (!b->loaded) {
            b->loaded = 1;
            if (b->path[0] == '/')
                b->t = load(b->path);
        }
        *t = b->t;
        *off = pc - b->start + b->offset;
        return 1;
    }
    return 0;
}

struct capture {
    struct sc_unwind_regs regs;
    uint8_t *stack;
    size_t len;
};

/* Copies the stack above sp byte by byte: ASan's redzones in it are no error here. */
__attribute__((noinline, no_sanitize("address"))) static void
copy_stack(uint8_t *dst, const uint8_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = ((const volatile uint8_t *)src)[i];
}

void t_capture(struct capture *c, uint64_t stack_end);
int t_inner(struct capture *c, uint64_t stack_end);
int t_outer(struct capture *c, uint64_t stack_end);
int t_rec(struct capture *c, uint64_t stack_end, int n);

/* The registers and a copy of the stack here, as a perf sample of this moment has them. */
__attribute__((noinline, noclone)) void t_capture(struct capture *c, uint64_t stack_end)
{
#if defined(__x86_64__)
    uint64_t pc, sp, fp;
    __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
                     : "=r"(pc), "=r"(sp), "=r"(fp));
    c->regs = (struct sc_unwind_regs){pc, sp, fp, 0};
    c->len = stack_end > sp && stack_end - sp < (1u << 20) ? (size_t)(stack_end - sp) : 0;
    c->stack = malloc(c->len ? c->len : 1);
    if (c->stack)
        copy_stack(c->stack, (const uint8_t *)(uintptr_t)sp, c->len);
#else
    (void)stack_end;
    memset(c, 0, sizeof *c);
#endif
}

__attribute__((noinline, noclone)) int t_inner(struct capture *c, uint64_t stack_end)
{
    t_capture(c, stack_end);
    return (int)c->len + 1; /* not a tail call */
}

__attribute__((noinline, noclone)) int t_outer(struct capture *c, uint64_t stack_end)
{
    return t_inner(c, stack_end) * 3;
}

__attribute__((noinline, noclone)) int t_rec(struct capture *c, uint64_t stack_end, int n)
{
    volatile int pad[4];
    pad[0] = n;
    if (n == 0)
        return t_outer(c, stack_end) + pad[0];
    return t_rec(c, stack_end, n - 1) + pad[0];
}

struct names {
    char v[600][64];
    uint32_t n;
};

static void on_name(void *ctx, uint32_t i, const struct sc_sym *sym)
{
    struct names *nm = ctx;
    (void)i;
    if (nm->n < 600)
        snprintf(nm->v[nm->n++], sizeof nm->v[0], "%.*s",
                 (int)sym->frames[sym->nframes - 1].name_len, sym->frames[sym->nframes - 1].name);
}

/* The names of the frames (the symbolizer's, as a recording names them). */
static void name_frames(struct self *s, const uint64_t *pcs, uint32_t n, struct names *out)
{
    struct sc_symbolizer *sym;
    struct sc_symbolizer_opts o;
    memset(&o, 0, sizeof o);
    o.no_dwarf = 1;
    char err[SC_ERR_LEN];
    out->n = 0;
    if (sc_symbolizer_new(&o, &sym, err))
        return;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t a = i ? pcs[i] - 1 : pcs[i];
        uint32_t k = 0;
        while (k < s->n && (a < s->bins[k].start || a >= s->bins[k].end))
            k++;
        if (k == s->n) {
            snprintf(out->v[out->n++], sizeof out->v[0], "?");
            continue;
        }
        const struct self_bin *b = &s->bins[k];
        int64_t dso = sc_symbolizer_dso(sym, b->path, strlen(b->path),
                                        (uint64_t)b->maj << 32 | b->min, b->ino, getpid());
        uint64_t off = a - b->start + b->offset;
        sc_symbolizer_resolve(sym, dso < 0 ? SC_DSO_ID_UNKNOWN : (uint32_t)dso, &off, 1, on_name,
                              out);
    }
    sc_symbolizer_free(sym);
}

/* name, or name.<suffix> (gcc's clones) */
static int is(const char *got, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(got, name, n) && (got[n] == 0 || got[n] == '.');
}

static void release_self(struct self *s)
{
    for (uint32_t i = 0; i < s->n; i++)
        sc_unwind_table_free(s->bins[i].t);
}

static void test_self_unwind(void)
{
#if !defined(__x86_64__)
    fprintf(stderr, "(x86-64 only: skipped)\n");
    return;
#endif
    struct self s;
    memset(&s, 0, sizeof s);
    self_maps(&s);
    T_CHECK(s.stack_end != 0);
    struct capture c;
    memset(&c, 0, sizeof c);
    t_outer(&c, s.stack_end);
    T_CHECK(c.stack && c.len > 0);
    static uint64_t pcs[600];
    struct sc_unwind_result res;
    sc_unwind_stack(SC_UW_ARCH_X86_64, &c.regs, c.stack, c.len, self_find, &s, pcs, 600, &res);
    static struct names nm;
    name_frames(&s, pcs, res.n, &nm);
    for (uint32_t i = 0; i < nm.n; i++)
        fprintf(stderr, "  #%u %s\n", i, nm.v[i]);
    /* the whole chain, innermost first, to the program's entry */
    T_EQ_INT(res.stop, SC_UNWIND_END);
    uint32_t m = 3;
    while (m < nm.n && !is(nm.v[m], "main"))
        m++;
    T_CHECK(nm.n >= 6 && m + 1 < nm.n);
    if (nm.n >= 6 && m + 1 < nm.n) {
        T_CHECK(is(nm.v[0], "t_capture"));
        T_CHECK(is(nm.v[1], "t_inner"));
        T_CHECK(is(nm.v[2], "t_outer"));
        T_CHECK(m <= 4); /* test_self_unwind between, unless inlined into main */
        T_CHECK(is(nm.v[m + 1], "__libc_start_call_main"));
        T_CHECK(is(nm.v[nm.n - 1], "_start"));
    }
    free(c.stack);

    /* 300 frames of recursion, all there */
    memset(&c, 0, sizeof c);
    t_rec(&c, s.stack_end, 300);
    sc_unwind_stack(SC_UW_ARCH_X86_64, &c.regs, c.stack, c.len, self_find, &s, pcs, 600, &res);
    name_frames(&s, pcs, res.n, &nm);
    T_EQ_INT(res.stop, SC_UNWIND_END);
    uint32_t rec = 0;
    for (uint32_t i = 0; i < nm.n; i++)
        rec += is(nm.v[i], "t_rec");
    T_EQ_INT(rec, 301);
    T_CHECK(nm.n > 305 && is(nm.v[nm.n - 1], "_start"));
    /* the same with a copy of 4 KiB: the walk stops at its end */
    sc_unwind_stack(SC_UW_ARCH_X86_64, &c.regs, c.stack, 4096, self_find, &s, pcs, 600, &res);
    T_EQ_INT(res.stop, SC_UNWIND_STACK_END);
    T_CHECK(res.n > 10 && res.n < 300);
    free(c.stack);
    release_self(&s);
}

/* ---- the cache ---- */

static int64_t dso_of(struct sc_symbolizer *sym, const char *path)
{
    struct stat st;
    if (stat(path, &st))
        return -1;
    return sc_symbolizer_dso(sym, path, strlen(path), st.st_dev, st.st_ino, getpid());
}

static void test_cache(void)
{
    char libc[4096];
    if (!mapped_path((const void *)(uintptr_t)&fopen, libc, sizeof libc))
        return;
    struct sc_symbolizer *sym;
    struct sc_symbolizer_opts o;
    memset(&o, 0, sizeof o);
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_symbolizer_new(&o, &sym, err), 0);
    struct sc_unwind_cache *c;
    T_EQ_INT(sc_unwind_cache_new(0, NULL, &c, err), 0);
    int64_t d_libc = dso_of(sym, libc);
    T_CHECK(d_libc >= 0);
    const struct sc_unwind_table *t = sc_unwind_cache_get(c, sym, (uint32_t)d_libc);
    T_CHECK(t != NULL);
    T_CHECK(sc_unwind_cache_get(c, sym, (uint32_t)d_libc) == t); /* loaded once */
    /* JIT code and the kernel have none; a file that is gone neither, and is not tried again */
    int64_t d_jit = sc_symbolizer_dso(sym, "", 0, 0, 0, 42);
    T_CHECK(sc_unwind_cache_get(c, sym, (uint32_t)d_jit) == NULL);
    T_CHECK(sc_unwind_cache_get(c, sym, SC_DSO_ID_KERNEL) == NULL);
    int64_t d_gone = sc_symbolizer_dso(sym, "/nonexistent/libx.so", 20, 1, 2, 42);
    T_CHECK(sc_unwind_cache_get(c, sym, (uint32_t)d_gone) == NULL);
    T_CHECK(sc_unwind_cache_get(c, sym, (uint32_t)d_gone) == NULL);
    /* the vDSO's, from scorch's own copy */
    T_CHECK(sc_unwind_cache_get(c, sym, SC_DSO_ID_VDSO) != NULL);
    struct sc_unwind_cache_stats st;
    sc_unwind_cache_stats(c, &st);
    T_EQ_INT(st.loads, 2);
    T_EQ_INT(st.failures, 1);
    if (built) {
        /* the same library at another path (another inode, the same build id): shared */
        char lib[300], copy[300], cmd[700];
        path_of(lib, sizeof lib, "libt.so");
        path_of(copy, sizeof copy, "libt-copy.so");
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", lib, copy);
        T_EQ_INT(system(cmd), 0);
        const struct sc_unwind_table *a = sc_unwind_cache_get(c, sym, (uint32_t)dso_of(sym, lib));
        const struct sc_unwind_table *b = sc_unwind_cache_get(c, sym, (uint32_t)dso_of(sym, copy));
        T_CHECK(a && a == b);
        sc_unwind_cache_stats(c, &st);
        T_EQ_INT(st.shared, 1);
    }
    sc_unwind_cache_free(c);

    /* a budget smaller than one table: the last one stays, the others go, and come back */
    T_EQ_INT(sc_unwind_cache_new(1, NULL, &c, err), 0);
    T_CHECK(sc_unwind_cache_get(c, sym, (uint32_t)d_libc) != NULL);
    T_CHECK(sc_unwind_cache_get(c, sym, SC_DSO_ID_VDSO) != NULL);
    sc_unwind_cache_stats(c, &st);
    T_EQ_INT(st.tables, 1);
    T_EQ_INT(st.evictions, 1);
    T_CHECK(sc_unwind_cache_get(c, sym, (uint32_t)d_libc) != NULL);
    sc_unwind_cache_stats(c, &st);
    T_EQ_INT(st.loads, 3);
    T_EQ_INT(st.tables, 1);
    sc_unwind_cache_free(c);
    sc_symbolizer_free(sym);
}

int main(void)
{
    build_programs();
    if (!built)
        fprintf(stderr, "(cc could not build the test programs: their checks are skipped)\n");
    T_RUN(test_rules);
    T_RUN(test_hostile);
    T_RUN(test_unwinder_fp);
    T_RUN(test_unwinder_popped_fp);
    T_RUN(test_program_rows);
    T_RUN(test_readelf);
    T_RUN(test_self_unwind);
    T_RUN(test_cache);
    if (dir[0])
        t_rmrf(dir);
    return t_done();
}
