/* cmd_flamegraph.c - `scorch flamegraph`: an interactive SVG, a drop-in for flamegraph.pl. */
#include "cli/cli.h"
#include "formats/input.h"
#include "formats/svg.h"
#include "model/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: scorch flamegraph [options] [FILE] > graph.svg\n"
    "\n"
    "Draws a standalone interactive SVG flame graph: hover for details, click a frame to\n"
    "zoom, Ctrl-F (or Search) to highlight a regular expression and see the share of\n"
    "samples it matches; the view is kept in the URL fragment. FILE holds folded stacks\n"
    "(\"a;b;c 12\" lines) or any other format scorch reads, gzipped or not; '-' or\n"
    "no FILE reads stdin. Folded lines with two counts (\"stack before after\", as\n"
    "difffolded.pl and `scorch diff-folded` print) make a differential graph: widths from\n"
    "the second count, red where a frame's own samples grew, blue where they shrank.\n"
    "\n"
    "A drop-in for FlameGraph's flamegraph.pl: it takes the same options, which may be\n"
    "written -opt or --opt, with a value as --opt=V or --opt V, and abbreviated when\n"
    "unambiguous (--color=java).\n"
    "\n"
    "  --title TEXT       title (default \"Flame Graph\", \"Icicle Graph\" with --inverted)\n"
    "  --subtitle TEXT    second line under the title\n"
    "  --width PX         image width (default 1200)\n"
    "  --height PX        height of each frame (default 16)\n"
    "  --minwidth PX      frames narrower than this are not drawn (their samples still\n"
    "                     count in their callers); \"N%\" means N percent of the total\n"
    "                     (default 0.1)\n"
    "  --fonttype FONT    font family (default Verdana)\n"
    "  --fontsize PX      font size (default 12)\n"
    "  --fontwidth N      average character width relative to the font size, for\n"
    "                     fitting labels (default 0.59)\n"
    "  --countname TEXT   what the values count (default \"samples\"; for pprof input the\n"
    "                     sample type's unit, e.g. \"nanoseconds\" or \"bytes\")\n"
    "  --nametype TEXT    label before the hovered frame's details (default \"Function:\")\n"
    "  --colors PALETTE   hot (default), mem, io, wakeup, chain, java, js, perl, red, green,\n"
    "                     blue, aqua, yellow, purple, orange; java, js and perl colour by\n"
    "                     the kind of frame (annotations _[j] _[i] _[k] _[w] or name shape)\n"
    "  --bgcolors COLOR   background: yellow, blue, green, grey or #rrggbb (default by\n"
    "                     palette)\n"
    "  --hash             colours from flamegraph.pl's weighted name hash instead of its\n"
    "                     default per-name colours (both are the same for a name in every\n"
    "                     graph)\n"
    "  --reverse          reverse each stack before merging (leaf functions at the root)\n"
    "  --inverted         icicle graph: root at the top, stacks growing down\n"
    "  --flamechart       flame chart: keep the input's order (time), merge only adjacent\n"
    "                     stacks\n"
    "  --negate           differential: swap red and blue and negate the changes shown\n"
    "  --total N          full width stands for N when N exceeds the sum of the values\n"
    "  --factor F         multiply the counts shown in titles by F (default 1)\n"
    "  --notes TEXT       add TEXT as an XML comment\n"
    "  --sample-index NAME  value to draw for profiles with several (pprof sample types\n"
    "                     such as alloc_space); default: the profile's default type\n"
    "  -o, --output FILE  write the SVG to FILE instead of stdout\n"
    "  -h, --help         this text\n"
    "\n"
    "Accepted and ignored, for compatibility: --random and --cp (colours are always the\n"
    "same per function name, across graphs), --encoding (output is always UTF-8),\n"
    "--nameattr FILE (per-function links and attributes are not supported; a warning says\n"
    "so).\n"
    "\n"
    "Unlike flamegraph.pl, children are ordered by their names' bytes in one merged tree,\n"
    "the root frame shows \"all\", searching skips the root, and an unknown --colors is an\n"
    "error rather than a black graph.\n"
    "\n"
    "Exit status: 0 on success; 2 for usage errors and, as flamegraph.pl does, when the\n"
    "input has no samples (then the SVG says \"No data\" and a warning goes to stderr);\n"
    "1 for other errors.\n";

enum opt_id {
    O_TITLE,
    O_SUBTITLE,
    O_WIDTH,
    O_HEIGHT,
    O_MINWIDTH,
    O_FONTTYPE,
    O_FONTSIZE,
    O_FONTWIDTH,
    O_COUNTNAME,
    O_NAMETYPE,
    O_COLORS,
    O_BGCOLORS,
    O_HASH,
    O_RANDOM,
    O_CP,
    O_REVERSE,
    O_INVERTED,
    O_FLAMECHART,
    O_NEGATE,
    O_TOTAL,
    O_FACTOR,
    O_NOTES,
    O_ENCODING,
    O_NAMEATTR,
    O_SAMPLE_INDEX,
    O_OUTPUT,
    O_HELP,
};

static const struct opt {
    const char *name;
    enum opt_id id;
    int has_arg;
} opts[] = {
    [O_TITLE] = {"title", O_TITLE, 1},
    [O_SUBTITLE] = {"subtitle", O_SUBTITLE, 1},
    [O_WIDTH] = {"width", O_WIDTH, 1},
    [O_HEIGHT] = {"height", O_HEIGHT, 1},
    [O_MINWIDTH] = {"minwidth", O_MINWIDTH, 1},
    [O_FONTTYPE] = {"fonttype", O_FONTTYPE, 1},
    [O_FONTSIZE] = {"fontsize", O_FONTSIZE, 1},
    [O_FONTWIDTH] = {"fontwidth", O_FONTWIDTH, 1},
    [O_COUNTNAME] = {"countname", O_COUNTNAME, 1},
    [O_NAMETYPE] = {"nametype", O_NAMETYPE, 1},
    [O_COLORS] = {"colors", O_COLORS, 1},
    [O_BGCOLORS] = {"bgcolors", O_BGCOLORS, 1},
    [O_HASH] = {"hash", O_HASH, 0},
    [O_RANDOM] = {"random", O_RANDOM, 0},
    [O_CP] = {"cp", O_CP, 0},
    [O_REVERSE] = {"reverse", O_REVERSE, 0},
    [O_INVERTED] = {"inverted", O_INVERTED, 0},
    [O_FLAMECHART] = {"flamechart", O_FLAMECHART, 0},
    [O_NEGATE] = {"negate", O_NEGATE, 0},
    [O_TOTAL] = {"total", O_TOTAL, 1},
    [O_FACTOR] = {"factor", O_FACTOR, 1},
    [O_NOTES] = {"notes", O_NOTES, 1},
    [O_ENCODING] = {"encoding", O_ENCODING, 1},
    [O_NAMEATTR] = {"nameattr", O_NAMEATTR, 1},
    [O_SAMPLE_INDEX] = {"sample-index", O_SAMPLE_INDEX, 1},
    [O_OUTPUT] = {"output", O_OUTPUT, 1},
    [O_HELP] = {"help", O_HELP, 0},
};

/* Finds an option by name or unambiguous prefix, as Perl's Getopt::Long does. */
static const struct opt *find_opt(const char *name, size_t len, int *ambiguous)
{
    const struct opt *found = NULL;
    int n = 0;
    *ambiguous = 0;
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        if (strncmp(opts[i].name, name, len) != 0)
            continue;
        if (strlen(opts[i].name) == len)
            return &opts[i];
        found = &opts[i];
        n++;
    }
    if (n > 1) {
        *ambiguous = 1;
        return NULL;
    }
    return found;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || v != v)
        return -1;
    *out = v;
    return 0;
}

int cmd_flamegraph(int argc, char **argv)
{
    const char *cmd = argv[0];
    struct sc_svg_opts o;
    sc_svg_opts_init(&o);
    const char *input = NULL, *output = NULL, *sample_index = NULL;
    int only_args = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_args || a[0] != '-' || a[1] == 0) {
            if (input)
                return cli_usage(cmd, "one input file at most ('%s' and '%s' given)", input, a);
            input = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_args = 1;
            continue;
        }
        const struct opt *op;
        const char *val = NULL;
        if (!strcmp(a, "-o")) {
            op = &opts[O_OUTPUT];
        } else if (!strcmp(a, "-h")) {
            op = &opts[O_HELP];
        } else {
            const char *name = a + 1 + (a[1] == '-');
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            int ambiguous = 0;
            op = len ? find_opt(name, len, &ambiguous) : NULL;
            if (!op)
                return cli_usage(cmd, "%s option '%.*s'",
                                 len && ambiguous ? "ambiguous" : "unknown",
                                 (int)(eq ? eq - a : (long)strlen(a)), a);
            if (eq) {
                if (!op->has_arg)
                    return cli_usage(cmd, "option '--%s' takes no value", op->name);
                val = eq + 1;
            }
        }
        if (op->has_arg && !val) {
            if (i + 1 >= argc)
                return cli_usage(cmd, "option '--%s' needs a value", op->name);
            val = argv[++i];
        }
        double d;
        struct sc_set_value sv;
        int rc;
        switch (op->id) {
        case O_TITLE:
            o.title = val;
            break;
        case O_SUBTITLE:
            o.subtitle = val;
            break;
        case O_WIDTH:
            if ((rc = cli_setting(cmd, SC_SET_FLAME_WIDTH, "--width", val, &sv)))
                return rc;
            o.width = (int)sv.i;
            break;
        case O_HEIGHT:
            if ((rc = cli_setting(cmd, SC_SET_FLAME_HEIGHT, "--height", val, &sv)))
                return rc;
            o.frame_height = (int)sv.i;
            break;
        case O_MINWIDTH: {
            char tmp[64];
            size_t len = strlen(val);
            o.min_width_pct = len > 0 && val[len - 1] == '%';
            if (o.min_width_pct)
                len--;
            if (len >= sizeof tmp)
                len = sizeof tmp - 1;
            memcpy(tmp, val, len);
            tmp[len] = 0;
            if (parse_double(tmp, &d) || d < 0 || d >= 1e12)
                return cli_usage(cmd, "--minwidth wants pixels or a percentage, not '%s'", val);
            o.min_width = d;
            break;
        }
        case O_FONTTYPE:
            o.fonttype = val;
            break;
        case O_FONTSIZE:
            if ((rc = cli_setting(cmd, SC_SET_FLAME_FONTSIZE, "--fontsize", val, &sv)))
                return rc;
            o.font_size = sv.d;
            break;
        case O_FONTWIDTH:
            if ((rc = cli_setting(cmd, SC_SET_FLAME_FONTWIDTH, "--fontwidth", val, &sv)))
                return rc;
            o.font_width = sv.d;
            break;
        case O_COUNTNAME:
            o.countname = val;
            break;
        case O_NAMETYPE:
            o.nametype = val;
            break;
        case O_COLORS:
            /* the choices in the order of enum sc_svg_palette */
            if ((rc = cli_setting(cmd, SC_SET_FLAME_COLORS, "--colors", val, &sv)))
                return rc;
            o.palette = (enum sc_svg_palette)sv.i;
            break;
        case O_BGCOLORS:
            o.bgcolors = val;
            break;
        case O_HASH:
            o.hash = 1;
            break;
        case O_RANDOM:
        case O_CP:
        case O_ENCODING:
            break;
        case O_NAMEATTR:
            fprintf(stderr, "scorch: %s: warning: --nameattr is not supported; ignoring '%s'\n",
                    cmd, val);
            break;
        case O_REVERSE:
            o.reverse = 1;
            break;
        case O_INVERTED:
            o.inverted = 1;
            break;
        case O_FLAMECHART:
            o.flamechart = 1;
            break;
        case O_NEGATE:
            o.negate = 1;
            break;
        case O_TOTAL:
            if ((rc = cli_setting(cmd, SC_SET_FLAME_TOTAL, "--total", val, &sv)))
                return rc;
            o.total = sv.i;
            break;
        case O_FACTOR:
            if ((rc = cli_setting(cmd, SC_SET_FLAME_FACTOR, "--factor", val, &sv)))
                return rc;
            o.factor = sv.d;
            break;
        case O_NOTES:
            o.notes = val;
            break;
        case O_SAMPLE_INDEX:
            sample_index = val;
            break;
        case O_OUTPUT:
            output = val;
            break;
        case O_HELP:
            return cli_help(help);
        }
    }
    char err[SC_ERR_LEN] = "";
    if (sc_svg_opts_check(&o, err))
        return cli_usage(cmd, "%s", err);

    struct sc_decode_opts dopts;
    memset(&dopts, 0, sizeof dopts);
    struct sc_profile *p = NULL;
    struct sc_input in;
    const char *name = input && strcmp(input, "-") ? input : "-";
    if (sc_input_read(input, sc_limits_cli.max_input, &in, err))
        return cli_error("%s", err);
    /* Like flamegraph.pl, text that is no known format is read as folded stacks, whose
     * decoder skips lines it cannot use: then the result is the "No data" graph. */
    int unknown = 0;
    if (!sc_is_gzip(in.data, in.len) && sc_detect_format(in.data, in.len) == SC_FMT_UNKNOWN) {
        dopts.format = SC_FMT_FOLDED;
        unknown = 1;
    }
    if (sc_decode(&in, &dopts, &p, err))
        return cli_error("cannot read '%s': %s", name, err);
    int vi = sc_profile_sample_index(p, sample_index, err);
    if (vi < 0) {
        sc_profile_free(p);
        return cli_error("%s: %s", cmd, err);
    }
    struct sc_buf out = SC_BUF_INIT;
    int frames = sc_svg_write(p, vi, &o, &out, err);
    sc_profile_free(p);
    if (frames < 0) {
        sc_buf_release(&out);
        return cli_error("%s: %s", cmd, err);
    }
    int rc = cli_write(output, &out);
    sc_buf_release(&out);
    if (rc)
        return rc;
    if (frames == 0) {
        char list[256];
        fprintf(stderr,
                "scorch: %s: warning: no stack samples in '%s'%s%s%s; wrote a \"No data\" SVG\n",
                cmd, input && strcmp(input, "-") ? input : "stdin", unknown ? " (not " : "",
                unknown ? sc_format_list(SC_FMT_LIST_DESC, list, sizeof list) : "",
                unknown ? ")" : "");
        return 2;
    }
    return 0;
}
