/* test_auth.c - tokens and tenants (server/auth.c) and the auth / server.tls config keys. */
#include "t.h"

#include "model/error.h"
#include "config/config.h"
#include "server/server_int.h"

#include <unistd.h>

static const char *const names[] = {"acme", "beta"};
static const char *const tokens[] = {"acme-token", "beta-token"};

/* sc_server_auth's status for (authorization, cookie, orgid, server_wide), with the tenant. */
static int who(const struct sc_server_opts *o, const char *authz, const char *cookie,
               const char *orgid, const char *server_wide, char *tenant, char *err)
{
    struct sc_auth_in in = {authz, cookie, orgid, server_wide};
    tenant[0] = 0;
    err[0] = 0;
    return sc_server_auth(o, &in, tenant, err);
}

static void test_tokens(void)
{
    struct sc_server_opts o;
    sc_server_opts_init(&o);
    char tenant[SC_TENANT_MAX + 1], err[SC_ERR_LEN];
    /* no token: anyone, for the header's tenant */
    T_EQ_INT(sc_server_auth_on(&o), 0);
    T_EQ_INT(who(&o, NULL, NULL, "t1", NULL, tenant, err), 0);
    T_EQ_STR(tenant, "t1");
    T_EQ_INT(who(&o, NULL, NULL, "t1", "the scrape targets", tenant, err), 0);

    o.token = "server-token";
    o.tenant_names = names;
    o.tenant_tokens = tokens;
    o.ntenant_tokens = 2;
    T_EQ_INT(sc_server_auth_on(&o), 1);
    /* the server's token: any tenant, by the header */
    T_EQ_INT(who(&o, "Bearer server-token", NULL, NULL, NULL, tenant, err), 0);
    T_EQ_STR(tenant, "");
    T_EQ_INT(who(&o, "bearer  server-token", NULL, "beta", NULL, tenant, err), 0);
    T_EQ_STR(tenant, "beta");
    T_EQ_INT(who(&o, "Bearer server-token", NULL, NULL, "the scrape targets", tenant, err), 0);
    /* a tenant's token: its tenant, by no header, an empty one or its own name */
    T_EQ_INT(who(&o, "Bearer acme-token", NULL, NULL, NULL, tenant, err), 0);
    T_EQ_STR(tenant, "acme");
    T_EQ_INT(who(&o, "Bearer acme-token", NULL, "", NULL, tenant, err), 0);
    T_EQ_STR(tenant, "acme");
    T_EQ_INT(who(&o, "Bearer beta-token", NULL, "beta", NULL, tenant, err), 0);
    T_EQ_STR(tenant, "beta");
    /* ... never another one's, nor the server's routes */
    T_EQ_INT(who(&o, "Bearer acme-token", NULL, "beta", NULL, tenant, err), 403);
    T_CHECK(strstr(err, "'acme'") && strstr(err, "'beta'") && strstr(err, "X-Scope-OrgID"));
    T_EQ_STR(tenant, "");
    T_EQ_INT(who(&o, "Bearer acme-token", NULL, "", "the scrape targets", tenant, err), 403);
    T_CHECK(strstr(err, "scrape targets") != NULL);
    /* Basic auth is refused, even with a right token as the password, and says so */
    T_EQ_INT(who(&o, "Basic dTpiZXRhLXRva2Vu", NULL, NULL, NULL, tenant, err),
             401); /* u:beta-token */
    T_CHECK(strstr(err, "basic auth is not accepted") != NULL);
    T_EQ_STR(tenant, "");
    T_EQ_INT(who(&o, "basic OmJldGEtdG9rZW4=", NULL, NULL, NULL, tenant, err),
             401); /* :beta-token */
    /* the UI's cookie, when the header has none */
    T_EQ_INT(who(&o, NULL, "acme-token", NULL, NULL, tenant, err), 0);
    T_EQ_STR(tenant, "acme");
    /* wrong, missing, prefixes and extensions of a token, the empty token */
    const char *bad[] = {NULL,
                         "",
                         "Bearer ",
                         "Bearer acme",
                         "Bearer acme-token2",
                         "Bearer acme-tokenacme-token",
                         "Bearer server",
                         "Token acme-token",
                         "Beareracme-token",
                         "acme-token"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        T_EQ_INT(who(&o, bad[i], NULL, NULL, NULL, tenant, err), 401);
        T_EQ_STR(err, "missing or wrong bearer token");
    }
    T_EQ_INT(who(&o, NULL, "", NULL, NULL, tenant, err), 401);
    /* a bad tenant header is 400, after the token */
    char longname[SC_TENANT_MAX + 2];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    T_EQ_INT(who(&o, "Bearer server-token", NULL, longname, NULL, tenant, err), 400);
    T_EQ_INT(who(&o, "Bearer server-token", NULL, "a\nb", NULL, tenant, err), 400);
    T_EQ_INT(who(&o, "Bearer nope", NULL, longname, NULL, tenant, err), 401);
    longname[SC_TENANT_MAX] = 0; /* 127 bytes: fine */
    T_EQ_INT(who(&o, "Bearer server-token", NULL, longname, NULL, tenant, err), 0);
    T_EQ_STR(tenant, longname);

    /* tenants only, no server token: the default tenant is nobody's */
    o.token = NULL;
    T_EQ_INT(who(&o, "Bearer server-token", NULL, NULL, NULL, tenant, err), 401);
    T_EQ_INT(who(&o, "Bearer beta-token", NULL, NULL, NULL, tenant, err), 0);
    T_EQ_STR(tenant, "beta");
}

static int parse(const char *y, struct sc_config *c, char *err)
{
    err[0] = 0;
    return sc_config_parse(y, strlen(y), "t.yaml", c, err);
}

static void test_config(void)
{
    char tf[] = "/tmp/scorch-test-auth-XXXXXX";
    int fd = mkstemp(tf);
    T_CHECK(fd >= 0);
    T_EQ_INT(write(fd, "from-file\n", 10), 10);
    close(fd);
    char y[1024], err[SC_ERR_LEN];
    struct sc_config c;
    snprintf(y, sizeof y,
             "auth:\n  token: srv\n  tenants:\n    acme: {token_file: %s}\n    beta: {token: b}\n"
             "server: {tls: {cert_file: c.pem, key_file: k.pem}, shutdown_timeout: 3s}\n",
             tf);
    T_EQ_INT(parse(y, &c, err), 0);
    T_EQ_STR(c.auth_token, "srv");
    T_EQ_INT(c.ntenants, 2);
    if (c.ntenants == 2) {
        T_EQ_STR(c.tenant_names[0], "acme");
        T_EQ_STR(c.tenant_tokens[0], "from-file");
        T_EQ_STR(c.tenant_names[1], "beta");
        T_EQ_STR(c.tenant_tokens[1], "b");
    }
    T_EQ_STR(c.tls_cert, "c.pem");
    T_EQ_STR(c.tls_key, "k.pem");
    T_EQ_INT(c.shutdown_timeout_ns, 3000000000LL);
    sc_config_release(&c);

    static const struct {
        const char *yaml, *word;
    } bad[] = {
        {"auth: {token: ''}", "empty"},
        {"auth: {token: a, token_file: /nonexistent}", "both token and token_file"},
        {"auth: {tenants: {acme: {token: ''}}}", "empty"},
        {"auth: {tenants: {acme: {}}}", "needs a token"},
        {"auth: {tenants: {acme: {token: a, token_file: /x}}}", "both"},
        {"auth: {tenants: {acme: {token_file: /nonexistent/t}}}", "cannot read token file"},
        {"auth: {tenants: {acme: {tokn: a}}}", "unknown key 'tokn'"},
        {"auth: {tenants: {acme: a}}", "must be {token"},
        {"auth: {tenants: [acme]}", "must be a mapping"},
        {"auth: {tenants: {acme: {token: a}, beta: {token: a}}}", "same token"},
        {"auth: {token: a, tenants: {acme: {token: a}}}", "server's token"},
        {"auth: {tenants: {acme: {token: a}, acme: {token: b}}}", "duplicate key 'acme'"},
        {"auth: {tenants: {'': {token: a}}}", "bad tenant name"},
        {"server: {tls: {cert_file: c.pem}}", "both cert_file and key_file"},
        {"server: {tls: {cert_file: c.pem, key_file: k.pem, ca: x}}", "unknown key 'ca'"},
        {"server: {tls: yes}", "must be a mapping"},
        {"server: {shutdown_timeout: 0s}", "shutdown_timeout"},
        {"server: {shutdown_timeout: soon}", "shutdown_timeout"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = parse(bad[i].yaml, &c, err);
        T_EQ_INT(rc, SC_EINVAL);
        if (!strstr(err, bad[i].word))
            fprintf(stderr, "  %s: error '%s' lacks '%s'\n", bad[i].yaml, err, bad[i].word);
        T_CHECK(strstr(err, bad[i].word) != NULL);
        sc_config_release(&c);
    }
    /* a tenant name longer than X-Scope-OrgID may be */
    char name[SC_TENANT_MAX + 2];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = 0;
    snprintf(y, sizeof y, "auth: {tenants: {%s: {token: a}}}", name);
    T_EQ_INT(parse(y, &c, err), SC_EINVAL);
    T_CHECK(strstr(err, "bad tenant name") != NULL);
    sc_config_release(&c);
    name[SC_TENANT_MAX] = 0;
    snprintf(y, sizeof y, "auth: {tenants: {%s: {token: a}}}", name);
    T_EQ_INT(parse(y, &c, err), 0);
    sc_config_release(&c);
    unlink(tf);
}

int main(void)
{
    T_RUN(test_tokens);
    T_RUN(test_config);
    return t_done();
}
