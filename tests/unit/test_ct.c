/* test_ct.c - the token comparison is constant-time: no branch and no address depends on
 * the bytes of the client's credential or of the configured token.
 *
 * Checked the way ctgrind does: under valgrind's memcheck both are marked undefined
 * ("secret") before the comparison, so a jump or an address computed from them is
 * reported, and the run fails (--error-exitcode). Run without valgrind, the test starts
 * itself again under it; where valgrind is missing, or in the ASan tree (the two do not
 * mix), it is skipped and says so. */
#include "t.h"

#include "server/server_int.h"

#include <unistd.h>
#include <valgrind/memcheck.h>

/* The comparison with both inputs secret: copies marked undefined, the result marked
 * defined again (the caller branches on it, as the server does: that is not a leak of
 * where they differ). */
static int secret_equal(const char *a, size_t la, const char *b, size_t lb)
{
    char *sa = malloc(la + 1), *sb = malloc(lb + 1);
    memcpy(sa, a, la + 1);
    memcpy(sb, b, lb + 1);
    VALGRIND_MAKE_MEM_UNDEFINED(sa, la);
    VALGRIND_MAKE_MEM_UNDEFINED(sb, lb);
    int r = sc_auth_token_equal(sa, la, sb, lb);
    VALGRIND_MAKE_MEM_DEFINED(&r, sizeof r);
    free(sa);
    free(sb);
    return r;
}

static void test_equal(void)
{
    static const char tok[] = "s3cr3t-token-0123456789abcdef";
    size_t n = sizeof tok - 1;
    T_EQ_INT(secret_equal(tok, n, tok, n), 1);
    char other[sizeof tok];
    for (size_t i = 0; i < n; i += 7) { /* a byte differing at the start, middle, end */
        memcpy(other, tok, sizeof tok);
        other[i] ^= 1;
        T_EQ_INT(secret_equal(other, n, tok, n), 0);
    }
    T_EQ_INT(secret_equal(tok, n - 1, tok, n), 0); /* a prefix */
    T_EQ_INT(secret_equal("", 0, tok, n), 0);
    char longer[2 * sizeof tok];
    memcpy(longer, tok, n);
    memcpy(longer + n, tok, sizeof tok); /* the token twice: wraps around b, still unequal */
    T_EQ_INT(secret_equal(longer, 2 * n, tok, n), 0);
    T_EQ_INT(secret_equal(tok, n, "", 0), 0); /* no token configured matches nothing */
}

int main(int argc, char **argv)
{
    (void)argc;
#if defined(__SANITIZE_ADDRESS__)
    T_SKIP("valgrind does not run ASan builds: the plain tree's test_ct checks this");
#endif
    if (!RUNNING_ON_VALGRIND) {
        if (system("valgrind --version >/dev/null 2>&1") != 0)
            T_SKIP("valgrind is not installed: the constant-time check needs it");
        fflush(NULL);
        execlp("valgrind", "valgrind", "--quiet", "--error-exitcode=1", "--track-origins=yes",
               argv[0], (char *)NULL);
        perror("test_ct: valgrind");
        return 1;
    }
    T_RUN(test_equal);
    return t_done();
}
