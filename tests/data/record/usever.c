/* usever.c - calls libver's versioned ver_spin for SECONDS (default 5). Usage: usever SECONDS */
#include <stdlib.h>
#include <time.h>

void ver_spin(void);

int main(int argc, char **argv)
{
    time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 5);
    while (time(NULL) < end)
        ver_spin();
    return 0;
}
