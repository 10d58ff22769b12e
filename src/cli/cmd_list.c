/* cmd_list.c - `scorch list`: per-line flat/cum of functions with source, like go tool pprof -list.
 */
#include "cli/cli.h"
#include "formats/input.h"
#include "model/error.h"
#include "query/plan.h"
#include "query/source.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: scorch list [options] REGEX FILE...\n"
    "\n"
    "Lists the source lines of every function whose name matches REGEX (PCRE2, anywhere in\n"
    "the name) with their flat value (samples stopped at the line) and cum value (samples\n"
    "passing through it), merged over all inputs, as `go tool pprof -list` does. Source\n"
    "files are looked up under the source paths; when a file is not found its numbers are\n"
    "still listed. Inputs: any profile format scorch reads ('scorch --help' lists them).\n"
    "\n"
    "options:\n"
    "  --exact              REGEX is a function name to match exactly\n"
    "  --sample-index NAME  sample type to report; default: the profile's default type\n"
    "  --source-path DIRS   directories to find source files in, ':'-separated or repeated\n"
    "                       (default: the current directory and its parents, as pprof)\n"
    "  --trim-path PREFIX   remove PREFIX from file names before looking them up (repeatable)\n"
    "  --format FMT         text (default, pprof's layout) or json (exact integers)\n"
    "  -o FILE              write to FILE instead of stdout\n"
    "  -h, --help           show this help\n";

/* Splits s at ':' into list (which grows), keeping the pieces in `keep`. */
static int add_paths(const char *s, char ***list, uint32_t *n)
{
    char *copy = strdup(s);
    if (!copy)
        return -1;
    for (char *tok = strtok(copy, ":"); tok; tok = strtok(NULL, ":")) {
        char **nl = realloc(*list, (*n + 2) * sizeof *nl);
        if (!nl) {
            free(copy);
            return -1;
        }
        *list = nl;
        if (!(nl[(*n)++] = strdup(tok))) {
            free(copy);
            return -1;
        }
    }
    free(copy);
    return 0;
}

static void free_list(char **list, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

int cmd_list(int argc, char **argv)
{
    static const struct option opts[] = {
        {"exact", no_argument, 0, 'x'},
        {"sample-index", required_argument, 0, 's'},
        {"source-path", required_argument, 0, 'S'},
        {"trim-path", required_argument, 0, 'T'},
        {"format", required_argument, 0, 'F'},
        {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *sample_index = NULL, *outpath = NULL;
    int exact = 0, json = 0, c, rc = 1;
    char **roots = NULL, **trims = NULL;
    uint32_t nroots = 0, ntrims = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'x':
            exact = 1;
            break;
        case 's':
            sample_index = optarg;
            break;
        case 'S':
            if (add_paths(optarg, &roots, &nroots))
                goto oom;
            break;
        case 'T':
            if (add_paths(optarg, &trims, &ntrims))
                goto oom;
            break;
        case 'F': {
            struct sc_set_value sv;
            if ((rc = cli_setting("list", SC_SET_LIST_FORMAT, "--format", optarg, &sv)))
                goto done;
            rc = 1;
            json = sv.i == 1;
            break;
        }
        case 'o':
            outpath = optarg;
            break;
        case 'h':
            rc = cli_help(usage);
            goto done;
        default:
            rc = cli_usage("list", "bad option");
            goto done;
        }
    }
    if (optind >= argc) {
        rc = cli_usage("list", "a function regular expression is needed");
        goto done;
    }
    const char *pattern = argv[optind++];
    if (nroots == 0) {
        char *cwd = getcwd(NULL, 0);
        if (!cwd || add_paths(cwd, &roots, &nroots)) {
            free(cwd);
            goto oom;
        }
        free(cwd);
    }
    char err[SC_ERR_LEN] = "";
    struct sc_profile *merged = NULL;
    struct sc_decode_opts dopts = {.lazy_samples = 1};
    if (sc_plan_files((const char *const *)argv + optind, (uint32_t)(argc - optind), &dopts, NULL,
                      &merged, err)) {
        rc = cli_error("%s", err);
        goto done;
    }
    int vi = sc_profile_sample_index(merged, sample_index, err);
    if (vi < 0) {
        sc_profile_free(merged);
        rc = cli_error("%s", err);
        goto done;
    }
    /* the user's own machine: absolute names and parent directories are fair game */
    struct sc_source_opts so = {
        .function = exact ? pattern : NULL,
        .regex = exact ? NULL : pattern,
        .roots = (const char *const *)roots,
        .nroots = nroots,
        .trim = (const char *const *)trims,
        .ntrim = ntrims,
        .allow_absolute = 1,
        .search_parents = 1,
    };
    struct sc_source s;
    struct sc_buf out = SC_BUF_INIT;
    int src = sc_source_compute(merged, vi, &so, &s, err);
    if (src == 0) {
        if (json)
            sc_source_write_json(merged, vi, &s, &out);
        else
            sc_source_write_text(merged, vi, &s, &out);
    }
    sc_source_release(&s);
    sc_profile_free(merged);
    if (src) {
        sc_buf_release(&out);
        rc = cli_error("%s", err);
        goto done;
    }
    rc = cli_write(outpath, &out);
    sc_buf_release(&out);
    goto done;
oom:
    rc = cli_error("out of memory");
done:
    free_list(roots, nroots);
    free_list(trims, ntrims);
    return rc;
}
