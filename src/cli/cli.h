/* cli.h - what the subcommands share: their entry points and error/output helpers. */
#ifndef SC_CLI_H
#define SC_CLI_H

#include "model/setting.h"

#include "model/buf.h"

/* Subcommands. argv[0] is the subcommand's name; return the process exit status. */
/* A flag's value read as setting id of model/settings.def: 0, or the exit code of
 * cli_usage(cmd, "'--flag' must be ..., not 'x'"). */
int cli_setting(const char *cmd, enum sc_set_id id, const char *flag, const char *arg,
                struct sc_set_value *out);

int cmd_collapse(int argc, char **argv);
int cmd_flamegraph(int argc, char **argv);
int cmd_diff_folded(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_callgraph(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_heatmap(int argc, char **argv);
int cmd_server(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_settings(int argc, char **argv);

/* Prints "scorch: <message>" on stderr; returns 1, the exit status for failures. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "scorch <cmd>: <message>" and a pointer to --help; returns 2 (usage error). */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes b to path (NULL or "-" = stdout). Returns 0, or prints an error and returns 1. */
int cli_write(const char *path, const struct sc_buf *b);
/* The log sink (model/log.h) main installs: "scorch: <line>" on stderr, flushed. */
void cli_log_line(void *ctx, const char *line);
/* Prints help text on stdout and returns 0. */
int cli_help(const char *text);

/* The allocator set for the server (a fixed mmap threshold: cli.c says why), unless the
 * user set that threshold (MALLOC_MMAP_THRESHOLD_, GLIBC_TUNABLES). */
void cli_malloc_server(void);

/* The allocator set for a command that reads its inputs once and exits: memory freed is
 * kept for the next allocation, the heap grows 64 MiB at a time and is backed by
 * transparent huge pages where the system allows. Left alone when the user tuned malloc
 * (GLIBC_TUNABLES, MALLOC_*_). */
void cli_malloc_once(void);

#endif
