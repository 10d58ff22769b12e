/* syscall.c - busy in the kernel: reader() reads /dev/zero in 1 MiB chunks. On x86-64 it
 * issues the system call itself (no libc wrapper, which has no frame pointer), so the
 * stack is main -> reader -> kernel frames. Usage: syscall SECONDS */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 20];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) long reader(int fd)
{
    volatile int pad[4];
    long ret;
#if defined(__x86_64__)
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(0L), "D"((long)fd), "S"(buf), "d"((long)sizeof buf)
                     : "rcx", "r11", "memory");
#else
    ret = read(fd, buf, sizeof buf);
#endif
    pad[0] = (int)ret;
    return pad[0];
}

int main(int argc, char **argv)
{
    int fd = open("/dev/zero", O_RDONLY);
    if (fd < 0)
        return 1;
    double end = now() + (argc > 1 ? atof(argv[1]) : 5);
    while (now() < end)
        reader(fd);
    return 0;
}
