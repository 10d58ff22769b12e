/* cmd_settings.c - `scorch settings`: every setting (model/settings.def) as a table, for
 * people, for docs/config.md and for the scorch.yaml(5) manual page. */
#include "cli/cli.h"
#include "model/setting.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: scorch settings [--markdown | --man]\n"
    "\n"
    "Lists every setting scorch has: its key in the YAML config (--config), the command\n"
    "line flag and HTTP parameter that take it too, what values it accepts and its default.\n"
    "All three read a setting the same way, with the same bounds and messages.\n"
    "\n"
    "options:\n"
    "  --markdown   a Markdown table (the one in docs/config.md)\n"
    "  --man        roff for the scorch.yaml(5) manual page\n"
    "  -h, --help   show this help\n";

enum style { TEXT, MARKDOWN, MAN };

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
        if (st == MARKDOWN) {
            printf("| %s%s%s | %s%s%s | %s%s%s | ", *key ? "`" : "", key, *key ? "`" : "",
                   *flag ? "`" : "", flag, *flag ? "`" : "", *param ? "`" : "", param,
                   *param ? "`" : "");
            put_md(what);
            printf(" | %s%s%s | ", *def ? "`" : "", def, *def ? "`" : "");
            put_md(s->doc);
            printf(" |\n");
        } else if (st == MAN) {
            printf(".TP\n.B ");
            put_roff(*key ? key : param);
            if (*flag) {
                printf(" \\fR(");
                put_roff(flag);
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
            printf("%-32s %s\n", *key ? key : param, s->doc);
            printf("%-32s %s%s%s%s%s\n", "", what, *def ? "; default " : "", def,
                   *flag ? "; flag " : "", flag);
        }
    }
    return 0;
}
