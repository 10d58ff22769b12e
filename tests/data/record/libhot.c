/* libhot.c - a shared library's hot function for `scorch record` tests: lib_entry ->
 * lib_hot. Built as libhot.so (linked by uselib) and as liblate.so (dlopen'ed by uselib
 * after recording began, named late_entry / late_hot by -DLATE). */
#ifdef LATE
#define lib_entry late_entry
#define lib_hot late_hot
#endif

volatile unsigned long lib_sink;

__attribute__((noinline)) void lib_hot(void)
{
    volatile int pad[8];
    for (int i = 0; i < 20000; i++) {
        pad[i & 7] = i;
        lib_sink += (unsigned long)i * 3u;
    }
}

__attribute__((noinline)) void lib_entry(void)
{
    volatile int pad[4];
    pad[0] = 0;
    for (int i = 0; i < 10; i++)
        lib_hot();
    lib_sink += (unsigned long)pad[0];
}
