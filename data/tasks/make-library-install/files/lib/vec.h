#ifndef MINI_VEC_H
#define MINI_VEC_H
#include <stddef.h>
#include "errcodes.h"
typedef struct { long *data; size_t len, cap; } vec;
void vec_init(vec *v);
void vec_free(vec *v);
int vec_push(vec *v, long x);          /* MINI_OK or MINI_ENOMEM */
int vec_get(const vec *v, size_t i, long *out); /* MINI_OK or MINI_ERANGE */
int vec_pop(vec *v, long *out);        /* MINI_OK or MINI_EEMPTY */
long vec_sum(const vec *v);
const char *mini_strerror(int code);
#endif
