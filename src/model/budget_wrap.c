/* budget_wrap.c - the allocator wrappers that charge the thread's budget (model/budget.h).
 *
 * Linked only into programs built with -Wl,--wrap=malloc,calloc,realloc,free,strdup,strndup
 * (the scorch binary, the budget's unit test): every call scorch's own objects make to those
 * lands here, and __real_* is the C library's (or a sanitizer's) allocator. Off a query's
 * thread the cost is one thread-local load. */
#include "model/budget.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

extern _Thread_local struct sc_budget *sc_budget_tl;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
int sc_budget_wrapped(void);

int sc_budget_wrapped(void)
{
    return 1;
}

/* May b take n more bytes? When not, it is over from now on (the query answers that). */
static int fits(struct sc_budget *b, size_t n)
{
    int64_t used = atomic_load_explicit(&b->used, memory_order_relaxed);
    if (b->max && (n > (size_t)INT64_MAX || used + (int64_t)n > b->max)) {
        atomic_store(&b->over, 1);
        return 0;
    }
    return 1;
}

static void charge(struct sc_budget *b, int64_t n)
{
    int64_t now = atomic_fetch_add_explicit(&b->used, n, memory_order_relaxed) + n;
    int64_t peak = atomic_load_explicit(&b->peak, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak_explicit(
                             &b->peak, &peak, now, memory_order_relaxed, memory_order_relaxed))
        ;
}

void *__wrap_malloc(size_t n)
{
    struct sc_budget *b = sc_budget_tl;
    if (!b)
        return __real_malloc(n);
    if (!fits(b, n))
        return NULL;
    void *p = __real_malloc(n);
    if (p)
        charge(b, (int64_t)malloc_usable_size(p));
    return p;
}

void *__wrap_calloc(size_t n, size_t m)
{
    struct sc_budget *b = sc_budget_tl;
    if (!b)
        return __real_calloc(n, m);
    size_t total;
    if (__builtin_mul_overflow(n, m, &total) || !fits(b, total))
        return NULL;
    void *p = __real_calloc(n, m);
    if (p)
        charge(b, (int64_t)malloc_usable_size(p));
    return p;
}

void *__wrap_realloc(void *p, size_t n)
{
    struct sc_budget *b = sc_budget_tl;
    if (!b)
        return __real_realloc(p, n);
    size_t old = p ? malloc_usable_size(p) : 0;
    if (n > old && !fits(b, n - old))
        return NULL; /* p is untouched, as when memory runs out */
    void *q = __real_realloc(p, n);
    if (q)
        charge(b, (int64_t)malloc_usable_size(q) - (int64_t)old);
    else if (!n && p)
        charge(b, -(int64_t)old); /* realloc(p, 0) freed p */
    return q;
}

void __wrap_free(void *p)
{
    struct sc_budget *b = sc_budget_tl;
    if (b && p)
        charge(b, -(int64_t)malloc_usable_size(p));
    __real_free(p);
}

/* The C library's strdup allocates inside libc, unseen: these allocate through the
 * wrapper above so what free gives back was charged. */
char *__wrap_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = __wrap_malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

char *__wrap_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *d = __wrap_malloc(len + 1);
    if (!d)
        return NULL;
    memcpy(d, s, len);
    d[len] = 0;
    return d;
}
