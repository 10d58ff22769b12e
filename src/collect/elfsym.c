/* elfsym.c - function symbols, segments and build ids via libelf; file:line via libdw. */
#include "collect/elfsym.h"
#include "model/buf.h"
#include "model/error.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static void elf_init(void)
{
    elf_version(EV_CURRENT);
}

static Elf *open_elf(int fd, const void *mem, size_t len)
{
    pthread_once(&elf_once, elf_init);
    Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL)
                     : elf_memory((char *)(uintptr_t)mem, len);
    if (e && elf_kind(e) != ELF_K_ELF) {
        elf_end(e);
        return NULL;
    }
    return e;
}

static uint8_t bind_rank(unsigned bind)
{
    return bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : 1;
}

/* Adds the function symbols of one symbol table section. */
static int add_symbols(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct sc_symtab *t)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || !sh->sh_entsize)
        return 0;
    size_t n = sh->sh_size / sh->sh_entsize;
    for (size_t i = 0; i < n; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(d, (int)i, &sym))
            break;
        unsigned type = GELF_ST_TYPE(sym.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !sym.st_value ||
            sym.st_shndx == SHN_UNDEF)
            continue;
        const char *name = elf_strptr(e, sh->sh_link, sym.st_name);
        if (!name || !*name)
            continue;
        int rc = sc_symtab_add(t, sym.st_value, sym.st_size, name, strlen(name),
                               bind_rank(GELF_ST_BIND(sym.st_info)));
        if (rc)
            return rc;
    }
    return 0;
}

/* The GNU build id from a note section or segment's data. */
static void find_build_id(Elf_Data *d, struct sc_symtab *t)
{
    size_t off = 0, name_off, desc_off;
    GElf_Nhdr nh;
    while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            !memcmp((const char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz > 0 &&
            nh.n_descsz <= sizeof t->build_id) {
            memcpy(t->build_id, (const char *)d->d_buf + desc_off, nh.n_descsz);
            t->build_id_len = nh.n_descsz;
            return;
        }
    }
}

int sc_elf_load(int fd, const void *mem, size_t len, struct sc_symtab *t, int *has_dwarf,
                char *err)
{
    *has_dwarf = 0;
    Elf *e = open_elf(fd, mem, len);
    if (!e)
        return sc_errf(err, SC_EFORMAT, "not an ELF file");
    int rc = 0;
    size_t nph = 0, shstr = 0;
    if (elf_getphdrnum(e, &nph) == 0)
        for (size_t i = 0; i < nph && t->nseg < SC_SYMTAB_MAX_SEGMENTS; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_filesz)
                t->seg[t->nseg++] = (struct sc_segment){ph.p_offset, ph.p_vaddr, ph.p_filesz};
        }
    elf_getshdrstrndx(e, &shstr);
    Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL, *pcln = NULL;
    GElf_Shdr sym_sh, dyn_sh, pcln_sh;
    memset(&sym_sh, 0, sizeof sym_sh);
    dyn_sh = pcln_sh = sym_sh;
    uint64_t text_vaddr = 0;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        const char *name = elf_strptr(e, shstr, sh.sh_name);
        if (!name)
            name = "";
        if (sh.sh_type == SHT_SYMTAB)
            symtab = scn, sym_sh = sh;
        else if (sh.sh_type == SHT_DYNSYM)
            dynsym = scn, dyn_sh = sh;
        else if (sh.sh_type == SHT_NOTE && !t->build_id_len)
            find_build_id(elf_getdata(scn, NULL), t);
        else if (!strcmp(name, ".gopclntab"))
            pcln = scn, pcln_sh = sh;
        else if (!strcmp(name, ".text"))
            text_vaddr = sh.sh_addr;
        if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"))
            *has_dwarf = 1;
        if (!strcmp(name, ".go.buildinfo") || !strcmp(name, ".gopclntab"))
            t->is_go = 1;
    }
    if (symtab) {
        rc = add_symbols(e, symtab, &sym_sh, t);
        t->source = SC_SYMS_SYMTAB;
    } else if (pcln) {
        Elf_Data *d = elf_getdata(pcln, NULL);
        if (d && d->d_buf && pcln_sh.sh_type != SHT_NOBITS)
            rc = sc_symtab_parse_gopclntab(t, d->d_buf, d->d_size, text_vaddr);
        if (rc == SC_EFORMAT)
            rc = 0; /* a pclntab of a layout we do not know: no symbols, not an error */
        if (t->n)
            t->source = SC_SYMS_GOPCLNTAB;
    }
    /* dynamic symbols complete a .symtab-less binary (and a pclntab-less one) */
    if (!rc && !symtab && dynsym) {
        rc = add_symbols(e, dynsym, &dyn_sh, t);
        if (!t->source)
            t->source = SC_SYMS_DYNSYM;
    }
    elf_end(e);
    if (rc)
        return sc_errf(err, rc, "reading symbols: %s", sc_strerror(rc));
    sc_symtab_finish(t, 0);
    return 0;
}

uint32_t sc_elf_build_id(int fd, uint8_t id[20])
{
    Elf *e = open_elf(fd, NULL, 0);
    if (!e)
        return 0;
    struct sc_symtab t;
    sc_symtab_init(&t);
    Elf_Scn *scn = NULL;
    while (!t.build_id_len && (scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE)
            find_build_id(elf_getdata(scn, NULL), &t);
    }
    elf_end(e);
    memcpy(id, t.build_id, t.build_id_len);
    return t.build_id_len;
}

int sc_elf_add_symbols(int fd, struct sc_symtab *t, char *err)
{
    Elf *e = open_elf(fd, NULL, 0);
    if (!e)
        return sc_errf(err, SC_EFORMAT, "not an ELF file");
    Elf_Scn *scn = NULL;
    int rc = 0;
    while (!rc && (scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
            rc = add_symbols(e, scn, &sh, t);
    }
    elf_end(e);
    return rc ? sc_errf(err, rc, "reading symbols: %s", sc_strerror(rc)) : 0;
}

/* ---- DWARF ---- */

/* A DIE's name as the profile should show it: the linkage name (C++'s mangled name, which
 * matches the symbol table) else the name, following abstract origins. */
static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *s = NULL;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
        dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
        s = dwarf_formstring(&a);
    if (!s && dwarf_attr_integrate(die, DW_AT_name, &a))
        s = dwarf_formstring(&a);
    return s;
}

/* The call site of an inlined subroutine: its DW_AT_call_file (through the CU's file
 * table) and DW_AT_call_line. */
static void call_site(Dwarf_Die *inl, Dwarf_Files *files, size_t nfiles, const char **file,
                      int64_t *line)
{
    Dwarf_Attribute a;
    Dwarf_Word v;
    *file = NULL;
    *line = 0;
    if (files && dwarf_attr(inl, DW_AT_call_file, &a) && dwarf_formudata(&a, &v) == 0 &&
        v < nfiles)
        *file = dwarf_filesrc(files, v, NULL, NULL);
    if (dwarf_attr(inl, DW_AT_call_line, &a) && dwarf_formudata(&a, &v) == 0)
        *line = (int64_t)v;
}

/* Address ranges -> CU, for DWARF without .debug_aranges (Go's), built from the CUs'
 * own ranges the first time dwarf_addrdie finds nothing. */
struct cu_range {
    uint64_t lo, hi;
    Dwarf_Off off;
};
struct cu_index {
    struct cu_range *v;
    uint32_t n, cap;
    int built;
};

static int cmp_range(const void *a, const void *b)
{
    const struct cu_range *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

static void build_cu_index(Dwarf *dw, struct cu_index *ix)
{
    ix->built = 1;
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        if (dwarf_offdie(dw, off + hsize, &cu)) {
            Dwarf_Addr base, lo, hi;
            ptrdiff_t k = 0;
            while ((k = dwarf_ranges(&cu, k, &base, &lo, &hi)) > 0) {
                if (hi <= lo ||
                    sc_grow_array(&ix->v, &ix->cap, (uint64_t)ix->n + 1, sizeof *ix->v))
                    continue;
                ix->v[ix->n++] = (struct cu_range){lo, hi, off + hsize};
            }
        }
        off = next;
    }
    qsort(ix->v, ix->n, sizeof *ix->v, cmp_range);
}

static int find_cu(Dwarf *dw, struct cu_index *ix, uint64_t va, Dwarf_Die *cu)
{
    if (dwarf_addrdie(dw, va, cu))
        return 1;
    if (!ix->built)
        build_cu_index(dw, ix);
    uint32_t lo = 0, hi = ix->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ix->v[mid].lo <= va)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* ranges of different CUs do not overlap; look back a little for nested ones */
    for (uint32_t k = lo; k > 0 && k + 8 > lo; k--)
        if (va >= ix->v[k - 1].lo && va < ix->v[k - 1].hi)
            return dwarf_offdie(dw, ix->v[k - 1].off, cu) != NULL;
    return 0;
}

/* The frames of one address, innermost first. */
static uint32_t frames_at(Dwarf *dw, struct cu_index *ix, uint64_t va, struct sc_elf_frame *fr)
{
    Dwarf_Die cu;
    if (!find_cu(dw, ix, va, &cu))
        return 0;
    Dwarf_Line *ln = dwarf_getsrc_die(&cu, va);
    const char *file = ln ? dwarf_linesrc(ln, NULL, NULL) : NULL;
    int lineno = 0;
    if (ln)
        dwarf_lineno(ln, &lineno);
    int64_t line = lineno;
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    if (dwarf_getsrcfiles(&cu, &files, &nfiles) != 0)
        files = NULL;
    /* the innermost scope at va, then its physical parents (dwarf_getscopes continues
     * an inlined instance with its abstract origin's scopes, not with its caller) */
    Dwarf_Die *scopes = NULL, inner;
    int ns = dwarf_getscopes(&cu, va, &scopes);
    if (ns > 0) {
        Dwarf_Off off = dwarf_dieoffset(&scopes[0]);
        free(scopes);
        scopes = NULL;
        ns = dwarf_offdie(dw, off, &inner) ? dwarf_getscopes_die(&inner, &scopes) : 0;
    }
    uint32_t n = 0;
    for (int i = 0; i < ns && n < SC_ELF_MAX_FRAMES; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag == DW_TAG_inlined_subroutine) {
            fr[n++] = (struct sc_elf_frame){die_name(&scopes[i]), file, line, 0};
            call_site(&scopes[i], files, nfiles, &file, &line);
        } else if (tag == DW_TAG_subprogram) {
            /* the real function: the symbol table names it, DWARF places it */
            fr[n++] = (struct sc_elf_frame){die_name(&scopes[i]), file, line, 1};
            break;
        }
    }
    free(scopes);
    if (n == 0 && file) /* a line table without a subprogram DIE */
        fr[n++] = (struct sc_elf_frame){NULL, file, line, 1};
    return n;
}

int sc_elf_lines(int fd, const uint64_t *vaddrs, uint32_t n, sc_elf_lines_cb cb, void *ctx,
                 char *err)
{
    Elf *e = open_elf(fd, NULL, 0);
    if (!e)
        return sc_errf(err, SC_EFORMAT, "not an ELF file");
    Dwarf *dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
    if (!dw) {
        elf_end(e);
        return sc_errf(err, SC_ENOTFOUND, "no DWARF");
    }
    struct sc_elf_frame fr[SC_ELF_MAX_FRAMES];
    struct cu_index ix = {NULL, 0, 0, 0};
    for (uint32_t i = 0; i < n; i++)
        cb(ctx, i, fr, frames_at(dw, &ix, vaddrs[i], fr));
    free(ix.v);
    dwarf_end(dw);
    elf_end(e);
    return 0;
}
