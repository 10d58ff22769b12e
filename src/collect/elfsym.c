/* elfsym.c - function symbols, segments and build ids via libelf; file:line via libdw. */
#include "collect/elfsym.h"
#include "model/buf.h"
#include "model/bytes.h"
#include "model/error.h"

#include <demangle.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static void elf_init(void)
{
    elf_version(EV_CURRENT);
}

/* An ELF file (fd) or image (mem). mapped: the file mapped whole (what reads much of it,
 * DWARF and CFI, wants); else its sections read as they are asked for, which suits reading
 * a symbol table (a few of a file's sections): no mapping to tear down, which costs every
 * other thread of the process a TLB flush. */
static Elf *open_elf(int fd, const void *mem, size_t len, int mapped)
{
    pthread_once(&elf_once, elf_init);
    Elf *e = fd >= 0 ? elf_begin(fd, mapped ? ELF_C_READ_MMAP : ELF_C_READ, NULL)
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

/* perf takes labels in code for symbols too (ld.so's _dl_start_user): a table that names
 * as perf does takes them. */
static int perf_label(Elf *e, const struct sc_symtab *t, const GElf_Sym *sym)
{
    unsigned vis = GELF_ST_VISIBILITY(sym->st_other);
    if (t->names_rule != SC_SYMTAB_PERF_ELF || GELF_ST_TYPE(sym->st_info) != STT_NOTYPE ||
        !sym->st_name || sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE ||
        vis == STV_HIDDEN || vis == STV_INTERNAL)
        return 0;
    GElf_Shdr sh;
    Elf_Scn *scn = elf_getscn(e, sym->st_shndx);
    return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

/* Whether a symbol is one of the functions a table keeps (its name aside). */
static int is_function(Elf *e, const struct sc_symtab *t, const GElf_Sym *sym)
{
    unsigned type = GELF_ST_TYPE(sym->st_info);
    return (type == STT_FUNC || type == STT_GNU_IFUNC || perf_label(e, t, sym)) && sym->st_value &&
           sym->st_shndx != SHN_UNDEF;
}

/* Adds the function symbols of one symbol table section. With in_file the names stay in
 * the file: entries refer to its string table, lent to t for sc_symtab_finish, whose file
 * offset goes to t->names_off; else (or when that table is not usable so) names are
 * copied. */
static int add_symbols(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct sc_symtab *t, int in_file)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || !sh->sh_entsize)
        return 0;
    GElf_Shdr ssh;
    Elf_Scn *strs = elf_getscn(e, sh->sh_link);
    Elf_Data *sd = strs && gelf_getshdr(strs, &ssh) ? elf_getdata(strs, NULL) : NULL;
    if (in_file &&
        (!sd || ssh.sh_type != SHT_STRTAB || (ssh.sh_flags & SHF_COMPRESSED) || sd->d_size == 0 ||
         sd->d_size > UINT32_MAX || ((const char *)sd->d_buf)[sd->d_size - 1] != 0))
        in_file = 0;
    size_t n = sh->sh_size / sh->sh_entsize;
    /* a table for some addresses only (t->want): the symbols they need, found without
     * reading a name (reading a big C++ library's names is most of its cost) */
    uint32_t *pick = NULL, npick = 0, before = t->nadd;
    if (sc_symtab_picks(t) && n < UINT32_MAX / 2) {
        struct sc_symtab_cand *c = malloc((n + 1) * sizeof *c);
        uint32_t nc = 0;
        for (size_t i = 0; c && i < n; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(d, (int)i, &sym))
                break;
            if (is_function(e, t, &sym) && sym.st_name)
                c[nc++] = (struct sc_symtab_cand){sym.st_value, (uint32_t)i};
        }
        if (!c || sc_symtab_wanted(t, c, nc, &pick, &npick))
            pick = NULL; /* (then all of them) */
        free(c);
    }
again:
    for (size_t x = 0; x < (pick ? npick : n); x++) {
        size_t i = pick ? pick[x] : x;
        GElf_Sym sym;
        if (!gelf_getsym(d, (int)i, &sym))
            break;
        if (!is_function(e, t, &sym))
            continue;
        uint8_t rank = bind_rank(GELF_ST_BIND(sym.st_info));
        int rc;
        const char *name = NULL;
        if (in_file) {
            if (sym.st_name < sd->d_size && ((const char *)sd->d_buf)[sym.st_name])
                name = (const char *)sd->d_buf + sym.st_name;
        } else {
            name = elf_strptr(e, sh->sh_link, sym.st_name);
        }
        if (!name || !*name) {
            if (pick) { /* it took part in the pick as a symbol: pick again, from all */
                free(pick);
                pick = NULL;
                t->nadd = before;
                goto again;
            }
            continue;
        }
        if (in_file)
            rc = sc_symtab_add_ref(t, sym.st_value, sym.st_size, sym.st_name, rank);
        else
            rc = sc_symtab_add(t, sym.st_value, sym.st_size, name, strlen(name), rank);
        if (rc) {
            free(pick);
            return rc;
        }
    }
    free(pick);
    if (in_file) {
        t->names = (char *)sd->d_buf; /* lent until the finish */
        t->names_len = sd->d_size;
        t->names_in_file = 1;
        t->names_off = ssh.sh_offset;
    }
    return 0;
}

/* perf's symbols for the PLT's entries, "name@plt" (C++ names demangled as perf does,
 * without parameters), one per .rela.plt relocation in order, 16 bytes each from .plt.sec,
 * or from .plt after its 16-byte header (x86-64). Names are copied. */
static int plt_symbols(Elf *e, struct sc_symtab *t, size_t shstr)
{
    GElf_Ehdr eh;
    if (!gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64)
        return 0;
    Elf_Scn *scn = NULL, *rela = NULL;
    GElf_Shdr sh, plt, sec, rsh;
    memset(&plt, 0, sizeof plt);
    sec = rsh = plt;
    int have_plt = 0, have_sec = 0;
    while ((scn = elf_nextscn(e, scn))) {
        if (!gelf_getshdr(scn, &sh))
            continue;
        const char *name = elf_strptr(e, shstr, sh.sh_name);
        if (!name)
            continue;
        if (!strcmp(name, ".plt"))
            plt = sh, have_plt = 1;
        else if (!strcmp(name, ".plt.sec"))
            sec = sh, have_sec = 1;
        else if (!strcmp(name, ".rela.plt") && sh.sh_type == SHT_RELA)
            rela = scn, rsh = sh;
    }
    if (!rela || !have_plt || !rsh.sh_entsize)
        return 0;
    GElf_Shdr dsh;
    Elf_Scn *dyn = elf_getscn(e, rsh.sh_link);
    Elf_Data *rd = elf_getdata(rela, NULL), *dd = dyn ? elf_getdata(dyn, NULL) : NULL;
    if (!rd || !dd || !gelf_getshdr(dyn, &dsh))
        return 0;
    uint64_t at = have_sec ? sec.sh_addr : plt.sh_addr + 16;
    uint64_t end = have_sec ? sec.sh_addr + sec.sh_size : plt.sh_addr + plt.sh_size;
    size_t n = rsh.sh_size / rsh.sh_entsize;
    if (n > (end - at) / 16)
        n = (size_t)((end - at) / 16);
    /* for some addresses only (t->want): the entries they need, as add_symbols picks */
    uint32_t *pick = NULL, npick = 0, before = t->nadd;
    if (sc_symtab_picks(t) && n < UINT32_MAX / 2) {
        struct sc_symtab_cand *c = malloc((n + 1) * sizeof *c);
        uint32_t nc = 0;
        for (size_t i = 0; c && i < n; i++) {
            GElf_Rela r;
            if (!gelf_getrela(rd, (int)i, &r))
                break;
            c[nc++] = (struct sc_symtab_cand){at + 16 * (uint64_t)i, (uint32_t)i};
        }
        if (!c || sc_symtab_wanted(t, c, nc, &pick, &npick))
            pick = NULL;
        free(c);
    }
    char buf[1024];
    uint64_t base = at;
again:
    for (size_t x = 0; x < (pick ? npick : n); x++) {
        size_t i = pick ? pick[x] : x;
        at = base + 16 * (uint64_t)i;
        GElf_Rela r;
        GElf_Sym sym;
        if (!gelf_getrela(rd, (int)i, &r))
            break;
        const char *name = "";
        if (GELF_R_SYM(r.r_info) && gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &sym))
            name = elf_strptr(e, dsh.sh_link, sym.st_name);
        if (!name)
            name = "";
        char *dm = name[0] == '_' && name[1] == 'Z' ? cplus_demangle(name, DMGL_NO_OPTS) : NULL;
        int k = snprintf(buf, sizeof buf, "%s@plt", dm ? dm : name);
        free(dm);
        if (k < 0 || (size_t)k >= sizeof buf) {
            if (pick) { /* it took part in the pick: pick again, from all */
                free(pick);
                pick = NULL;
                t->nadd = before;
                goto again;
            }
            continue;
        }
        int rc = sc_symtab_add(t, at, 16, buf, (size_t)k, 3);
        if (rc) {
            free(pick);
            return rc;
        }
    }
    free(pick);
    return 0;
}

/* Finishes a table whose names may be lent by the file: afterwards they are not kept. */
static void finish(struct sc_symtab *t)
{
    sc_symtab_finish(t, 0);
    if (t->names_in_file) {
        t->names = NULL;
        t->names_len = 0;
        t->bytes = sizeof *t + (size_t)t->cap * sizeof *t->v;
    }
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

int sc_elf_load(int fd, const void *mem, size_t len, struct sc_symtab *t, int *has_dwarf, char *err)
{
    *has_dwarf = 0;
    Elf *e = open_elf(fd, mem, len, 0);
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
    if (t->want && t->want_offsets)
        sc_symtab_want_ready(t);
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
    /* perf's names are copied: its PLT symbols join them */
    int in_file = fd >= 0 && t->names_rule == SC_SYMTAB_OURS;
    if (symtab) {
        rc = add_symbols(e, symtab, &sym_sh, t, in_file);
        t->source = SC_SYMS_SYMTAB;
    } else if (pcln && t->names_rule == SC_SYMTAB_OURS) { /* (perf reads no pclntab) */
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
        /* (after a pclntab its names are copied: one table, one kind of name) */
        rc = add_symbols(e, dynsym, &dyn_sh, t, in_file && t->n == 0 && t->nadd == 0);
        if (!t->source)
            t->source = SC_SYMS_DYNSYM;
    }
    if (!rc && t->names_rule == SC_SYMTAB_PERF_ELF)
        rc = plt_symbols(e, t, shstr);
    if (!rc)
        finish(t); /* while the file's names are mapped */
    elf_end(e);
    if (rc) {
        if (t->names_in_file)
            t->names = NULL;
        return sc_errf(err, rc, "reading symbols: %s", sc_strerror(rc));
    }
    return 0;
}

/* The GNU build id from the PT_NOTE segments of a little-endian ELF file, read with a few
 * preads: libelf maps the whole file and reads all its section headers, which for a
 * recording's hundred binaries cost more than their symbols. 0 when the segments have no
 * well-formed one (then the note sections are asked). */
static uint32_t build_id_from_segments(int fd, uint8_t id[20])
{
    uint8_t eh[64];
    if (pread(fd, eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh, ELFMAG, SELFMAG) ||
        eh[EI_DATA] != ELFDATA2LSB || (eh[EI_CLASS] != ELFCLASS64 && eh[EI_CLASS] != ELFCLASS32))
        return 0;
    int is64 = eh[EI_CLASS] == ELFCLASS64;
    uint64_t phoff = is64 ? sc_rd64(eh + 32) : sc_rd32(eh + 28);
    uint32_t phsize =
        is64 ? (uint32_t)eh[54] | (uint32_t)eh[55] << 8 : (uint32_t)eh[42] | (uint32_t)eh[43] << 8;
    uint32_t phnum =
        is64 ? (uint32_t)eh[56] | (uint32_t)eh[57] << 8 : (uint32_t)eh[44] | (uint32_t)eh[45] << 8;
    uint8_t ph[64 * 56];
    size_t phbytes = (size_t)phnum * phsize;
    if (phsize != (is64 ? 56u : 32u) || phnum == 0 || phnum > 64 ||
        pread(fd, ph, phbytes, (off_t)phoff) != (ssize_t)phbytes)
        return 0;
    for (uint32_t i = 0; i < phnum; i++) {
        const uint8_t *p = ph + (size_t)i * phsize;
        if (sc_rd32(p) != PT_NOTE)
            continue;
        uint64_t off = is64 ? sc_rd64(p + 8) : sc_rd32(p + 4);
        uint64_t size = is64 ? sc_rd64(p + 32) : sc_rd32(p + 16);
        uint64_t align = is64 ? sc_rd64(p + 48) : sc_rd32(p + 28);
        uint8_t notes[4096];
        if (size < 12 || size > sizeof notes ||
            pread(fd, notes, (size_t)size, (off_t)off) != (ssize_t)size)
            continue;
        uint64_t pad = align == 8 ? 8 : 4; /* (gelf_getnote's rule) */
        for (uint64_t at = 0; at + 12 <= size;) {
            uint32_t nsz = sc_rd32(notes + at), dsz = sc_rd32(notes + at + 4),
                     type = sc_rd32(notes + at + 8);
            uint64_t name = at + 12, desc = (name + nsz + pad - 1) & ~(pad - 1);
            if (nsz > size || dsz > size || desc + dsz > size)
                break;
            if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(notes + name, "GNU", 4) && dsz > 0 &&
                dsz <= 20) {
                memcpy(id, notes + desc, dsz);
                return dsz;
            }
            at = (desc + dsz + pad - 1) & ~(pad - 1);
        }
    }
    return 0;
}

uint32_t sc_elf_build_id(int fd, uint8_t id[20])
{
    uint32_t n = build_id_from_segments(fd, id);
    if (n)
        return n;
    Elf *e = open_elf(fd, NULL, 0, 0);
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

size_t sc_elf_debuglink(int fd, char *name, size_t n)
{
    Elf *e = open_elf(fd, NULL, 0, 0);
    if (!e)
        return 0;
    size_t shstr = 0, len = 0;
    elf_getshdrstrndx(e, &shstr);
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        const char *sn = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstr, sh.sh_name) : NULL;
        if (!sn || strcmp(sn, ".gnu_debuglink") || sh.sh_type == SHT_NOBITS)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        /* the name, NUL-terminated, then padding and a CRC we do not check (the build
         * ids are compared instead) */
        const char *s = d && d->d_buf ? d->d_buf : NULL;
        len = s ? strnlen(s, d->d_size) : 0;
        if (!s || len == d->d_size || len == 0 || len >= n || memchr(s, '/', len) ||
            !strcmp(s, "..") || !strcmp(s, "."))
            len = 0;
        else
            memcpy(name, s, len + 1);
        break;
    }
    elf_end(e);
    return len;
}

int sc_elf_load_symtab(int fd, struct sc_symtab *t, char *err)
{
    Elf *e = open_elf(fd, NULL, 0, 0);
    if (!e)
        return sc_errf(err, SC_EFORMAT, "not an ELF file");
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    while ((scn = elf_nextscn(e, scn)))
        if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
            break;
    int rc = scn ? 0 : sc_errf(err, SC_ENOTFOUND, "no .symtab");
    if (!rc && t->names_rule == SC_SYMTAB_PERF_ELF && !t->names_in_file) {
        /* perf's names: the debug file's symbols join the binary's (its PLT's are only
         * there), which rank below them at an address */
        uint32_t before = t->nadd;
        rc = add_symbols(e, scn, &sh, t, 0);
        if (!rc && t->nadd == before)
            rc = sc_errf(err, SC_ENOTFOUND, "no function symbols");
        if (!rc) {
            finish(t);
            t->source = SC_SYMS_SYMTAB;
        }
        elf_end(e);
        return rc;
    }
    if (!rc) {
        struct sc_symtab n;
        sc_symtab_init(&n);
        n.names_rule = t->names_rule;
        rc = add_symbols(e, scn, &sh, &n, 1);
        if (!rc && n.nadd) {
            finish(&n);
            /* the new symbols and names, the old segments and build id */
            n.nseg = t->nseg;
            memcpy(n.seg, t->seg, sizeof n.seg);
            n.build_id_len = t->build_id_len;
            memcpy(n.build_id, t->build_id, sizeof n.build_id);
            n.is_go = t->is_go;
            n.source = SC_SYMS_SYMTAB;
            sc_symtab_release(t);
            *t = n;
        } else {
            if (n.names_in_file)
                n.names = NULL;
            sc_symtab_release(&n);
            if (!rc)
                rc = sc_errf(err, SC_ENOTFOUND, "no function symbols");
        }
    }
    elf_end(e);
    return rc;
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
    if (files && dwarf_attr(inl, DW_AT_call_file, &a) && dwarf_formudata(&a, &v) == 0 && v < nfiles)
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
                if (hi <= lo || sc_grow_array(&ix->v, &ix->cap, (uint64_t)ix->n + 1, sizeof *ix->v))
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

/* ---- the scopes of many addresses, one walk per CU ----
 *
 * dwarf_getscopes walks a CU's DIEs from its top for every address it is asked about;
 * with thousands of addresses in a big CU that is most of the time spent. Instead the
 * addresses of a CU are sorted and its DIE tree is walked once, descending only into the
 * subprograms, inlined subroutines and lexical blocks that contain some of them (and the
 * namespaces that may hold definitions): each address ends with the offsets of
 * the subprogram and inlined subroutines containing it, outermost first. */

struct item {
    uint64_t va;
    uint32_t idx, depth;
    Dwarf_Off cu; /* 0: no CU covers it */
    Dwarf_Off chain[SC_ELF_MAX_FRAMES];
};

static int cmp_item(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    if (x->cu != y->cu)
        return x->cu < y->cu ? -1 : 1;
    return (x->va > y->va) - (x->va < y->va);
}

/* The first item with va >= lo. */
static uint32_t lower_bound(const struct item *it, uint32_t n, uint64_t lo)
{
    uint32_t a = 0, b = n;
    while (a < b) {
        uint32_t m = a + (b - a) / 2;
        if (it[m].va < lo)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

static void walk(Dwarf_Die *parent, struct item *it, uint32_t n, uint32_t depth, int level)
{
    Dwarf_Die c;
    if (level > 64 || dwarf_child(parent, &c) != 0)
        return;
    do {
        int tag = dwarf_tag(&c);
        int frame = tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
        if (frame || tag == DW_TAG_lexical_block) {
            int any = 0;
            Dwarf_Addr base, lo, hi;
            ptrdiff_t k = 0;
            while ((k = dwarf_ranges(&c, k, &base, &lo, &hi)) > 0)
                for (uint32_t j = lower_bound(it, n, lo); j < n && it[j].va < hi; j++) {
                    any = 1;
                    if (frame && depth < SC_ELF_MAX_FRAMES) {
                        it[j].chain[depth] = dwarf_dieoffset(&c);
                        it[j].depth = depth + 1;
                    }
                }
            if (any)
                walk(&c, it, n, frame ? depth + 1 : depth, level + 1);
        } else if (tag == DW_TAG_namespace || tag == DW_TAG_module) {
            /* clang puts C++ definitions in their namespace; types only declare members
             * (the definition, with the code, is outside with DW_AT_specification) */
            walk(&c, it, n, depth, level + 1);
        }
    } while (dwarf_siblingof(&c, &c) == 0);
}

/* The frames of one walked address, innermost first. */
static uint32_t item_frames(Dwarf *dw, Dwarf_Die *cu, Dwarf_Files *files, size_t nfiles,
                            const struct item *it, struct sc_elf_frame *fr)
{
    Dwarf_Line *ln = dwarf_getsrc_die(cu, it->va);
    const char *file = ln ? dwarf_linesrc(ln, NULL, NULL) : NULL;
    int lineno = 0;
    if (ln)
        dwarf_lineno(ln, &lineno);
    int64_t line = lineno;
    uint32_t n = 0;
    for (uint32_t k = it->depth; k > 0 && n < SC_ELF_MAX_FRAMES; k--) {
        Dwarf_Die d;
        if (!dwarf_offdie(dw, it->chain[k - 1], &d))
            break;
        if (dwarf_tag(&d) == DW_TAG_subprogram) {
            /* the real function: the symbol table names it, DWARF places it */
            fr[n++] = (struct sc_elf_frame){die_name(&d), file, line, 1};
            break;
        }
        fr[n++] = (struct sc_elf_frame){die_name(&d), file, line, 0};
        call_site(&d, files, nfiles, &file, &line);
    }
    if (n == 0 && file) /* a line table without a subprogram DIE */
        fr[n++] = (struct sc_elf_frame){NULL, file, line, 1};
    return n;
}

struct sc_elf_dwarf {
    int fd;
    Elf *e;
    Dwarf *dw;
};

int sc_elf_dwarf_open(int fd, struct sc_elf_dwarf **out, uint64_t *bytes, char *err)
{
    *out = NULL;
    *bytes = 0;
    struct sc_elf_dwarf *d = calloc(1, sizeof *d);
    if (!d) {
        close(fd);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    d->fd = fd;
    d->e = open_elf(fd, NULL, 0, 1);
    if (!d->e) {
        sc_elf_dwarf_close(d);
        return sc_errf(err, SC_EFORMAT, "not an ELF file");
    }
    d->dw = dwarf_begin_elf(d->e, DWARF_C_READ, NULL);
    if (!d->dw) {
        sc_elf_dwarf_close(d);
        return sc_errf(err, SC_ENOTFOUND, "no DWARF");
    }
    /* what the debug sections hold now (decompressed ones in memory) */
    size_t shstr = 0;
    elf_getshdrstrndx(d->e, &shstr);
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(d->e, scn))) {
        GElf_Shdr sh;
        const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(d->e, shstr, sh.sh_name) : NULL;
        if (name && (!strncmp(name, ".debug", 6) || !strncmp(name, ".zdebug", 7)))
            *bytes +=
                (sh.sh_flags & SHF_COMPRESSED) || name[1] == 'z' ? 4 * sh.sh_size : sh.sh_size;
    }
    *out = d;
    return 0;
}

void sc_elf_dwarf_close(struct sc_elf_dwarf *d)
{
    if (!d)
        return;
    if (d->dw)
        dwarf_end(d->dw);
    if (d->e)
        elf_end(d->e);
    if (d->fd >= 0)
        close(d->fd);
    free(d);
}

int sc_elf_lines(struct sc_elf_dwarf *d, const uint64_t *vaddrs, uint32_t n, sc_elf_lines_cb cb,
                 void *ctx, char *err)
{
    Dwarf *dw = d->dw;
    struct item *it = calloc((size_t)n + 1, sizeof *it);
    if (!it)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    struct cu_index ix = {NULL, 0, 0, 0};
    for (uint32_t i = 0; i < n; i++) {
        Dwarf_Die cu;
        it[i].va = vaddrs[i];
        it[i].idx = i;
        if (find_cu(dw, &ix, vaddrs[i], &cu))
            it[i].cu = dwarf_dieoffset(&cu);
    }
    qsort(it, n, sizeof *it, cmp_item);
    struct sc_elf_frame fr[SC_ELF_MAX_FRAMES];
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i;
        while (j < n && it[j].cu == it[i].cu)
            j++;
        Dwarf_Die cu;
        if (it[i].cu && dwarf_offdie(dw, it[i].cu, &cu)) {
            walk(&cu, it + i, j - i, 0, 0);
            Dwarf_Files *files = NULL;
            size_t nfiles = 0;
            if (dwarf_getsrcfiles(&cu, &files, &nfiles) != 0)
                files = NULL;
            for (uint32_t k = i; k < j; k++)
                cb(ctx, it[k].idx, fr, item_frames(dw, &cu, files, nfiles, &it[k], fr));
        } else {
            for (uint32_t k = i; k < j; k++)
                cb(ctx, it[k].idx, fr, 0);
        }
        i = j;
    }
    free(it);
    free(ix.v);
    return 0;
}

/* ---- call frame information, for unwind tables ---- */

/* The bytes of a section, inflated when compressed and small enough; NULL when it has none
 * (SHT_NOBITS: a debug file's copy) or they cannot be read. */
static const uint8_t *section_bytes(Elf_Scn *scn, const GElf_Shdr *sh, uint64_t max, size_t *len)
{
    *len = 0;
    if (sh->sh_type == SHT_NOBITS)
        return NULL;
    if (sh->sh_flags & SHF_COMPRESSED) {
        GElf_Chdr ch;
        /* libelf allocates what the header claims: refuse what a sane file would not hold */
        if (!gelf_getchdr(scn, &ch) || ch.ch_size > max || elf_compress(scn, 0, 0) != 1)
            return NULL;
    } else if (sh->sh_size > max) {
        return NULL;
    }
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || !d->d_buf || d->d_size == 0)
        return NULL;
    *len = d->d_size;
    return d->d_buf;
}

int sc_elf_cfi(int fd, const void *mem, size_t len, uint64_t max_section, sc_elf_cfi_cb cb,
               void *ctx, char *err)
{
    Elf *e = open_elf(fd, mem, len, 1);
    if (!e)
        return sc_errf(err, SC_EFORMAT, "not an ELF file");
    const char *ident = elf_getident(e, NULL);
    GElf_Ehdr eh;
    if (!ident || ident[EI_CLASS] != ELFCLASS64 || ident[EI_DATA] != ELFDATA2LSB ||
        !gelf_getehdr(e, &eh)) {
        elf_end(e);
        return sc_errf(err, SC_EUNSUPPORTED, "not a little-endian 64-bit ELF file");
    }
    struct sc_elf_cfi c;
    memset(&c, 0, sizeof c);
    c.machine = eh.e_machine;
    size_t nph = 0, shstr = 0;
    if (elf_getphdrnum(e, &nph) == 0)
        for (size_t i = 0; i < nph && c.nseg < SC_SYMTAB_MAX_SEGMENTS; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
                ph.p_filesz)
                c.seg[c.nseg++] = (struct sc_segment){ph.p_offset, ph.p_vaddr, ph.p_filesz};
        }
    struct sc_symtab bid;
    sc_symtab_init(&bid);
    elf_getshdrstrndx(e, &shstr);
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        const char *name = elf_strptr(e, shstr, sh.sh_name);
        if (!name)
            continue;
        if (sh.sh_type == SHT_NOTE && !bid.build_id_len)
            find_build_id(elf_getdata(scn, NULL), &bid);
        else if (!strcmp(name, ".eh_frame") && !c.eh_frame) {
            c.eh_frame = section_bytes(scn, &sh, max_section, &c.eh_frame_len);
            c.eh_frame_addr = sh.sh_addr;
        } else if (!strcmp(name, ".eh_frame_hdr") && !c.eh_frame_hdr) {
            c.eh_frame_hdr = section_bytes(scn, &sh, max_section, &c.eh_frame_hdr_len);
            c.eh_frame_hdr_addr = sh.sh_addr;
        } else if (!strcmp(name, ".debug_frame") && !c.debug_frame) {
            c.debug_frame = section_bytes(scn, &sh, max_section, &c.debug_frame_len);
        } else if (!strcmp(name, ".gopclntab") || !strcmp(name, ".go.buildinfo")) {
            c.is_go = 1;
        }
    }
    memcpy(c.build_id, bid.build_id, sizeof c.build_id);
    c.build_id_len = bid.build_id_len;
    int rc = cb(ctx, &c, err);
    elf_end(e);
    return rc;
}
