/* auth.c - who a request is: its token (the server's or a tenant's) and the tenant it acts for.
 *
 * One function decides for every way in (HTTP routes, /ingest, OTLP/HTTP, Connect push and
 * the OTLP/gRPC metadata), so the rules cannot drift apart:
 *   - no token configured: anyone, for the tenant X-Scope-OrgID names (none: the default);
 *   - the server's token (auth.token): any tenant, chosen by X-Scope-OrgID;
 *   - a tenant's token (auth.tenants.NAME): that tenant only; no X-Scope-OrgID (or an empty
 *     one) means it, another tenant's name is refused (403), and so are routes that belong
 *     to the server rather than a tenant (the scrape targets).
 * A credential is a bearer token or the UI's cookie (SameSite=Strict). HTTP Basic auth is
 * refused, whatever its password: browsers keep Basic credentials and send them on their own
 * with cross-site requests, and the contract names Bearer only.
 * Every configured token is compared with every credential, in time that depends only on
 * the credential's length, so neither which token matched nor how much of one did can be
 * learnt from timings. */
#include "server/server_int.h"
#include "model/error.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

int sc_auth_token_equal(const char *a, size_t la, const char *b, size_t lb)
{
    if (!lb)
        return 0;
    unsigned char d = la != lb;
    for (size_t i = 0, j = 0; i < la; i++) {
        d |= (unsigned char)(a[i] ^ b[j]);
        j = j + 1 == lb ? 0 : j + 1;
    }
    return d == 0;
}

/* Whose a credential is: SC_WHO_SERVER, a tenant's index, or SC_WHO_NOBODY. Compares it
 * with every token, whichever matches. */
enum { SC_WHO_NOBODY = -2, SC_WHO_SERVER = -1 };
static int whose(const struct sc_server_opts *o, const char *cred, size_t len)
{
    int who = SC_WHO_NOBODY;
    if (o->token && sc_auth_token_equal(cred, len, o->token, strlen(o->token)))
        who = SC_WHO_SERVER;
    for (uint32_t i = 0; i < o->ntenant_tokens; i++)
        if (sc_auth_token_equal(cred, len, o->tenant_tokens[i], strlen(o->tenant_tokens[i])))
            who = (int)i;
    return who;
}

/* The credential of an Authorization header value: Bearer's token, nothing else. */
static int whose_header(const struct sc_server_opts *o, const char *h)
{
    if (!h || strncasecmp(h, "Bearer ", 7))
        return SC_WHO_NOBODY;
    h += 7;
    while (*h == ' ')
        h++;
    return whose(o, h, strlen(h));
}

int sc_server_auth_on(const struct sc_server_opts *o)
{
    return (o->token && *o->token) || o->ntenant_tokens > 0;
}

int sc_server_auth(const struct sc_server_opts *o, const struct sc_auth_in *in, char *tenant,
                   char *err)
{
    int who = SC_WHO_SERVER;
    if (sc_server_auth_on(o)) {
        who = whose_header(o, in->authorization);
        if (who == SC_WHO_NOBODY && in->cookie)
            who = whose(o, in->cookie, strlen(in->cookie));
        if (who == SC_WHO_NOBODY) {
            const char *a = in->authorization;
            snprintf(err, SC_ERR_LEN, "%s",
                     a && !strncasecmp(a, "Basic ", 6)
                         ? "basic auth is not accepted: send Authorization: Bearer TOKEN"
                         : "missing or wrong bearer token");
            return 401;
        }
    }
    const char *h = in->orgid ? in->orgid : "";
    if (strlen(h) > SC_TENANT_MAX || strchr(h, '\n') || strchr(h, '\r')) {
        snprintf(err, SC_ERR_LEN, "bad X-Scope-OrgID (one line of at most %d bytes)",
                 SC_TENANT_MAX);
        return 400;
    }
    if (who == SC_WHO_SERVER) {
        snprintf(tenant, SC_TENANT_MAX + 1, "%s", h);
        return 0;
    }
    const char *own = o->tenant_names[who];
    if (in->server_wide) {
        snprintf(err, SC_ERR_LEN,
                 "the token of tenant '%.64s' cannot read %s, which belong to the server (its "
                 "auth.token can)",
                 own, in->server_wide);
        return 403;
    }
    if (*h && strcmp(h, own)) {
        snprintf(err, SC_ERR_LEN,
                 "the token of tenant '%.64s' cannot act for tenant '%.64s' (X-Scope-OrgID): "
                 "send its own tenant or none",
                 own, h);
        return 403;
    }
    snprintf(tenant, SC_TENANT_MAX + 1, "%s", own);
    return 0;
}
