/* budget.c - the thread's query memory budget (the charging is in budget_wrap.c). */
#include "model/budget.h"

#include <stddef.h>

/* Read by the wrapped allocator on every call; a plain thread-local, no lock. */
_Thread_local struct sc_budget *sc_budget_tl;

void sc_budget_begin(struct sc_budget *b, uint64_t max)
{
    b->max = max > INT64_MAX ? INT64_MAX : (int64_t)max;
    atomic_store(&b->used, 0);
    atomic_store(&b->peak, 0);
    atomic_store(&b->over, 0);
    sc_budget_tl = b;
}

void sc_budget_end(void)
{
    sc_budget_tl = NULL;
}

struct sc_budget *sc_budget_current(void)
{
    return sc_budget_tl;
}

void sc_budget_adopt(struct sc_budget *b)
{
    sc_budget_tl = b;
}

/* budget_wrap.c defines the strong symbol in the binary that enforces budgets. */
__attribute__((weak)) int sc_budget_wrapped(void);

int sc_budget_enforced(void)
{
    return sc_budget_wrapped ? sc_budget_wrapped() : 0;
}
