/* threads.c - a thread from the start (early_main -> early_work) and one started only once
 * GO_FILE exists (late_main -> late_work), i.e. after recording began. The main thread
 * sleeps. Usage: threads SECONDS GO_FILE */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;
static double end_at;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void early_work(void)
{
    volatile int pad[8];
    for (int i = 0; i < 20000; i++) {
        pad[i & 7] = i;
        sink += (unsigned long)i;
    }
}

__attribute__((noinline)) void late_work(void)
{
    volatile int pad[8];
    for (int i = 0; i < 20000; i++) {
        pad[i & 7] = i;
        sink ^= (unsigned long)i * 7u;
    }
}

__attribute__((noinline)) void *early_main(void *arg)
{
    volatile int pad[4];
    pad[0] = 0;
    (void)arg;
    while (now() < end_at)
        early_work();
    return (void *)(long)pad[0];
}

__attribute__((noinline)) void *late_main(void *arg)
{
    volatile int pad[4];
    pad[0] = 0;
    (void)arg;
    while (now() < end_at)
        late_work();
    return (void *)(long)pad[0];
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    end_at = now() + atof(argv[1]);
    pthread_t a, b;
    pthread_create(&a, NULL, early_main, NULL);
    while (access(argv[2], F_OK) != 0 && now() < end_at)
        usleep(10000);
    pthread_create(&b, NULL, late_main, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
