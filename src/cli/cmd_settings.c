/* cmd_settings.c - `scorch settings`: every setting (model/settings.def) as a table, for
 * people, for docs/config.md and for the scorch.yaml(5) manual page. */
#include "cli/cli.h"
#include "model/setting.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: scorch settings [--markdown | --man | --tsv]\n"
    "\n"
    "Lists every setting scorch has: its key in the YAML config (--config), the command\n"
    "line flag and HTTP parameter that take it too, what values it accepts and its default.\n"
    "All three read a setting the same way, with the same bounds and messages.\n"
    "\n"
    "options:\n"
    "  --markdown   a Markdown table (the one in docs/config.md)\n"
    "  --man        roff for the scorch.yaml(5) manual page\n"
    "  --tsv        for scripts: key, flag, commands, parameter, routes, type, min, max (in\n"
    "               the type's unit), default, accepts; one row a line, '-' for none\n"
    "  -h, --help   show this help\n";

enum style { TEXT, MARKDOWN, MAN, TSV };

static const char *const type_names[] = {
    [SC_SET_COUNT] = "count",       [SC_SET_NUMBER] = "number", [SC_SET_BYTES] = "bytes",
    [SC_SET_DURATION] = "duration", [SC_SET_ADDR] = "addr",     [SC_SET_BOOL] = "bool",
    [SC_SET_CHOICE] = "choice",     [SC_SET_STRING] = "string", [SC_SET_PATH] = "path",
    [SC_SET_URL] = "url",           [SC_SET_LIST] = "list",
};

static void put_md(const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", stdout);
        else
            putchar(*s);
    }
}

static void put_roff(const char *s)
{
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", stdout);
        else if (*s == '-')
            fputs("\\-", stdout);
        else
            putchar(*s);
    }
}

int cmd_settings(int argc, char **argv)
{
    static const struct option opts[] = {
        {"markdown", no_argument, 0, 'm'},
        {"man", no_argument, 0, 'r'},
        {"tsv", no_argument, 0, 't'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    enum style st = TEXT;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'm':
            st = MARKDOWN;
            break;
        case 'r':
            st = MAN;
            break;
        case 't':
            st = TSV;
            break;
        case 'h':
            return cli_help(usage);
        default:
            return cli_usage("settings", "bad option");
        }
    }
    if (optind < argc)
        return cli_usage("settings", "unexpected argument '%s'", argv[optind]);
    size_t n;
    const struct sc_setting *t = sc_settings(&n);
    if (st == MARKDOWN)
        printf("| key | flag | parameter | accepts | default | what |\n"
               "|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        const struct sc_setting *s = &t[i];
        char what[192];
        sc_setting_describe(s, what, sizeof what);
        const char *key = s->key ? s->key : "", *flag = s->flag ? s->flag : "";
        const char *param = s->param ? s->param : "", *def = s->def ? s->def : "";
        if (st == TSV) {
            printf("%s\t%s\t%s\t%s\t%s\t%s\t%lld\t%lld\t%s\t%s\n", *key ? key : "-",
                   *flag ? flag : "-", s->cmds ? s->cmds : "-", *param ? param : "-",
                   s->routes ? s->routes : "-", type_names[s->type], (long long)s->min,
                   (long long)s->max, *def ? def : "-", what);
        } else if (st == MARKDOWN) {
            printf("| %s%s%s", *key ? "`" : "", key, *key ? "`" : "");
            printf(" | %s%s%s", *flag ? "`" : "", flag, *flag ? "`" : "");
            if (s->cmds) {
                printf(" (%s)", s->cmds);
            }
            printf(" | %s%s%s", *param ? "`" : "", param, *param ? "`" : "");
            if (s->routes) {
                printf(" (%s)", s->routes);
            }
            printf(" | ");
            put_md(what);
            printf(" | %s%s%s | ", *def ? "`" : "", def, *def ? "`" : "");
            put_md(s->doc);
            printf(" |\n");
        } else if (st == MAN) {
            /* named by its key, else its parameter, else (a flag only) its flag; then who
             * takes it: "(--flag of top, callgraph; on /api/v1/x)" */
            const char *name = *key ? key : *param ? param : flag;
            char who[320];
            snprintf(who, sizeof who, "%s%s%s%s%s%s", name != flag ? flag : "",
                     s->cmds ? (name != flag && *flag ? " of " : "of ") : "",
                     s->cmds ? s->cmds : "",
                     s->routes && (s->cmds || (name != flag && *flag)) ? "; " : "",
                     s->routes ? "on " : "", s->routes ? s->routes : "");
            printf(".TP\n.B ");
            put_roff(name);
            if (*who) {
                printf(" \\fR(");
                put_roff(who);
                printf(")");
            }
            printf("\n");
            put_roff(s->doc);
            printf(". ");
            put_roff(what);
            printf(".");
            if (*def) {
                printf(" Default: ");
                put_roff(def);
                printf(".");
            }
            printf("\n");
        } else {
            printf("%-32s %s\n", *key ? key : *param ? param : flag, s->doc);
            printf("%-32s %s%s%s%s%s%s%s%s%s\n", "", what, *def ? "; default " : "", def,
                   *flag ? "; flag " : "", flag, s->cmds ? " of " : "", s->cmds ? s->cmds : "",
                   s->routes ? "; on " : "", s->routes ? s->routes : "");
        }
    }
    return 0;
}
