#include <stdlib.h>
#include <string.h>
#include "strbuf.h"
#include "errcodes.h"
void sb_init(strbuf *b) { b->s = calloc(1, 1); b->len = 0; b->cap = 1; }
void sb_free(strbuf *b) { free(b->s); b->s = NULL; b->len = b->cap = 0; }
int sb_append(strbuf *b, const char *t) {
    size_t n = strlen(t);
    if (b->len + n + 1 > b->cap) {
        size_t nc = (b->len + n + 1) * 2;
        char *s = realloc(b->s, nc);
        if (!s) return MINI_ENOMEM;
        b->s = s; b->cap = nc;
    }
    memcpy(b->s + b->len, t, n + 1);
    b->len += n;
    return MINI_OK;
}
int sb_join(strbuf *b, const char *sep, char *const *parts, size_t n) {
    for (size_t i = 0; i < n; i++) {
        int e = i ? sb_append(b, sep) : MINI_OK;
        if (e || (e = sb_append(b, parts[i]))) return e;
    }
    return MINI_OK;
}
