/* log.h - how the layers below cli/ and server/ report what no caller is there to hear. */
#ifndef SC_LOG_H
#define SC_LOG_H

/* Library code never writes to stderr itself: a failure a caller asked for goes back in its
 * err, and what happens on a thread of the library's own (a store's background work, the
 * server's recorder) or is only worth knowing (a fallback taken) goes through sc_logf to
 * the one sink the program installed. cli/ installs a sink that prints "scorch: MSG" on
 * stderr; without one (tests, library use) the messages are dropped.
 *
 * msg is one line without the "scorch: " prefix or a newline, worded as errors are;
 * it is valid only during the call. The sink may be called from any thread, at any time
 * (one call at a time: messages never interleave), and must not call sc_logf. */
typedef void (*sc_log_fn)(void *ctx, const char *msg);

/* Installs fn (NULL: silence) with its ctx for the whole process. */
void sc_log_set(sc_log_fn fn, void *ctx);
/* The sink installed now (NULL when silent) and its ctx, for a caller (a test) that puts
 * it back afterwards. */
sc_log_fn sc_log_get(void **ctx);

/* Formats one message (truncated past SC_LOG_LEN bytes: room for a path of PATH_MAX and
 * what is said of it) and hands it to the sink. */
#define SC_LOG_LEN 4608
void sc_logf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
