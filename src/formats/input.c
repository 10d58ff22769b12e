/* input.c - whole-input reading, gzip through libdeflate, dispatch to the format table. */
#include "formats/input.h"
#include "formats/legacy.h"
#include "formats/pprof.h"
#include "model/error.h"

#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void sc_input_release(struct sc_input *in)
{
    if (in->data) {
        if (in->kind == SC_INPUT_MMAP)
            munmap(in->data, in->len);
        else if (in->kind == SC_INPUT_MALLOC)
            free(in->data);
    }
    memset(in, 0, sizeof *in);
}

static int read_fd(int fd, const char *name, uint64_t max, struct sc_input *in, char *err)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return sc_errf(err, SC_ENOMEM, "cannot read '%s': out of memory", name);
    for (;;) {
        if (len == cap) {
            if (cap >= max) {
                free(buf);
                return sc_errf(err, SC_ELIMIT, "cannot read '%s': more than %llu bytes", name,
                               (unsigned long long)max);
            }
            /* not sc_grow_array: bytes up to max (past 2^31), the last step clipped to it */
            size_t ncap = cap * 2 > max ? (size_t)max : cap * 2;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                return sc_errf(err, SC_ENOMEM, "cannot read '%s': out of memory", name);
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            free(buf);
            return sc_errf(err, SC_EIO, "cannot read '%s': %s", name, strerror(e));
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    in->data = buf;
    in->len = len;
    in->kind = SC_INPUT_MALLOC;
    return 0;
}

int sc_input_read(const char *path, uint64_t max, struct sc_input *in, char *err)
{
    memset(in, 0, sizeof *in);
    if (!path || strcmp(path, "-") == 0)
        return read_fd(0, "-", max, in, err);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sc_errf(err, errno == ENOENT ? SC_ENOTFOUND : SC_EIO, "cannot read '%s': %s", path,
                       strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return sc_errf(err, SC_EIO, "cannot read '%s': %s", path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return sc_errf(err, SC_EINVAL, "cannot read '%s': is a directory", path);
    }
    int rc;
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
        if ((uint64_t)st.st_size > max) {
            close(fd);
            return sc_errf(err, SC_ELIMIT, "cannot read '%s': %lld bytes is more than %llu", path,
                           (long long)st.st_size, (unsigned long long)max);
        }
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (p != MAP_FAILED) {
            close(fd);
            in->data = p;
            in->len = (size_t)st.st_size;
            in->kind = SC_INPUT_MMAP;
            return 0;
        }
    }
    rc = read_fd(fd, path, max, in, err);
    close(fd);
    return rc;
}

int sc_is_gzip(const void *buf, size_t n)
{
    const unsigned char *b = buf;
    return n >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

uint64_t sc_gzip_claim(const void *buf, size_t n)
{
    if (!sc_is_gzip(buf, n) || n < 18)
        return 0;
    const unsigned char *t = (const unsigned char *)buf + n - 4;
    uint64_t isize =
        (uint64_t)t[0] | (uint64_t)t[1] << 8 | (uint64_t)t[2] << 16 | (uint64_t)t[3] << 24;
    return isize / 1032 <= n ? isize : 0;
}

int sc_gunzip(const void *in, size_t n, uint64_t max_out, void **out, size_t *outlen, char *err)
{
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    if (!d)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    const unsigned char *src = in;
    size_t cap = 0, len = 0;
    char *buf = NULL;
    int rc = 0;
    /* libdeflate inflates whole buffers, so size the output from the ISIZE trailer (the
     * length mod 2^32, a hint only) and grow on LIBDEFLATE_INSUFFICIENT_SPACE; a loop
     * handles concatenated members. */
    while (n > 0) {
        if (n < 18) {
            rc = sc_errf(err, SC_EFORMAT, "truncated gzip data");
            break;
        }
        /* an impossible ISIZE is a lie that would have a few hostile bytes allocate up to
         * max_out at once: fall back to growing */
        uint64_t claim = sc_gzip_claim(src, n);
        size_t guess = claim ? (size_t)claim : 4096;
        size_t want = len + guess;
        if (want < len + n * 2)
            want = len + n * 2; /* ISIZE of a multi-member file describes the last member */
        for (;;) {
            if (want > max_out)
                want = (size_t)max_out;
            /* not sc_grow_array: sized by the gzip's claim, bytes up to max_out (past 2^31) */
            if (want > cap) {
                char *nb = realloc(buf, want + 1);
                if (!nb) {
                    rc = sc_errf(err, SC_ENOMEM, "out of memory inflating gzip data");
                    break;
                }
                buf = nb;
                cap = want;
            }
            size_t in_used = 0, got = 0;
            enum libdeflate_result r =
                libdeflate_gzip_decompress_ex(d, src, n, buf + len, cap - len, &in_used, &got);
            if (r == LIBDEFLATE_SUCCESS) {
                len += got;
                src += in_used;
                n -= in_used;
                break;
            }
            if (r != LIBDEFLATE_INSUFFICIENT_SPACE) {
                rc = sc_errf(err, SC_EFORMAT, "corrupt gzip data");
                break;
            }
            if (cap >= max_out) {
                rc = sc_errf(err, SC_ELIMIT, "gzip data inflates to more than %llu bytes",
                             (unsigned long long)max_out);
                break;
            }
            want = cap * 2 > cap ? cap * 2 : cap + 1;
        }
        if (rc)
            break;
        /* trailing zero padding after the last member is common (tar, some writers) */
        while (n > 0 && *src == 0) {
            src++;
            n--;
        }
        if (n > 0 && !sc_is_gzip(src, n)) {
            rc = sc_errf(err, SC_EFORMAT, "trailing garbage after gzip data");
            break;
        }
    }
    libdeflate_free_decompressor(d);
    if (rc) {
        free(buf);
        return rc;
    }
    if (!buf) {
        buf = malloc(1);
        if (!buf)
            return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    buf[len] = 0;
    *out = buf;
    *outlen = len;
    return 0;
}

int sc_gzip(const void *in, size_t n, int level, struct sc_buf *out)
{
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
    if (!c)
        return SC_ENOMEM;
    size_t bound = libdeflate_gzip_compress_bound(c, n);
    int rc = sc_buf_reserve(out, bound);
    if (rc == 0) {
        size_t got = libdeflate_gzip_compress(c, in, n, out->data + out->len, bound);
        if (got == 0)
            rc = SC_EINTERNAL;
        else
            out->len += got;
    }
    libdeflate_free_compressor(c);
    return rc;
}

/* Replaces gzip data in *in by the bytes it inflates to. */
static int inflate(struct sc_input *in, const struct sc_limits *lim, char *err)
{
    if (!sc_is_gzip(in->data, in->len))
        return 0;
    void *raw;
    size_t rawlen;
    int rc = sc_gunzip(in->data, in->len, lim->max_decompressed, &raw, &rawlen, err);
    sc_input_release(in);
    if (rc)
        return rc;
    in->data = raw;
    in->len = rawlen;
    in->kind = SC_INPUT_MALLOC;
    return 0;
}

/* sc_decode() after the gunzip. */
static int decode_plain(struct sc_input *in, const struct sc_decode_opts *o,
                        const struct sc_limits *lim, struct sc_profile **out, char *err,
                        enum sc_format *fmt)
{
    struct sc_profile *p = sc_profile_new();
    if (!p) {
        sc_input_release(in);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    void *data = in->data;
    size_t len = in->len;
    int rc;
    /* The profile adopts the bytes first, so its strings may point into them. */
    if (in->kind != SC_INPUT_BORROWED && data) {
        rc = sc_profile_adopt(p, data, in->kind == SC_INPUT_MMAP ? len : 0);
        memset(in, 0, sizeof *in);
        if (rc) {
            sc_profile_free(p);
            return sc_errf(err, rc, "out of memory");
        }
    }
    enum sc_format f = o->format ? o->format : sc_detect_format(data, len);
    if (fmt)
        *fmt = f;
    const struct sc_format_def *d = sc_format_get(f);
    rc = d ? d->decode(data, len, o, lim, p, err) : sc_format_refuse(data, len, err);
    if (rc) {
        sc_profile_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int sc_decode(struct sc_input *in, const struct sc_decode_opts *o, struct sc_profile **out,
              char *err)
{
    static const struct sc_decode_opts defaults;
    if (!o)
        o = &defaults;
    const struct sc_limits *lim = o->limits ? o->limits : &sc_limits_cli;
    *out = NULL;
    if (in->len > lim->max_input) {
        int rc = sc_errf(err, SC_ELIMIT, "input of %zu bytes is more than %llu", in->len,
                         (unsigned long long)lim->max_input);
        sc_input_release(in);
        return rc;
    }
    int rc = inflate(in, lim, err);
    return rc ? rc : decode_plain(in, o, lim, out, err, NULL);
}

static sc_symbolize_fn symbolize;

void sc_input_set_symbolizer(sc_symbolize_fn fn)
{
    symbolize = fn;
}

int sc_load(const char *path, const struct sc_decode_opts *o, struct sc_profile **out, char *err)
{
    static const struct sc_decode_opts defaults;
    if (!o)
        o = &defaults;
    const struct sc_limits *lim = o->limits ? o->limits : &sc_limits_cli;
    const char *name = path && strcmp(path, "-") ? path : "-";
    *out = NULL;
    struct sc_input in;
    int rc = sc_input_read(path, lim->max_input, &in, err);
    if (rc)
        return rc; /* says "cannot read 'path'" already */
    rc = inflate(&in, lim, err);
    if (!rc && in.len == 0 && !o->format) {
        /* as go tool pprof: an empty file is no profile (but an empty perf script is a
         * perf script without samples) */
        sc_input_release(&in);
        rc = sc_errf(err, SC_EFORMAT, "empty input");
    }
    enum sc_format f = SC_FMT_UNKNOWN;
    if (!rc)
        rc = decode_plain(&in, o, lim, out, err, &f);
    if (!rc && (*out)->nsample_types == 0)
        rc = sc_errf(err, SC_EFORMAT, "profile has no sample types");
    /* as go tool pprof: symbolize, then drop the frames the profile says are the
     * profiler's or the allocator's */
    if (!rc && (f == SC_FMT_LEGACY || f == SC_FMT_PPROF) && symbolize)
        rc = symbolize(*out, err);
    if (!rc && f == SC_FMT_LEGACY)
        rc = sc_legacy_prune(*out, err);
    /* the samples a lazy profile decodes on each walk say where they come from too */
    if (!rc && sc_pprof_name_input(*out, name))
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    if (rc) {
        sc_profile_free(*out);
        *out = NULL;
        return sc_errwrap(err, rc, "cannot read '%s'", name);
    }
    return 0;
}
