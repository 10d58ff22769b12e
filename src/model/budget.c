/* budget.c - the thread's query memory budget (the charging is in budget_wrap.c). */
#include "model/budget.h"
#include "model/clock.h"
#include "model/error.h"

#include <poll.h>
#include <stddef.h>

/* Read by the wrapped allocator on every call; a plain thread-local, no lock. */
_Thread_local struct sc_budget *sc_budget_tl;

void sc_budget_begin(struct sc_budget *b, uint64_t max)
{
    b->max = max > INT64_MAX ? INT64_MAX : (int64_t)max;
    atomic_store(&b->used, 0);
    atomic_store(&b->peak, 0);
    atomic_store(&b->over, 0);
    b->deadline_ns = 0;
    b->client_fd = -1;
    atomic_store(&b->next_client_ns, 0);
    atomic_store(&b->stopped, 0);
    sc_budget_tl = b;
}

void sc_budget_limit(struct sc_budget *b, int64_t timeout_ns, int client_fd)
{
    b->deadline_ns = timeout_ns > 0 ? sc_mono_ns() + timeout_ns : 0;
    b->client_fd = client_fd;
}

/* How often a running query looks whether its client is still there. */
#define CLIENT_CHECK_NS (50 * 1000000LL)

static int client_gone(int fd)
{
    struct pollfd pfd = {fd, POLLRDHUP, 0};
    return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

int sc_budget_poll(char *err)
{
    struct sc_budget *b = sc_budget_tl;
    if (!b)
        return 0;
    int stopped = atomic_load_explicit(&b->stopped, memory_order_relaxed);
    if (!stopped) {
        int64_t now = sc_mono_ns();
        if (b->deadline_ns && now > b->deadline_ns) {
            stopped = SC_BUDGET_TIME;
        } else if (b->client_fd >= 0 && now >= atomic_load(&b->next_client_ns)) {
            atomic_store(&b->next_client_ns, now + CLIENT_CHECK_NS);
            if (client_gone(b->client_fd))
                stopped = SC_BUDGET_GONE;
        }
        if (!stopped)
            return 0;
        atomic_store(&b->stopped, stopped);
    }
    return sc_errf(err, SC_ELIMIT, "%s",
                   stopped == SC_BUDGET_TIME ? "the query ran past its time budget"
                                             : "the client went away");
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
