#include <stdio.h>
#include "strbuf.h"
int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: joiner SEP [PART...]\n"); return 2; }
    strbuf b; sb_init(&b);
    sb_join(&b, argv[1], argv + 2, (size_t)(argc - 2));
    puts(b.s);
    sb_free(&b);
    return 0;
}
