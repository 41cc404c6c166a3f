/* Writes a Pwned Passwords-style SHA-1 list, sorted by hash, without sorting anything:
 *
 *     hibp-gen LINES SEED KNOWN.txt > list.txt
 *
 * LINES random hashes, each "HASH:COUNT\r\n" (40 upper-case hex digits, as the downloader writes),
 * plus every hash in KNOWN.txt (40 hex digits a line, sorted), merged in order. The random
 * hashes come out sorted because each one is the previous one's top 128 bits plus a random
 * increment (the bottom 32 bits random): no sort, no memory beyond a buffer, so 100 million lines
 * (about 4.4 GB) take about as long as writing them. Deterministic for a seed. Benchmark input
 * only (Benchmarks/hibp-compare.sh); not a model of the real list's counts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;
static uint64_t state[2];

static uint64_t next64(void) { /* xorshift128+ */
    uint64_t s1 = state[0];
    const uint64_t s0 = state[1];
    state[0] = s0;
    s1 ^= s1 << 23;
    state[1] = s1 ^ s0 ^ (s1 >> 17) ^ (s0 >> 26);
    return state[1] + s0;
}

static char out[1 << 20];
static size_t used;

static void flush(void) {
    if (fwrite(out, 1, used, stdout) != used) { perror("hibp-gen: write"); exit(1); }
    used = 0;
}

static void emit(u128 high, uint32_t low, uint64_t count) {
    static const char hex[] = "0123456789ABCDEF";
    if (used + 64 > sizeof out) flush();
    char *p = out + used;
    for (int i = 31; i >= 0; i--) { p[i] = hex[(unsigned)(high & 15)]; high >>= 4; }
    for (int i = 39; i >= 32; i--) { p[i] = hex[low & 15]; low >>= 4; }
    p += 40;
    *p++ = ':';
    char digits[24];
    int n = 0;
    do { digits[n++] = (char)('0' + count % 10); count /= 10; } while (count);
    while (n) *p++ = digits[--n];
    *p++ = '\r';
    *p++ = '\n';
    used = (size_t)(p - out);
}

static int parse(const char *line, u128 *high, uint32_t *low) {
    u128 h = 0;
    uint32_t l = 0;
    for (int i = 0; i < 40; i++) {
        char c = line[i];
        unsigned v = c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : 99;
        if (v == 99) return 0;
        if (i < 32) h = h << 4 | v; else l = l << 4 | v;
    }
    *high = h;
    *low = l;
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: hibp-gen LINES SEED KNOWN.txt\n"); return 2; }
    uint64_t lines = strtoull(argv[1], 0, 10);
    state[0] = strtoull(argv[2], 0, 10) * 0x9E3779B97F4A7C15ull + 1;
    state[1] = 0xD1B54A32D192ED03ull;
    for (int i = 0; i < 16; i++) next64();
    FILE *known = fopen(argv[3], "r");
    if (!known) { perror("hibp-gen: known hashes"); return 1; }
    char line[128];
    u128 kh = 0;
    uint32_t kl = 0;
    int haveKnown = 0;
#define NEXT_KNOWN() do { haveKnown = 0; while (fgets(line, sizeof line, known)) { if (parse(line, &kh, &kl)) { haveKnown = 1; break; } } } while (0)
    NEXT_KNOWN();
    /* Increments in [1, range]. From 100,000 lines their mean is 0.98 of the space per line, so
     * the hashes spread over the whole space as real ones do and the last stays below 2^128 (the
     * sum's spread is far below 2 % of it); fewer lines use half that, to be safe. */
    u128 per = (~(u128)0) / (lines ? lines : 1) / 100;
    u128 range = lines >= 100000 ? per * 196 : per * 98;
    u128 current = 0;
    for (uint64_t i = 0; i < lines; i++) {
        u128 r = ((u128)next64() << 64) | next64();
        current += 1 + r % range;
        uint32_t low = (uint32_t)next64();
        while (haveKnown && (kh < current || (kh == current && kl < low))) {
            emit(kh, kl, 1 + next64() % 100000);
            NEXT_KNOWN();
        }
        if (haveKnown && kh == current && kl == low) continue; /* the known one is written next round */
        emit(current, low, 1 + next64() % 1000);
    }
    while (haveKnown) { emit(kh, kl, 1 + next64() % 100000); NEXT_KNOWN(); }
    flush();
    return fclose(stdout) == 0 ? 0 : 1;
}
