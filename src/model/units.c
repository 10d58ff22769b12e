/* units.c - pprof-compatible unit scaling and value labels. */
#include "model/units.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

struct unit {
    const char *name;       /* canonical */
    const char *aliases[4]; /* lower case, singular */
    double factor;          /* in the family's base unit */
};

struct family {
    const struct unit *units;
    int n;
    const struct unit *def; /* used when nothing else fits */
};

static const struct unit memory[] = {
    {"B", {"b", "byte"}, 1},
    {"kB", {"kb", "kbyte", "kilobyte"}, 1024.0},
    {"MB", {"mb", "mbyte", "megabyte"}, 1048576.0},
    {"GB", {"gb", "gbyte", "gigabyte"}, 1073741824.0},
    {"TB", {"tb", "tbyte", "terabyte"}, 1099511627776.0},
    {"PB", {"pb", "pbyte", "petabyte"}, 1125899906842624.0},
};

static const struct unit timeu[] = {
    {"ns", {"ns", "nanosecond"}, 1},    {"us", {"\xce\xbcs", "us", "microsecond"}, 1e3},
    {"ms", {"ms", "millisecond"}, 1e6}, {"s", {"s", "sec", "second"}, 1e9},
    {"hrs", {"hour", "hr"}, 3600e9},
};

static const struct unit time_default = {"s", {0}, 1e9};

static const struct family families[] = {
    {memory, 6, &memory[0]},
    {timeu, 5, &time_default},
};

/* pprof's sniffUnit: lower case, drop a trailing 's' from names longer than 2. */
static const struct unit *sniff(const struct family *f, const char *name)
{
    char low[32];
    size_t n = strlen(name);
    if (n >= sizeof low)
        return NULL;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)tolower((unsigned char)name[i]);
    low[n] = 0;
    if (n > 2 && low[n - 1] == 's')
        low[n - 1] = 0;
    for (int i = 0; i < f->n; i++)
        for (int j = 0; j < 4 && f->units[i].aliases[j]; j++)
            if (strcmp(low, f->units[i].aliases[j]) == 0)
                return &f->units[i];
    return NULL;
}

double sc_units_scale(int64_t value, const char *from, const char *to, const char **out_unit)
{
    if (value < 0 && value != INT64_MIN) {
        double v = sc_units_scale(-value, from, to, out_unit);
        return -v;
    }
    for (size_t k = 0; k < sizeof families / sizeof families[0]; k++) {
        const struct family *f = &families[k];
        const struct unit *fu = sniff(f, from);
        if (!fu)
            continue;
        double v = (double)value * fu->factor;
        if (!strcmp(to, "minimum") || !strcmp(to, "auto")) {
            const struct unit *best = NULL;
            for (int i = 0; i < f->n; i++)
                if ((!best || f->units[i].factor >= best->factor) && v / f->units[i].factor >= 1.0)
                    best = &f->units[i];
            if (!best)
                best = f->def;
            *out_unit = best->name;
            return v / best->factor;
        }
        const struct unit *tu = sniff(f, to);
        if (!tu)
            tu = f->def;
        *out_unit = tu->name;
        return v / tu->factor;
    }
    if (!strcmp(to, "count") || !strcmp(to, "sample") || !strcmp(to, "unit") ||
        !strcmp(to, "minimum") || !strcmp(to, "auto"))
        *out_unit = "";
    else
        *out_unit = to;
    return (double)value;
}

void sc_units_label(struct sc_buf *out, int64_t value, const char *from, const char *to)
{
    const char *u;
    double v = sc_units_scale(value, from, to, &u);
    char tmp[64];
    int n = snprintf(tmp, sizeof tmp, "%.2f", v);
    if (n >= 3 && !strcmp(tmp + n - 3, ".00")) {
        n -= 3;
        tmp[n] = 0;
    }
    if (!strcmp(tmp, "0") || !strcmp(tmp, "-0")) {
        sc_buf_putc(out, '0');
        return;
    }
    sc_buf_append(out, tmp, (size_t)n);
    sc_buf_puts(out, u);
}

const char *sc_units_pick(int64_t min, int64_t max, const char *from)
{
    const char *min_unit, *max_unit, *unit;
    sc_units_scale(min, from, "minimum", &min_unit);
    sc_units_scale(max, from, "minimum", &max_unit);
    unit = min_unit;
    if (strcmp(min_unit, max_unit) != 0 && (double)min * 100 < (double)max)
        sc_units_scale(min * 100, from, "minimum", &unit);
    return *unit ? unit : from;
}

void sc_units_percent(struct sc_buf *out, int64_t value, int64_t total)
{
    double r = 0;
    if (total != 0)
        r = fabs((double)value / (double)total) * 100;
    if (r >= 99.95 && r <= 100.05)
        sc_buf_puts(out, "  100%");
    else if (r >= 1.0)
        sc_buf_printf(out, "%5.2f%%", r);
    else
        sc_buf_printf(out, "%5.2g%%", r);
}
