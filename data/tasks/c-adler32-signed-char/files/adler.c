/* adler: print the Adler-32 checksum (RFC 1950) of each file named on the
 * command line, as 8 lowercase hex digits, two spaces, then the file name:
 *     0x11e60398 is printed as "11e60398  FILE"
 * Exit status 1 (and a message on stderr) if a file cannot be opened.
 */
#include <stdio.h>

#define MOD_ADLER 65521

static unsigned long adler32(FILE *f) {
    unsigned long a = 1, b = 0;
    char c;
    while ((c = getc(f)) != EOF) {
        a = (a + c) % MOD_ADLER;
        b = (b + a) % MOD_ADLER;
    }
    return (b << 16) | a;
}

int main(int argc, char **argv) {
    int status = 0;
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "r");
        if (!f) {
            fprintf(stderr, "adler: cannot open %s\n", argv[i]);
            status = 1;
            continue;
        }
        printf("%08lx  %s\n", adler32(f), argv[i]);
        fclose(f);
    }
    return status;
}
