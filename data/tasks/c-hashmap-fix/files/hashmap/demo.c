#include <stdio.h>
#include "hashmap.h"

static void show(const char *k, long v, void *ctx) { (void)ctx; printf("%s=%ld\n", k, v); }

int main(void) {
    hashmap *m = hm_new();
    char buf[32];
    for (int i = 0; i < 20; i++) {
        snprintf(buf, sizeof buf, "key%d", i);
        hm_put(m, buf, i * i);
    }
    hm_del(m, "key3");
    long v = -1;
    printf("size=%zu key7=%d", hm_size(m), hm_get(m, "key7", &v));
    printf(" v=%ld\n", v);
    hm_each(m, show, NULL);
    hm_free(m);
    return 0;
}
