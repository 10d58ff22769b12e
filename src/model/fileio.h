/* fileio.h - the small file-system steps of the on-disk queue and log. */
#ifndef SC_FILEIO_H
#define SC_FILEIO_H

#include <stddef.h>

/* mkdir -p dir (mode 0755): 0, or -1 with errno set (a path of 4096 bytes or more: -1). */
int sc_mkdir_p(const char *dir);

/* Writes all n bytes of p to fd, again after EINTR and short writes: 0, or -1 (errno set,
 * or 0 when the write wrote nothing). */
int sc_write_all(int fd, const void *p, size_t n);

#endif
