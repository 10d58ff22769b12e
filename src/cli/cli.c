/* cli.c - error reporting and output for the subcommands. */
#include "cli/cli.h"
#include "model/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int cli_error(const char *fmt, ...)
{
    va_list ap;
    fputs("scorch: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "scorch: %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see 'scorch %s --help')\n", cmd);
    return 2;
}

int cli_write(const char *path, const struct sc_buf *b)
{
    if (b->oom)
        return cli_error("out of memory");
    int fd = 1;
    int to_file = path && strcmp(path, "-") != 0;
    if (to_file) {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
            return cli_error("cannot write '%s': %s", path, strerror(errno));
    }
    int rc = sc_buf_write_fd(b, fd);
    int e = errno;
    if (to_file && close(fd) < 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc) {
        /* a closed pipe (| head) is not worth a message */
        if (e == EPIPE)
            return 1;
        return cli_error("cannot write '%s': %s", to_file ? path : "stdout", strerror(e));
    }
    return 0;
}

void cli_log_line(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "scorch: %s\n", line);
    fflush(stderr);
}

int cli_help(const char *text)
{
    fputs(text, stdout);
    return 0;
}

int cli_setting(const char *cmd, enum sc_set_id id, const char *flag, const char *arg,
                struct sc_set_value *out)
{
    char err[SC_ERR_LEN];
    if (sc_setting_parse(sc_setting(id), arg, flag, out, err))
        return cli_usage(cmd, "%s", err);
    return 0;
}
