/* api_watch.c - what changed over time: /api/v1/changes (query/watch.h) and the label-value
 * markers every timeline draws (/api/v1/markers). */
#include "model/error.h"
#include "query/plan.h"
#include "query/watch.h"
#include "server/server_int.h"

#include <stdlib.h>
#include <string.h>

static int changes_run(struct sc_req *r, struct sc_resp *w)
{
    struct sc_watch_args a = {sc_req_arg(r, "group_by"), 0, 0, 0, 0, sc_req_arg(r, "labels")};
    if (sc_api_step(r, w, &a.step_ns) || sc_api_level(r, w, &a.level))
        return 0;
    struct sc_set_value nf;
    if (sc_api_setting(r, w, SC_SET_PARAM_FUNCTIONS, &nf))
        return 0;
    a.max_funcs = (uint32_t)nf.i;
    struct sc_selection s;
    if (sc_api_selection(r, w, "", 1, &s)) {
        sc_selection_release(&s);
        return 0;
    }
    char err[SC_ERR_LEN] = "";
    struct sc_watch wt;
    int rc = sc_plan_watch(r->srv->store, r->tenant, &s, &a, &wt, err);
    if (rc == 0)
        sc_watch_write_json(&wt, &w->body);
    sc_watch_release(&wt);
    sc_selection_release(&s);
    return rc ? sc_api_query_fail(w, rc, err) : 0;
}

static int markers_run(struct sc_req *r, struct sc_resp *w)
{
    struct sc_selection s;
    if (sc_api_selection(r, w, "", 1, &s)) {
        sc_selection_release(&s);
        return 0;
    }
    char err[SC_ERR_LEN] = "";
    struct sc_marker *m = NULL;
    uint32_t n = 0;
    const char *group = sc_req_arg(r, "group_by");
    int rc =
        sc_plan_markers(r->srv->store, r->tenant, &s, group, sc_req_arg(r, "labels"), &m, &n, err);
    if (rc == 0)
        sc_markers_write_json(group, m, n, &w->body);
    sc_markers_free(m, n);
    sc_selection_release(&s);
    return rc ? sc_api_query_fail(w, rc, err) : 0;
}

int sc_api_changes(struct sc_req *r, struct sc_resp *w)
{
    return sc_api_admitted(r, w, changes_run);
}

int sc_api_markers(struct sc_req *r, struct sc_resp *w)
{
    return sc_api_admitted(r, w, markers_run);
}
