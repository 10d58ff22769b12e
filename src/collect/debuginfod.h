/* debuginfod.h - separate debug files fetched by build id from debuginfod servers, off the
 * caller's thread. */
#ifndef SC_DEBUGINFOD_H
#define SC_DEBUGINFOD_H

#include <stddef.h>
#include <stdint.h>

/* A fetcher asks debuginfod servers (through libdebuginfod, which keeps what it fetched in
 * its on-disk cache) for the debug file of a build id. The asking happens on a worker thread
 * of its own, one build id at a time, so that a server that is down or slow never holds up
 * the caller: sc_debuginfod_get queues a build id and says how it stands, waiting at most
 * until a deadline the caller gives (none: it only looks). A fetch is cut after timeout_ns; a
 * failed one is not asked again for retry_ns, twice that after a second failure, and so on
 * up to an hour (a file too big to come within the timeout is not fetched again and again);
 * libdebuginfod also remembers a server's "not found" in its cache, for 10 minutes by
 * default.
 *
 * libdebuginfod reads its servers and its cache directory from the environment only, on
 * every query (DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH): a program that names servers sets
 * them there before it starts threads (setenv is not thread safe). The cache defaults to
 * libdebuginfod's own ($XDG_CACHE_HOME/debuginfod_client, else ~/.cache/debuginfod_client),
 * shared with gdb, perf and the other clients on the machine.
 *
 * Thread safe: the caller and the worker share the table of build ids under one mutex. */
struct sc_debuginfod;

struct sc_debuginfod_opts {
    int64_t timeout_ns; /* one fetch at most; 0: SC_DEBUGINFOD_TIMEOUT */
    int64_t retry_ns;   /* a failure is not asked again before; 0: SC_DEBUGINFOD_RETRY */
};

#define SC_DEBUGINFOD_TIMEOUT (15 * 1000000000LL)
#define SC_DEBUGINFOD_RETRY (300 * 1000000000LL)
#define SC_DEBUGINFOD_MAX_IDS 4096 /* build ids remembered; more are refused */

/* A fetcher, its worker started; *out is NULL (and 0 returned) when DEBUGINFOD_URLS names
 * no server. 0, SC_ENOMEM or SC_EINTERNAL (no thread). */
int sc_debuginfod_new(const struct sc_debuginfod_opts *o, struct sc_debuginfod **out, char *err);

/* Stops the worker (a transfer under way is abandoned within about a second) and frees.
 * NULL is fine. */
void sc_debuginfod_free(struct sc_debuginfod *d);

enum sc_debuginfod_state { SC_DEBUGINFOD_PENDING, SC_DEBUGINFOD_FOUND, SC_DEBUGINFOD_FAILED };

/* How the debug file of build id [id, id + n) stands, asking for it when it was never asked
 * (or failed more than retry_ns ago); waits for it until until_ns (CLOCK_MONOTONIC, as
 * sc_mono_ns; 0 or a past time: no wait). FOUND: *path is the file in the cache (the caller
 * frees it). FAILED: why says why ("not found", "timed out after 15 s", a connection error).
 * PENDING: it is still being fetched. */
enum sc_debuginfod_state sc_debuginfod_get(struct sc_debuginfod *d, const uint8_t *id, uint32_t n,
                                           int64_t until_ns, char **path, char *why, size_t whylen);

#endif
