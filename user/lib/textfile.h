/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Opening the files that configure the limiter: apply's YAML file, a rule's
 * source file (--src-file, src-file:), simulate's rules. Only a regular file
 * of a bounded size is read: a FIFO without a writer would block the command
 * forever, and /dev/zero or a growing file would fill its memory.
 */
#ifndef RL_TEXTFILE_H
#define RL_TEXTFILE_H

#include <stddef.h>
#include <stdio.h>

/*
 * Open @path for reading, close-on-exec. It must be a regular file (it is
 * stat()ed first, so that a device is never opened: opening some has an
 * effect, a watchdog's for one, and fstat()ed again once open) of at most
 * @max bytes. An fd, or negative errno with a message naming @path in @err:
 * -EINVAL "'PATH' is a FIFO, not a regular file" (a character device, a
 * directory...), -EFBIG "'PATH' is larger than N MiB", or open()'s errno.
 */
int rl_textfile_open(const char *path, size_t max, char *err, size_t errlen);

/*
 * The same as a stdio stream. The file may still grow after the check:
 * callers that read it count the bytes against @max again (rl_textfile_read()
 * does).
 */
FILE *rl_textfile_fopen(const char *path, size_t max, int *ret, char *err, size_t errlen);

/*
 * All of @path, at most @max bytes, into *@buf (NUL-terminated, free() it),
 * its length into *@len. 0 or negative errno with a message in @err.
 */
int rl_textfile_read(const char *path, size_t max, char **buf, size_t *len, char *err,
		     size_t errlen);

/* "512 KiB", "16 MiB": a size limit for a message. */
const char *rl_textfile_size_str(size_t n, char *buf, size_t len);

#endif /* RL_TEXTFILE_H */
