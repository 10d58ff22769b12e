/* libnofp.c - nofp.c's shared library, built -O2 -fomit-frame-pointer: lib_entry ->
 * lib_hot, a leaf without a stack frame. */
volatile unsigned long lib_sink;

__attribute__((noinline)) unsigned long lib_hot(unsigned long x)
{
    for (int i = 0; i < 200000; i++)
        x = (x + (unsigned long)i) * 2862933555777941757ul;
    return x;
}

__attribute__((noinline)) void lib_entry(unsigned long n)
{
    volatile unsigned long pad[4];
    pad[0] = lib_hot(n);
    lib_sink += pad[0] + pad[1];
}
