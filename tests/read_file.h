/* A whole file into a malloc'd buffer (one spare byte), shared by the
 * tests that load models themselves: NULL when it cannot be read. */
#ifndef PFVM_TEST_READ_FILE_H
#define PFVM_TEST_READ_FILE_H

#include <stdio.h>
#include <stdlib.h>

static unsigned char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    long len;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = (unsigned char *)malloc((size_t)len + 1)) && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        *n = (size_t)len;
    fclose(f);
    return buf;
}

#endif
