// keel recordings: CRC-32 (the IEEE 802.3 polynomial, reflected, as zlib and
// PNG use it), table-driven; and the error helpers. MIT licence, see LICENSE.
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "rec_internal.h"

// The table for one byte at a time, built once at first use (writers and
// cursors may call from several threads: pthread_once).
static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_build(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

uint32_t rec_crc32_update(uint32_t crc, const void *data, size_t n)
{
    pthread_once(&crc_once, crc_build);
    const uint8_t *p = data;
    uint32_t c = ~crc;
    for (size_t i = 0; i < n; i++)
        c = crc_table[(c ^ p[i]) & 0xFFu] ^ (c >> 8);
    return ~c;
}

uint32_t rec_crc32(const void *data, size_t n) { return rec_crc32_update(0, data, n); }

void rec_error_clear(rec_error *err)
{
    if (err)
        *err = (rec_error){0};
}

void rec_error_set(rec_error *err, uint64_t offset, const char *chunk, const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->offset = offset;
    memset(err->chunk, 0, sizeof err->chunk);
    if (chunk) {
        for (int i = 0; i < 4 && chunk[i]; i++) {
            char c = chunk[i];
            err->chunk[i] = (c >= 0x20 && c < 0x7F) ? c : '?';
        }
    }
}
