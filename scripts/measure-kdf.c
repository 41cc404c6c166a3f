/* Times libsodium's Argon2id (crypto_pwhash, parallelism 1) at Coffer's presets.
 * Built and run by scripts/measure-kdf.sh; the figures feed spec/crypto.md §7.
 * Prints the fastest of N runs per preset (the least disturbed by other load). */
#include <sodium.h>
#include <stdio.h>
#include <time.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

int main(int argc, char **argv) {
    if (sodium_init() < 0) return 1;
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    struct { const char *name; unsigned long long ops; size_t mem; } presets[] = {
        {"minimal", 1, 8 * 1024},
        {"pin (t=2, 64 MiB)", 2, 64u << 20},
        {"interactive", 2, 64u << 20},
        {"standard", 16, 64u << 20},
        {"moderate", 3, 256u << 20},
        {"sensitive", 4, 1024u << 20},
    };
    unsigned char out[32], salt[16] = {0};
    for (size_t p = 0; p < sizeof presets / sizeof presets[0]; p++) {
        double best = 1e9;
        for (int r = 0; r < runs; r++) {
            double start = now();
            if (crypto_pwhash(out, 32, "password", 8, salt, presets[p].ops, presets[p].mem, crypto_pwhash_ALG_ARGON2ID13) != 0) return 2;
            double t = now() - start;
            if (t < best) best = t;
        }
        printf("%-20s t=%llu m=%zu MiB  %.1f ms\n", presets[p].name, presets[p].ops, presets[p].mem >> 20, best * 1000);
    }
    return 0;
}
