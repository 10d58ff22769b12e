/* test_dl.c - the libraries opened at first use: once per process from any number of
 * threads, the same functions every time, and a missing file or function as a clear error. */
#include "t.h"

#include "model/dl.h"
#include "model/dl_curl.h"
#include "model/error.h"

#include <dlfcn.h>
#include <pthread.h>

/* Many threads at once: each gets 0 and the functions the first load resolved. */
#define NTHREADS 8
static void *load_curl(void *arg)
{
    char err[SC_ERR_LEN];
    int *rc = arg;
    *rc = sc_dl_load(SC_DL_CURL, err);
    return NULL;
}

static void test_concurrent(void)
{
    pthread_t th[NTHREADS];
    int rc[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        rc[i] = -100;
        T_EQ_INT(pthread_create(&th[i], NULL, load_curl, &rc[i]), 0);
    }
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        T_EQ_INT(rc[i], 0);
    }
    T_CHECK(sym_curl_easy_init != NULL);
}

/* Loading twice: the same functions, from the library the process already mapped. */
static void test_twice(void)
{
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_dl_load(SC_DL_CURL, err), 0);
    __typeof__(sym_curl_easy_init) init = sym_curl_easy_init;
    __typeof__(sym_curl_easy_setopt) setopt = sym_curl_easy_setopt;
    T_CHECK(init != NULL && setopt != NULL);
    T_EQ_INT(sc_dl_load(SC_DL_CURL, err), 0);
    T_CHECK(sym_curl_easy_init == init && sym_curl_easy_setopt == setopt);
    /* the pointers are libcurl's own, and curl_global_init ran: a handle can be made */
    void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_NOLOAD);
    T_CHECK(h != NULL);
    if (h) {
        void *f = dlsym(h, "curl_easy_init");
        T_CHECK(f != NULL && memcmp(&f, &init, sizeof f) == 0);
        dlclose(h);
    }
    CURL *c = sym_curl_easy_init();
    T_CHECK(c != NULL);
    if (c)
        sym_curl_easy_cleanup(c);
}

/* A soname that is nowhere: SC_EUNSUPPORTED saying which file and which package, the same
 * answer again (remembered, not retried), and no function set. */
static void test_missing_library(void)
{
    char err[SC_ERR_LEN] = "";
    sc_dl_set_soname(SC_DL_GVC, "libscorch-no-such-library.so.9");
    T_EQ_INT(sc_dl_load(SC_DL_GVC, err), SC_EUNSUPPORTED);
    T_CHECK(strstr(err, "cannot load libscorch-no-such-library.so.9: ") == err);
    T_CHECK(strstr(err, "cannot open shared object file") != NULL);
    T_CHECK(strstr(err, "(install libgvc6)") != NULL);
    char again[SC_ERR_LEN] = "";
    T_EQ_INT(sc_dl_load(SC_DL_GVC, again), SC_EUNSUPPORTED);
    T_EQ_STR(again, err);
    T_EQ_INT(sc_dl_load(SC_DL_GVC, NULL), SC_EUNSUPPORTED); /* err may be NULL */
    sc_dl_set_soname(SC_DL_GVC, NULL);
}

/* A library without one of the functions asked for (an older version): an error naming the
 * function, and every slot NULL again, also those resolved before it. */
static void test_missing_function(void)
{
    void (*a)(void) = NULL, (*b)(void) = NULL;
    const struct sc_dl_sym syms[] = {{"getpid", (void *)&a},
                                     {"scorch_no_such_function", (void *)&b}};
    void *h = (void *)1;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_dl_open("libc.so.6", "libc6", syms, 2, &h, err), SC_EUNSUPPORTED);
    T_EQ_STR(err, "cannot load libc.so.6: it has no function scorch_no_such_function (libc6 too "
                  "old?)");
    T_CHECK(h == NULL && a == NULL && b == NULL);
    /* and one that has them all */
    T_EQ_INT(sc_dl_open("libc.so.6", "libc6", syms, 1, &h, err), 0);
    T_CHECK(h != NULL && a != NULL);
    if (h)
        dlclose(h);
}

int main(void)
{
    T_RUN(test_concurrent);
    T_RUN(test_twice);
    T_RUN(test_missing_library);
    T_RUN(test_missing_function);
    return t_done();
}
