/* svg.h - standalone interactive SVG flame graphs, the output of FlameGraph's flamegraph.pl. */
#ifndef SC_SVG_H
#define SC_SVG_H

#include <stdint.h>

#include "model/buf.h"
#include "model/profile.h"

/* Colour palettes, named and drawn as flamegraph.pl's --colors. hot, mem and io shade
 * every frame; java, js, perl and chain pick a hue per frame from its name (annotations
 * such as "_[j]" jit, "_[i]" inlined, "_[k]" kernel, "_[w]" waker, or name shapes such as
 * "java/" or "::"); the rest are one hue. */
/* flamegraph.pl's palettes, in the order of the choices of --colors (model/settings.def). */
enum sc_svg_palette {
    SC_SVG_HOT,
    SC_SVG_MEM,
    SC_SVG_IO,
    SC_SVG_WAKEUP,
    SC_SVG_CHAIN,
    SC_SVG_JAVA,
    SC_SVG_JS,
    SC_SVG_PERL,
    SC_SVG_RED,
    SC_SVG_GREEN,
    SC_SVG_BLUE,
    SC_SVG_AQUA,
    SC_SVG_YELLOW,
    SC_SVG_PURPLE,
    SC_SVG_ORANGE,
};

/* base_index value: treat the profile as a differential when it has the sample types
 * "base_samples" and "samples" and vi is "samples" (what folded "stack a b" lines decode
 * into, i.e. difffolded.pl output). */
#define SC_SVG_BASE_AUTO (-1)
/* base_index value: never differential. */
#define SC_SVG_BASE_NONE (-2)

/* Rendering options; sc_svg_opts_init() sets flamegraph.pl's defaults. Strings are borrowed
 * and may be NULL for their default. */
struct sc_svg_opts {
    const char *title;           /* NULL: "Flame Graph", "Icicle Graph" (inverted), "Flame Chart" */
    const char *subtitle;        /* NULL: none */
    const char *countname;       /* NULL: "samples" for counts, else the sample type's unit */
    const char *nametype;        /* prefix of the hover details line; NULL: "Function:" */
    const char *fonttype;        /* NULL: "Verdana" */
    const char *notes;           /* an XML comment in the output; NULL: none */
    const char *bgcolors;        /* yellow, blue, green, grey or #rrggbb; NULL: by palette */
    int width;                   /* image width in px (1200) */
    int frame_height;            /* px per frame (16) */
    double font_size;            /* px (12) */
    double font_width;           /* average glyph width relative to font_size (0.59) */
    double min_width;            /* frames narrower than this many px are not drawn (0.1) */
    int min_width_pct;           /* min_width is a percentage of the total instead of px */
    enum sc_svg_palette palette; /* SC_SVG_HOT */
    int hash;                    /* colours from flamegraph.pl's --hash name hash */
    int inverted;                /* icicle graph: root at the top */
    int reverse;                 /* reverse every stack (leaf becomes root) before merging */
    int negate;                  /* differential: swap red and blue, negate the deltas */
    int flamechart;              /* keep sample order, merge only adjacent samples */
    int base_index;              /* differential base value column, SC_SVG_BASE_AUTO or _NONE */
    int64_t total;               /* full width stands for this much when larger than the sum; 0 */
    double factor;               /* counts are multiplied by this in titles (1) */
};

void sc_svg_opts_init(struct sc_svg_opts *o);

/* Checks the options that can be wrong (numbers out of range, unknown bgcolors) so a
 * command line can refuse them before reading its input. 0 or SC_EINVAL with detail. */
int sc_svg_opts_check(const struct sc_svg_opts *o, char *err);

/* Appends to out an SVG flame graph of p's value column vi: frames merged by call path,
 * children in byte order of their names, widths proportional to values, the root frame
 * "all" at the bottom (top when inverted). Each frame is a <g> with a <title>
 * "name (1,234 samples, 5.67%)", a <rect> and a <text>; an embedded script adds hover
 * details, click to zoom, search with the matched percentage, and keeps zoom and search in
 * the URL's fragment. Frames narrower than o->min_width are not drawn; their ancestors
 * still include them. Samples with values <= 0 are left out.
 *
 * Differential profiles (see base_index): widths are the vi values, colours go red where
 * a frame's own value grew and blue where it shrank (relative to the largest change), and
 * titles add the change as a percentage of the total: "name (N samples, P%; +D%)".
 *
 * Returns the number of frames drawn (> 0), or 0 when there is nothing to draw (then the
 * SVG says "no data"), or a negative SC_E* code with detail in err. */
int sc_svg_write(const struct sc_profile *p, int vi, const struct sc_svg_opts *o,
                 struct sc_buf *out, char *err);

#endif
