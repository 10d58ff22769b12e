/* store.c - what every store backend shares: ids, canonical labels, type rules, options. */
#include "store/store_int.h"
#include "model/error.h"
#include "model/hash.h"

#include <stdlib.h>
#include <string.h>

void sc_store_opts_init(struct sc_store_opts *o)
{
    memset(o, 0, sizeof *o);
    o->dir = "./data";
    o->retention_ns = (int64_t)30 * 24 * 3600 * 1000000000LL;
    o->zstd_level = 3;
    o->durable = 1;
    o->background = 1;
}

/* A frame id is XXH3 over 32 bytes: the XXH3 of the function name, of the file name and
 * of the binary, and the line, each 8 bytes little-endian. Hashing the strings separately
 * lets a writer hash each function name once per profile, and no choice of strings can
 * collide by shifting bytes between fields. */
uint64_t sc_frame_id_from(uint64_t hfunction, uint64_t hfile, uint64_t hbinary, int64_t line)
{
    uint64_t parts[4] = {hfunction, hfile, hbinary, (uint64_t)line};
    unsigned char b[32];
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 8; k++)
            b[8 * i + k] = (unsigned char)(parts[i] >> (8 * k));
    return sc_hash64(b, sizeof b);
}

uint64_t sc_frame_id(const char *function, size_t flen, const char *file, size_t filelen,
                     int64_t line, const char *binary, size_t blen)
{
    return sc_frame_id_from(sc_hash64(function, flen), sc_hash64(file, filelen),
                            sc_hash64(binary, blen), line);
}

int sc_type_is_gauge(const char *profile, const char *sample_type)
{
    (void)profile;
    return !strcmp(sample_type, "inuse_space") || !strcmp(sample_type, "inuse_objects") ||
           !strcmp(sample_type, "goroutine") || !strcmp(sample_type, "goroutines") ||
           !strcmp(sample_type, "threadcreate");
}
