/* layout.h - a call graph's Graphviz layout in a worker process of its own, bounded. */
#ifndef SC_LAYOUT_H
#define SC_LAYOUT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "model/buf.h"

/* Graphviz keeps global state and is not thread-safe, and dot's time can grow beyond any
 * budget on an unlucky graph. In the server every layout therefore runs in a worker: the
 * scorch binary itself (`exe __layout`), DOT on its stdin, SVG on its stdout, under
 * RLIMIT_CPU and RLIMIT_AS. No lock is shared between requests (another tenant's layout
 * never waits behind a slow one), the worker is killed when its deadline passes, when the
 * client goes away (its socket hangs up) or when the server stops, and whatever Graphviz
 * does to its memory goes with the process. */
struct sc_layout_opts {
    const char *exe;             /* the scorch binary; NULL: lay out in this process */
    int64_t timeout_ns;          /* wall-clock deadline (0: 30 s) */
    uint64_t max_memory;         /* the worker's address space (0: 1 GiB) */
    int client_fd;               /* -1, or a socket whose hang-up cancels the layout */
    volatile sig_atomic_t *stop; /* NULL, or a flag whose setting cancels the layout */
};

/* Lays dot (len bytes) out and appends the SVG to out: in a worker when o->exe is set,
 * else in this process (under a lock; what the CLI does). 0, or SC_ELIMIT (the deadline
 * or the worker's memory or CPU limit), SC_EIO (the client went away, the server stops,
 * the worker failed), SC_EFORMAT (Graphviz refused the graph) with detail in err. */
int sc_layout_svg(const char *dot, size_t len, const struct sc_layout_opts *o, struct sc_buf *out,
                  char *err);

/* The worker's side (`scorch __layout`): DOT from in, SVG to out. Returns the process's
 * exit status; when it is not 0, err says why and the caller prints it on stderr as one
 * line, `scorch: ERR`, which is what sc_layout_svg reports. */
int sc_layout_worker(int in, int out, char *err);

#endif
