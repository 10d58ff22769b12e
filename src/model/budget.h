/* budget.h - a query's budget: the bytes scorch's own code holds for it, its time, and its
 * client (a query whose client has gone stops). */
#ifndef SC_BUDGET_H
#define SC_BUDGET_H

#include <stdatomic.h>
#include <stdint.h>

/* A budget is set on the thread that runs a query (and the threads it starts for parts of
 * the work, sc_budget_adopt). Every malloc, calloc, realloc, strdup, strndup and free that
 * scorch's own code makes on such a thread is charged to it: the scorch binary is linked
 * with -Wl,--wrap for those (budget_wrap.c), so libraries' own allocations (SQLite's page
 * cache, zstd's contexts) are theirs, bounded by their own settings. An allocation that
 * would take the net bytes past max fails as if memory had run out, and the budget
 * remembers it (over): the query's error path is the out-of-memory path every decoder and
 * merge already has, and the caller turns it into an answer naming the limit.
 *
 * The count is net bytes (malloc_usable_size) allocated minus freed on the budget's threads
 * while it is set; memory freed there that was allocated before (a cache emptied) lowers
 * it, which errs on the side of letting a query finish. Without the wrapped link (the unit
 * tests, the fuzzers) nothing is charged and nothing fails. */
struct sc_budget {
    int64_t max;          /* bytes; 0: no limit (only counted) */
    _Atomic int64_t used; /* net bytes now */
    _Atomic int64_t peak; /* the most used held */
    _Atomic int over;     /* an allocation was refused */
    /* time and client, checked by sc_budget_poll */
    int64_t deadline_ns;            /* monotonic; 0: none */
    int client_fd;                  /* the request's socket; -1: none */
    _Atomic int64_t next_client_ns; /* when to look at the socket again */
    _Atomic int stopped;            /* SC_BUDGET_TIME or SC_BUDGET_GONE once poll said so */
};

enum { SC_BUDGET_TIME = 1, SC_BUDGET_GONE = 2 };

/* Sets b (zeroed but for max) as this thread's budget. */
void sc_budget_begin(struct sc_budget *b, uint64_t max);
/* Gives the budget a deadline (timeout_ns from now; 0: none) and the client's socket whose
 * hang-up stops the query (-1: none). */
void sc_budget_limit(struct sc_budget *b, int64_t timeout_ns, int client_fd);
/* Called by the long loops of a query (a block read, every few thousand samples or stacks
 * walked) and by SQLite's progress handler on the store's reader connections (every 1,000
 * instructions; store/sqlite_int.h): 0 to go on, or SC_ELIMIT (detail in err, may be
 * NULL) once this thread's budget is past its deadline or its client has hung up; 0 when
 * the thread has no budget. Cheap: the clock, and the socket at most every 50 ms. */
int sc_budget_poll(char *err);
/* sc_budget_poll once every 4,096 turns of a loop (i counts them from 0), 0 on the others:
 * the rate for loops whose turn is a lookup or two (4,096 of them take well under a ms). */
static inline int sc_budget_poll_every(uint64_t i, char *err)
{
    return (i & 4095) == 4095 ? sc_budget_poll(err) : 0;
}
/* Clears this thread's budget; b keeps its figures. */
void sc_budget_end(void);
/* This thread's budget, NULL when none; and setting one on a helper thread of the same
 * query (NULL clears). */
struct sc_budget *sc_budget_current(void);
void sc_budget_adopt(struct sc_budget *b);
/* 1 when the wrapped allocator is linked in (the scorch binary): budgets are enforced. */
int sc_budget_enforced(void);

#endif
