/* forker.c - every 100 ms forks two short-lived children: one execs CHILD (which runs
 * child_hot for ~60 ms), one renames itself "forkling" and runs forkling_hot for ~60 ms;
 * the parent only waits for them. Usage: forker SECONDS CHILD */
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void forkling_hot(void)
{
    volatile int pad[8];
    double end = now() + 0.06;
    while (now() < end)
        for (int i = 0; i < 5000; i++) {
            pad[i & 7] = i;
            sink += (unsigned long)i;
        }
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    double end = now() + atof(argv[1]);
    while (now() < end) {
        pid_t a = fork();
        if (a == 0) {
            execl(argv[2], argv[2], (char *)NULL);
            _exit(127);
        }
        pid_t b = fork();
        if (b == 0) {
            prctl(PR_SET_NAME, "forkling", 0, 0, 0);
            forkling_hot();
            _exit(0);
        }
        waitpid(a, NULL, 0);
        waitpid(b, NULL, 0);
        usleep(40000);
    }
    return 0;
}
