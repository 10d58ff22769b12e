/* localsym.c - a loaded profile's addresses named from the local binaries' DWARF, the way
 * go tool pprof (cmd/pprof's objTool) names them, so that `scorch top` prints what it does. */
#include "collect/localsym.h"
#include "model/budget.h"
#include "model/buf.h"
#include "model/error.h"
#include "model/hash.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct frame {
    const char *func, *file; /* valid until the DWARF is closed */
    int64_t line;
};

/* pprof's Mapping.Unsymbolizable: [vdso], linux-vdso, GPU memory */
static int unsymbolizable(struct sc_str f)
{
    const char *base = f.ptr + f.len;
    while (base > f.ptr && base[-1] != '/')
        base--;
    size_t bl = (size_t)(f.ptr + f.len - base);
    return (bl && base[0] == '[') || (bl >= 10 && memcmp(base, "linux-vdso", 10) == 0) ||
           (f.len >= 9 && memcmp(f.ptr, "/dev/dri/", 9) == 0) || memmem(f.ptr, f.len, "://", 3);
}

/* The link-time address of the first executable PT_LOAD (objfile's LoadAddress). */
static int load_address(Elf *e, uint64_t *out)
{
    size_t n;
    if (elf_getphdrnum(e, &n))
        return -1;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
            *out = ph.p_vaddr;
            return 0;
        }
    }
    return -1;
}

/* The DW_AT_name of the first subprogram at or below die (pre-order) whose ranges hold pc
 * and that has one. */
static const char *subprogram_name(Dwarf_Die *die, Dwarf_Addr pc, int depth)
{
    Dwarf_Die child;
    if (depth > 64 || dwarf_child(die, &child) != 0)
        return NULL;
    do {
        if (dwarf_tag(&child) == DW_TAG_subprogram && dwarf_haspc(&child, pc) == 1) {
            Dwarf_Attribute a;
            const char *n = dwarf_attr(&child, DW_AT_name, &a) ? dwarf_formstring(&a) : NULL;
            if (n)
                return n;
        }
        const char *n = subprogram_name(&child, pc, depth + 1);
        if (n)
            return n;
    } while (dwarf_siblingof(&child, &child) == 0);
    return NULL;
}

/* dwarfSourceLine: 1 with *f set when DWARF has a line for pc, else 0. */
static int source_line(Dwarf *dw, Dwarf_Addr pc, struct frame *f)
{
    Dwarf_Die cu;
    if (!dwarf_addrdie(dw, pc, &cu))
        return 0;
    Dwarf_Line *l = dwarf_getsrc_die(&cu, pc);
    if (!l)
        return 0;
    int line = 0;
    dwarf_lineno(l, &line);
    f->file = dwarf_linesrc(l, NULL, NULL);
    f->line = line;
    f->func = subprogram_name(&cu, pc, 0);
    return 1;
}

struct fnkey {
    struct sc_map64 index; /* (name << 32 | file) -> function index */
};

static int64_t function_of(struct sc_profile *p, struct fnkey *k, const struct frame *f)
{
    int64_t name = sc_profile_intern(p, f->func ? f->func : "", f->func ? strlen(f->func) : 0);
    int64_t file = sc_profile_intern(p, f->file ? f->file : "", f->file ? strlen(f->file) : 0);
    if (name < 0 || file < 0)
        return SC_ENOMEM;
    int added;
    uint32_t *slot =
        sc_map64_upsert(&k->index, (uint64_t)name << 32 | (uint64_t)file, p->nfunctions, &added);
    if (!slot)
        return SC_ENOMEM;
    if (!added)
        return *slot;
    int64_t fn = sc_profile_add_function(p, (uint32_t)name, (uint32_t)file);
    if (fn >= 0)
        p->functions[fn].system_name = (uint32_t)name;
    return fn;
}

/* Names the unnamed locations of mapping mi from its file. */
static int symbolize_mapping(struct sc_profile *p, uint32_t mi, struct fnkey *k, char *err)
{
    struct sc_mapping *m = &p->mappings[mi];
    struct sc_str fs = sc_profile_str(p, m->filename);
    if (!fs.len || unsymbolizable(fs))
        return 0;
    char *path = strndup(fs.ptr, fs.len);
    if (!path)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    free(path);
    if (fd < 0)
        return 0; /* not here: pprof says so on stderr and leaves the addresses */
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    Dwarf *dw = e && elf_kind(e) == ELF_K_ELF ? dwarf_begin_elf(e, DWARF_C_READ, NULL) : NULL;
    int rc = 0;
    if (dw) {
        uint64_t load, offset = 0;
        if (m->start != 0 && load_address(e, &load) == 0)
            offset = m->start - load;
        for (uint32_t i = 0; i < p->nlocations && !rc; i++) {
            struct sc_location *l = &p->locations[i];
            if (l->mapping != mi + 1 || l->nlines)
                continue;
            if ((rc = sc_budget_poll_every(i, err)))
                break;
            struct frame f = {0};
            if (!source_line(dw, l->address - offset, &f))
                continue;
            if (!f.func && !f.file && f.line == 0)
                continue;
            int64_t fn = function_of(p, k, &f);
            if (fn < 0 || sc_grow_array(&p->lines, &p->lines_cap, (uint64_t)p->nlines + 1,
                                        sizeof *p->lines)) {
                rc = sc_errf(err, SC_ENOMEM, "out of memory");
                break;
            }
            l->line_start = p->nlines;
            l->nlines = 1;
            l->is_folded = 0;
            p->lines[p->nlines++] = (struct sc_line){(uint32_t)fn + 1, f.line, 0};
            m->has_functions |= f.func != NULL && f.func[0] != 0;
            m->has_filenames |= f.file != NULL && f.file[0] != 0;
            m->has_line_numbers |= f.line != 0;
            m->has_inline_frames = 1;
        }
        dwarf_end(dw);
    }
    if (e)
        elf_end(e);
    close(fd);
    return rc;
}

int sc_symbolize_local(struct sc_profile *p, char *err)
{
    /* mappings symbolized before (or by the profile's writer) are left as they are */
    uint8_t *todo = calloc((size_t)p->nmappings + 1, 1);
    if (!todo)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < p->nlocations; i++) {
        const struct sc_location *l = &p->locations[i];
        if (l->mapping && !l->nlines)
            todo[l->mapping - 1] = 1;
    }
    struct fnkey k;
    sc_map64_init(&k.index);
    int rc = 0;
    for (uint32_t mi = 0; mi < p->nmappings && !rc; mi++) {
        const struct sc_mapping *m = &p->mappings[mi];
        if (todo[mi] && !m->has_functions && !m->has_filenames && !m->has_line_numbers)
            rc = symbolize_mapping(p, mi, &k, err);
    }
    sc_map64_release(&k.index);
    free(todo);
    return rc;
}
