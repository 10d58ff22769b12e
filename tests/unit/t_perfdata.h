/* t_perfdata.h - perf.data files written record by record, as perf record lays them out
 * (test_perfdata.c, test_faults.c). Header-only. */
#ifndef T_PERFDATA_H
#define T_PERFDATA_H

#include <stdint.h>
#include <string.h>

#include "model/buf.h"

enum {
    S_IP = 1,
    S_TID = 2,
    S_TIME = 4,
    S_CALLCHAIN = 32,
    S_PERIOD = 256,
    S_REGS_USER = 1 << 12,
    S_STACK_USER = 1 << 13
};
/* x86-64's bp, sp and ip: what the decoder walks a user stack with */
#define DWARF_REGS ((uint64_t)1 << 6 | (uint64_t)1 << 7 | (uint64_t)1 << 8)
#define CTX_KERNEL ((uint64_t)-128)
#define CTX_USER ((uint64_t)-512)

static inline void put32(struct sc_buf *b, uint32_t v)
{
    sc_buf_append(b, &v, 4);
}

static inline void put64(struct sc_buf *b, uint64_t v)
{
    sc_buf_append(b, &v, 8);
}

static inline void header(struct sc_buf *b, uint32_t type, uint16_t misc, size_t size)
{
    put32(b, type);
    put32(b, (uint32_t)misc | (uint32_t)size << 16);
}

/* A string field padded to 8 bytes (with its NUL). */
static inline void putstr(struct sc_buf *b, const char *s, size_t pad)
{
    size_t n = strlen(s);
    sc_buf_append(b, s, n);
    for (size_t i = n; i < pad; i++)
        sc_buf_append(b, "", 1);
}

static inline size_t padded(const char *s)
{
    return (strlen(s) + 8) & ~(size_t)7;
}

/* sample_id_all: pid/tid and time after a record's fields */
static inline void id_all(struct sc_buf *b, uint32_t pid, uint32_t tid, uint64_t t)
{
    put32(b, pid);
    put32(b, tid);
    put64(b, t);
}

static inline void comm(struct sc_buf *b, uint32_t pid, uint32_t tid, const char *c, uint64_t t)
{
    header(b, 3, 0, 8 + 8 + padded(c) + 16);
    put32(b, pid);
    put32(b, tid);
    putstr(b, c, padded(c));
    id_all(b, pid, tid, t);
}

static inline void mmap2(struct sc_buf *b, uint32_t pid, uint64_t start, uint64_t len,
                         const char *f, uint64_t t)
{
    header(b, 10, 2 /* user */, 72 + padded(f) + 16);
    put32(b, pid);
    put32(b, pid);
    put64(b, start);
    put64(b, len);
    put64(b, 0);
    put32(b, 0);
    put32(b, 0);
    put64(b, 0);
    put64(b, 0);
    put32(b, 5); /* PROT_READ | PROT_EXEC */
    put32(b, 2);
    putstr(b, f, padded(f));
    id_all(b, pid, pid, t);
}

static inline void fork_rec(struct sc_buf *b, uint32_t pid, uint32_t ppid, uint64_t t)
{
    header(b, 7, 0, 32 + 16);
    put32(b, pid);
    put32(b, ppid);
    put32(b, pid);
    put32(b, ppid);
    put64(b, t);
    id_all(b, pid, pid, t);
}

static inline void sample(struct sc_buf *b, uint32_t pid, uint32_t tid, uint64_t t, uint64_t period,
                          const uint64_t *chain, uint64_t nr)
{
    header(b, 9, 2, 8 + 8 + 8 + 8 + 8 + 8 + 8 * (size_t)nr);
    put64(b, nr ? chain[nr - 1] : 0);
    put32(b, pid);
    put32(b, tid);
    put64(b, t);
    put64(b, period);
    put64(b, nr);
    for (uint64_t i = 0; i < nr; i++)
        put64(b, chain[i]);
}

/* A sample with the user registers bp, sp, ip (in that order: their bits' order) and a
 * user stack of size bytes of which dyn were copied, as --call-graph dwarf records them
 * (in a file_with S_REGS_USER | S_STACK_USER and DWARF_REGS). */
static inline void sample_dwarf(struct sc_buf *b, uint32_t pid, uint32_t tid, uint64_t t,
                                const uint64_t *chain, uint64_t nr, const uint64_t regs[3],
                                uint64_t size, uint64_t dyn)
{
    header(b, 9, 2, 8 + 8 + 8 + 8 + 8 + 8 + 8 * (size_t)nr + 8 + 24 + 8 + size + 8);
    put64(b, regs[2]);
    put32(b, pid);
    put32(b, tid);
    put64(b, t);
    put64(b, 1);
    put64(b, nr);
    for (uint64_t i = 0; i < nr; i++)
        put64(b, chain[i]);
    put64(b, 2); /* PERF_SAMPLE_REGS_ABI_64 */
    for (int i = 0; i < 3; i++)
        put64(b, regs[i]);
    put64(b, size);
    for (uint64_t i = 0; i < size; i++)
        sc_buf_append(b, "", 1);
    put64(b, dyn);
}

/* A whole file: header, one attr named by EVENT_DESC, the records in data; the attr samples
 * the fields more names besides the usual, with the user registers regs_user. */
static inline void file_with(struct sc_buf *out, const struct sc_buf *data, uint64_t more,
                             uint64_t regs_user)
{
    const uint64_t attr_size = 128 + 16;
    sc_buf_append(out, "PERFILE2", 8);
    put64(out, 104);
    put64(out, attr_size);
    put64(out, 104);               /* attrs */
    put64(out, attr_size);         /* one */
    put64(out, 104 + attr_size);   /* data */
    put64(out, data->len);         /* */
    put64(out, 0);                 /* event types */
    put64(out, 0);                 /* */
    put64(out, (uint64_t)1 << 12); /* features: EVENT_DESC */
    put64(out, 0);
    put64(out, 0);
    put64(out, 0);
    /* the attr: software cpu-clock, sample_id_all */
    size_t a0 = out->len;
    put32(out, 1);
    put32(out, 128);
    put64(out, 0);
    put64(out, 1000);
    put64(out, S_IP | S_TID | S_TIME | S_CALLCHAIN | S_PERIOD | more);
    put64(out, 0);
    put64(out, (uint64_t)1 << 18);
    while (out->len < a0 + 80)
        sc_buf_append(out, "", 1);
    put64(out, regs_user);
    while (out->len < a0 + 128)
        sc_buf_append(out, "", 1);
    put64(out, 0); /* ids: none */
    put64(out, 0);
    sc_buf_append(out, data->data, data->len);
    /* the features' table, then EVENT_DESC */
    uint64_t desc = out->len + 16;
    put64(out, desc);
    put64(out, 8 + 128 + 8 + 16);
    put32(out, 1);
    put32(out, 128);
    for (int i = 0; i < 128; i++)
        sc_buf_append(out, "", 1);
    put32(out, 0);
    put32(out, 16);
    putstr(out, "cpu-clock:u", 16);
}

static inline void file(struct sc_buf *out, const struct sc_buf *data)
{
    file_with(out, data, 0, 0);
}

#endif
