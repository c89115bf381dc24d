#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char A[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

static void enc(uint32_t v, char *o)
{
    for (int i = 3; i >= 0; i--) {
        o[i] = A[v & 31];
        v >>= 5;
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: checker USERNAME KEY\n");
        return 2;
    }
    const unsigned char *u = (const unsigned char *)argv[1];
    uint32_t h = 0x811C9DC5u;
    for (; *u; u++) {
        h ^= *u;
        h *= 16777619u;
    }
    char k[20];
    enc(h & 0xFFFFF, k);
    k[4] = '-';
    enc(((h >> 12) ^ 0x5A5A5) & 0xFFFFF, k + 5);
    k[9] = '-';
    enc(((h << 7) | (h >> 25)) & 0xFFFFF, k + 10);
    k[14] = '-';
    uint32_t s = 0;
    for (int i = 0; i < 14; i++)
        if (k[i] != '-')
            s = s * 31 + (unsigned char)k[i];
    enc(s & 0xFFFFF, k + 15);
    k[19] = 0;
    volatile int ok = strlen(argv[2]) == 19;
    for (int i = 0; i < 19 && ok; i++)
        ok = argv[2][i] == k[i];
    puts(ok ? "VALID" : "INVALID");
    return ok ? 0 : 1;
}
