#include <string.h>
#include "store.h"

void store_put(store *s, const char *key, int val) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->keys[i], key) == 0) { s->vals[i] = val; return; }
    s->keys[s->n] = key;
    s->vals[s->n++] = val;
}

/* get_val: look up key, return dflt when it is missing */
int get_val(const store *s, const char *key, int dflt) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->keys[i], key) == 0) return s->vals[i];
    return dflt;
}

int get_vals(const store *s, int *out) {
    for (int i = 0; i < s->n; i++) out[i] = get_val(s, s->keys[i], 0);
    return s->n;
}

int get_val_count(const store *s) { return s->n; }
