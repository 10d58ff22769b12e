/* libver.c - a shared library function exported under a symbol version: the static linker
 * leaves its name in .symtab as "ver_spin@@VER_1" (as libc's __libc_start_main@@GLIBC_2.34),
 * beside the local ver_spin_impl at the same address. Link with a version script giving
 * VER_1 { global: ver_spin; local: *; }; */
volatile unsigned long ver_sink;

__attribute__((noinline)) void ver_spin_impl(void)
{
    for (unsigned long i = 0; i < 200000; i++)
        ver_sink += i * i;
}
__asm__(".symver ver_spin_impl, ver_spin@@VER_1");
