#include <stdio.h>
#include <string.h>
#include "vec.h"
#include "strbuf.h"
int main(void) {
    vec v; vec_init(&v);
    long x;
    int fails = 0;
    fails += vec_pop(&v, &x) != MINI_EEMPTY;
    for (long i = 1; i <= 100; i++) vec_push(&v, i);
    fails += vec_sum(&v) != 5050;
    fails += vec_get(&v, 100, &x) != MINI_ERANGE;
    fails += strcmp(mini_strerror(MINI_ERANGE), "index out of range") != 0;
    strbuf b; sb_init(&b);
    char *parts[] = {"a", "b", "c"};
    sb_join(&b, ", ", parts, 3);
    fails += strcmp(b.s, "a, b, c") != 0;
    printf("%s\n", fails ? "FAIL" : "all tests passed");
    return fails != 0;
}
