#include <stdlib.h>
#include "vec.h"
void vec_init(vec *v) { v->data = NULL; v->len = v->cap = 0; }
void vec_free(vec *v) { free(v->data); vec_init(v); }
int vec_push(vec *v, long x) {
    if (v->len == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 8;
        long *d = realloc(v->data, nc * sizeof *d);
        if (!d) return MINI_ENOMEM;
        v->data = d; v->cap = nc;
    }
    v->data[v->len++] = x;
    return MINI_OK;
}
int vec_get(const vec *v, size_t i, long *out) { if (i >= v->len) return MINI_ERANGE; *out = v->data[i]; return MINI_OK; }
int vec_pop(vec *v, long *out) { if (!v->len) return MINI_EEMPTY; *out = v->data[--v->len]; return MINI_OK; }
long vec_sum(const vec *v) { long s = 0; for (size_t i = 0; i < v->len; i++) s += v->data[i]; return s; }
const char *mini_strerror(int code) {
    if (code < 0 || (size_t)code >= sizeof mini_errmsg / sizeof *mini_errmsg || !mini_errmsg[code]) return "unknown error";
    return mini_errmsg[code];
}
