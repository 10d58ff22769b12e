/* dl.h - the shared libraries only some commands need, opened (dlopen) at their first use. */
#ifndef SC_DL_H
#define SC_DL_H

#include <stddef.h>

/* Why: linking libcurl, libmicrohttpd, gnutls, libdebuginfod and graphviz made the dynamic
 * loader map about 35 more libraries (openssl, krb5, ldap, ...) before main() of every run,
 * 7 to 10 ms of CPU even for `scorch --version`; the file commands (top, flamegraph,
 * collapse) never call them. So the binary does not link them: the code that does call
 * them opens the library first, through sc_dl_load, and calls through the sym_* function
 * pointers its header (dl_curl.h, dl_mhd.h, ...) declares, typed from the library's own
 * header so the compiler checks every call against the real prototype.
 *
 * The rule for a caller: sc_dl_load at the entry point of the feature (server start, scraper
 * creation, ClickHouse open, ...), failing cleanly with its err when it fails; every sym_*
 * call after that is safe. A sym_* pointer is NULL until its library loaded. */

/* The libraries; dl.c holds their sonames and Debian packages in one table. */
enum sc_dl_lib {
    SC_DL_CURL,       /* libcurl.so.4: scrape, push, ingest, ClickHouse, alert notifications */
    SC_DL_MHD,        /* libmicrohttpd.so.12: the server's and the agent's HTTP */
    SC_DL_GNUTLS,     /* libgnutls.so.30: the server's TLS certificates, TLS of OTLP/gRPC */
    SC_DL_DEBUGINFOD, /* libdebuginfod.so.1: debug files by build id */
    SC_DL_GVC,        /* libgvc.so.6 (and libcgraph.so.6 it needs): call graph SVG */
    SC_DL_NLIBS
};

/* Opens lib and resolves every function its header lists, once per process: the first call
 * does the work (and for libcurl runs curl_global_init), later calls, from any thread,
 * return its result at the cost of an atomic load. A failure is remembered too. Returns 0,
 * or SC_EUNSUPPORTED with err (may be NULL) saying which file is missing and which package
 * has it: "cannot load libcurl.so.4: ... (install libcurl4)". */
int sc_dl_load(enum sc_dl_lib lib, char *err);

/* One function to resolve: its name and the address of the sym_* pointer to fill. */
struct sc_dl_sym {
    const char *name;
    void *slot; /* a pointer to a function pointer */
};

/* The opener under sc_dl_load, without its once: dlopen(soname), then dlsym of each of
 * syms[0..n) into its slot. On success *handle (the library stays open for the process);
 * on failure every slot is NULL, the library closed, and err says what is missing, naming
 * package as the one to install. Exposed for tests. */
int sc_dl_open(const char *soname, const char *package, const struct sc_dl_sym *syms, size_t n,
               void **handle, char *err);

/* Tests: the soname lib is looked for under (NULL: the table's), before its first load. */
void sc_dl_set_soname(enum sc_dl_lib lib, const char *soname);

/* Declares (in dl_<lib>.h) and defines (in dl.c) the pointer sym_f with f's own type. */
#define SC_DL_DECLARE(f) extern __typeof__(f) *sym_##f;
#define SC_DL_DEFINE(f) __typeof__(f) *sym_##f;
#define SC_DL_ENTRY(f) {#f, (void *)&sym_##f},

#endif
