/* The AEAD limit (issue 28): what opening one record costs with libsodium alone, no Coffer.
 *
 * A minimal record as spec/format.md §5 lays it out: a 256-byte padded plaintext sealed with
 * XChaCha20-Poly1305 (272 bytes of ciphertext and tag) under 72 bytes of associated data
 * ("coffer/record/v1", vault_id, log_id, seq, prev_tag), and its keyless body_check, the first
 * 8 bytes of BLAKE2b-256 over the 304-byte body (seq, nonce, ciphertext, tag).
 *
 *   aead-limit N     seals one record, then opens it N times (check + decrypt)
 *
 * Benchmarks/cost.sh runs it under callgrind with N = 1 and N = 1001: the difference / 1000 is
 * the instructions of one open, with the process start and the sealing cancelled out.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    long count = argc > 1 ? atol(argv[1]) : 1;
    if (sodium_init() < 0) return 2;
    unsigned char key[crypto_aead_xchacha20poly1305_ietf_KEYBYTES];
    unsigned char ad[72] = "coffer/record/v1";
    unsigned char plaintext[256] = {1, 0, 0, 0, 40};
    unsigned char body[8 + 24 + 256 + 16] = {0}; /* seq ‖ nonce ‖ ciphertext ‖ tag */
    unsigned char check[8];
    memset(key, 7, sizeof key);
    memset(ad + 16, 9, sizeof ad - 16);
    memset(body + 8, 3, 24);
    unsigned long long sealed_length = 0;
    crypto_aead_xchacha20poly1305_ietf_encrypt(body + 32, &sealed_length, plaintext, sizeof plaintext,
                                               ad, sizeof ad, NULL, body + 8, key);
    unsigned char digest[32];
    crypto_generichash(digest, sizeof digest, body, sizeof body, NULL, 0);
    memcpy(check, digest, sizeof check);

    unsigned char opened[256];
    for (long i = 0; i < count; i++) {
        crypto_generichash(digest, sizeof digest, body, sizeof body, NULL, 0);
        if (sodium_memcmp(digest, check, sizeof check) != 0) return 1;
        unsigned long long opened_length = 0;
        if (crypto_aead_xchacha20poly1305_ietf_decrypt(opened, &opened_length, NULL, body + 32, sealed_length,
                                                       ad, sizeof ad, body + 8, key) != 0) return 1;
    }
    printf("%d\n", opened[0]);
    return 0;
}
