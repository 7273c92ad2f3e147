// keel-sim: number formatting and the final line. MIT licence, see LICENSE.
//
// Numbers are formatted from the fixed-point values with integer arithmetic
// only, so the text is the same on every machine.
#include "keel_sim.h"

#include <inttypes.h>
#include <string.h>

void ks_format_fx(char *buf, size_t size, sim_fx v)
{
    uint32_t m = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
    uint64_t whole = m >> 16;
    // Six digits of the 16-bit fraction, rounded half up on the magnitude.
    uint64_t frac = ((uint64_t)(m & 0xFFFFu) * 1000000u + 32768u) >> 16;
    if (frac >= 1000000u) {
        whole++;
        frac -= 1000000u;
    }
    // A non-zero raw value is at least 0.000015 in magnitude, so a printed
    // "-0.000000" cannot occur.
    snprintf(buf, size, "%s%" PRIu64 ".%06" PRIu64, v < 0 ? "-" : "", whole, frac);
}

void ks_format_fx_exact(char *buf, size_t size, sim_fx v)
{
    uint32_t m = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
    uint32_t frac16 = m & 0xFFFFu;
    if (frac16 == 0) {
        snprintf(buf, size, "%s%" PRIu32, v < 0 ? "-" : "", m >> 16);
        return;
    }
    // frac16 / 2^16 = frac16 * 5^16 / 10^16 exactly, and 5^16 = 152587890625
    // times a 16-bit number stays below 10^16.
    char digits[24];
    snprintf(digits, sizeof digits, "%016" PRIu64, (uint64_t)frac16 * UINT64_C(152587890625));
    size_t n = strlen(digits);
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    snprintf(buf, size, "%s%" PRIu32 ".%s", v < 0 ? "-" : "", m >> 16, digits);
}

void ks_write_final(const ks_writer *w, uint64_t state_hash)
{
    fprintf(w->f, "final_hash %016" PRIx64 "\n", state_hash);
}
