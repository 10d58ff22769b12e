/* dl.c - opens the optional shared libraries at first use and resolves their functions. */
#include "model/dl.h"
#include "model/dl_curl.h"
#include "model/dl_debuginfod.h"
#include "model/dl_gnutls.h"
#include "model/dl_gvc.h"
#include "model/dl_mhd.h"
#include "model/error.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

SC_DL_CURL_FUNCS(SC_DL_DEFINE)
SC_DL_MHD_FUNCS(SC_DL_DEFINE)
SC_DL_GNUTLS_FUNCS(SC_DL_DEFINE)
SC_DL_DEBUGINFOD_FUNCS(SC_DL_DEFINE)
SC_DL_GVC_FUNCS(SC_DL_DEFINE)

static const struct sc_dl_sym curl_syms[] = {SC_DL_CURL_FUNCS(SC_DL_ENTRY)};
static const struct sc_dl_sym mhd_syms[] = {SC_DL_MHD_FUNCS(SC_DL_ENTRY)};
static const struct sc_dl_sym gnutls_syms[] = {SC_DL_GNUTLS_FUNCS(SC_DL_ENTRY)};
static const struct sc_dl_sym debuginfod_syms[] = {SC_DL_DEBUGINFOD_FUNCS(SC_DL_ENTRY)};
static const struct sc_dl_sym gvc_syms[] = {SC_DL_GVC_FUNCS(SC_DL_ENTRY)};

/* libcurl wants curl_global_init before any other call, once, and before threads use it:
 * the load is that once. */
static int curl_init(char *err)
{
    CURLcode cc = sym_curl_global_init(CURL_GLOBAL_DEFAULT);
    if (cc != CURLE_OK)
        return sc_errf(err, SC_EUNSUPPORTED, "cannot start libcurl: curl_global_init: %s",
                       sym_curl_easy_strerror(cc));
    return 0;
}

#define SYMS(a) a, sizeof(a) / sizeof *(a)
#define UNLOADED PTHREAD_MUTEX_INITIALIZER, 0, 0, ""

/* One library: what to open and, after the first sc_dl_load, its outcome. The sonames are
 * the ABI versions the headers scorch builds with describe; the packages are Debian's (the
 * Depends: scripts/deb.sh adds by hand, since dpkg-shlibdeps sees only linked libraries). */
static struct lib {
    const char *soname, *package;
    const struct sc_dl_sym *syms;
    size_t nsyms;
    int (*init)(char *err); /* after the functions resolved (NULL: none) */
    pthread_mutex_t mu;     /* held by the one thread loading */
    atomic_int done;        /* rc and msg are final (release: written before) */
    int rc;
    char msg[SC_ERR_LEN];
} libs[SC_DL_NLIBS] = {
    [SC_DL_CURL] = {"libcurl.so.4", "libcurl4", SYMS(curl_syms), curl_init, UNLOADED},
    [SC_DL_MHD] = {"libmicrohttpd.so.12", "libmicrohttpd12", SYMS(mhd_syms), NULL, UNLOADED},
    [SC_DL_GNUTLS] = {"libgnutls.so.30", "libgnutls30", SYMS(gnutls_syms), NULL, UNLOADED},
    [SC_DL_DEBUGINFOD] = {"libdebuginfod.so.1", "libdebuginfod1", SYMS(debuginfod_syms), NULL,
                          UNLOADED},
    [SC_DL_GVC] = {"libgvc.so.6", "libgvc6", SYMS(gvc_syms), NULL, UNLOADED},
};

static void clear_slots(const struct sc_dl_sym *syms, size_t n)
{
    void *none = NULL;
    for (size_t i = 0; i < n; i++)
        memcpy(syms[i].slot, &none, sizeof none);
}

int sc_dl_open(const char *soname, const char *package, const struct sc_dl_sym *syms, size_t n,
               void **handle, char *err)
{
    *handle = NULL;
    clear_slots(syms, n);
    /* RTLD_NOW: a library whose own dependencies do not resolve fails here, with a message,
     * not at its first call */
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        size_t sl = strlen(soname);
        /* glibc says "libx.so.1: cannot open shared object file: ...": the name is ours */
        if (why && !strncmp(why, soname, sl) && !strncmp(why + sl, ": ", 2))
            why += sl + 2;
        return sc_errf(err, SC_EUNSUPPORTED, "cannot load %s: %s (install %s)", soname,
                       why ? why : "not found", package);
    }
    for (size_t i = 0; i < n; i++) {
        dlerror();
        void *f = dlsym(h, syms[i].name);
        if (!f) {
            clear_slots(syms, i);
            dlclose(h);
            return sc_errf(err, SC_EUNSUPPORTED,
                           "cannot load %s: it has no function %s (%s too old?)", soname,
                           syms[i].name, package);
        }
        /* a function pointer stored through its address: memcpy, as C allows */
        memcpy(syms[i].slot, &f, sizeof f);
    }
    *handle = h;
    return 0;
}

int sc_dl_load(enum sc_dl_lib lib, char *err)
{
    if ((unsigned)lib >= SC_DL_NLIBS)
        return sc_errf(err, SC_EINVAL, "no library %d", (int)lib);
    struct lib *l = &libs[lib];
    if (!atomic_load_explicit(&l->done, memory_order_acquire)) {
        pthread_mutex_lock(&l->mu);
        if (!atomic_load_explicit(&l->done, memory_order_relaxed)) {
            void *h = NULL;
            l->msg[0] = 0;
            l->rc = sc_dl_open(l->soname, l->package, l->syms, l->nsyms, &h, l->msg);
            if (!l->rc && l->init)
                l->rc = l->init(l->msg);
            /* on failure h stays open (its functions may be half set up): never used */
            atomic_store_explicit(&l->done, 1, memory_order_release);
        }
        pthread_mutex_unlock(&l->mu);
    }
    if (l->rc && err)
        snprintf(err, SC_ERR_LEN, "%s", l->msg);
    return l->rc;
}

void sc_dl_set_soname(enum sc_dl_lib lib, const char *soname)
{
    static const char *table[SC_DL_NLIBS];
    if ((unsigned)lib >= SC_DL_NLIBS)
        return;
    struct lib *l = &libs[lib];
    pthread_mutex_lock(&l->mu);
    if (!table[lib])
        table[lib] = l->soname;
    l->soname = soname ? soname : table[lib];
    pthread_mutex_unlock(&l->mu);
}
