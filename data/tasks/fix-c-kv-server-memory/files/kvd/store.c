#include <stdlib.h>
#include <string.h>
#include "store.h"

struct entry { char key[33]; char value[201]; int used; };
static struct entry table[MAX_KEYS];

static struct entry *find(const char *key) {
    for (int i = 0; i < MAX_KEYS; i++)
        if (table[i].used && strcmp(table[i].key, key) == 0) return &table[i];
    return NULL;
}

int store_set(const char *key, const char *value) {
    struct entry *e = find(key);
    if (!e) {
        for (int i = 0; i < MAX_KEYS; i++) if (!table[i].used) { e = &table[i]; break; }
        if (!e) return -1;
    }
    strcpy(e->key, key);
    strcpy(e->value, value);
    e->used = 1;
    return 0;
}

const char *store_get(const char *key) {
    struct entry *e = find(key);
    return e ? e->value : NULL;
}

int store_del(const char *key) {
    struct entry *e = find(key);
    if (!e) return -1;
    e->used = 0;
    return 0;
}

int store_count(void) {
    int n = 0;
    for (int i = 0; i < MAX_KEYS; i++) n += table[i].used;
    return n;
}
