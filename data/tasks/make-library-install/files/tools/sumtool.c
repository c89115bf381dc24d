#include <stdio.h>
#include "vec.h"
int main(void) {
    vec v; vec_init(&v);
    long x;
    while (scanf("%ld", &x) == 1) vec_push(&v, x);
    long last;
    int e = vec_pop(&v, &last);
    if (e) { printf("error: %s\n", mini_strerror(e)); return 1; }
    vec_push(&v, last);
    printf("count=%zu sum=%ld last=%ld\n", v.len, vec_sum(&v), last);
    vec_free(&v);
    return 0;
}
