#include <stdlib.h>
#include <string.h>
#include "hashmap.h"

struct entry { char *key; long value; int state; }; /* state: 0 empty, 1 used */
struct hashmap { struct entry *slots; size_t cap, size; };

static size_t hash(const char *s) {
    size_t h = 5381;
    for (; *s; s++) h = h * 33 + *s;
    return h;
}

hashmap *hm_new(void) {
    hashmap *m = malloc(sizeof *m);
    if (!m) return NULL;
    m->cap = 8;
    m->size = 0;
    m->slots = calloc(m->cap, sizeof *m->slots);
    return m;
}

void hm_free(hashmap *m) {
    free(m->slots);
    free(m);
}

static struct entry *find(const hashmap *m, const char *key) {
    size_t i = hash(key) % m->cap;
    while (m->slots[i].state) {
        if (strcmp(m->slots[i].key, key) == 0) return &m->slots[i];
        i = (i + 1) % m->cap;
    }
    return NULL;
}

static int grow(hashmap *m) {
    struct entry *old = m->slots;
    size_t oldcap = m->cap;
    m->cap *= 2;
    m->slots = calloc(m->cap, sizeof *m->slots);
    if (!m->slots) return -1;
    for (size_t j = 0; j < oldcap; j++) {
        if (old[j].state != 1) continue;
        size_t i = hash(old[j].key) % oldcap;
        while (m->slots[i].state) i = (i + 1) % m->cap;
        m->slots[i] = old[j];
    }
    free(old);
    return 0;
}

int hm_put(hashmap *m, const char *key, long value) {
    struct entry *e = find(m, key);
    if (e) { e->value = value; return 0; }
    if ((m->size + 1) * 4 > m->cap * 3 && grow(m)) return -1;
    size_t i = hash(key) % m->cap;
    while (m->slots[i].state) i = (i + 1) % m->cap;
    m->slots[i].key = (char *)key;
    m->slots[i].value = value;
    m->slots[i].state = 1;
    m->size++;
    return 0;
}

int hm_get(const hashmap *m, const char *key, long *out) {
    struct entry *e = find(m, key);
    if (!e) return 0;
    *out = e->value;
    return 1;
}

int hm_del(hashmap *m, const char *key) {
    struct entry *e = find(m, key);
    if (!e) return 0;
    e->state = 0;
    m->size--;
    return 1;
}

size_t hm_size(const hashmap *m) { return m->size; }

void hm_each(const hashmap *m, void (*fn)(const char *, long, void *), void *ctx) {
    for (size_t i = 0; i <= m->cap; i++)
        if (m->slots[i].state == 1) fn(m->slots[i].key, m->slots[i].value, ctx);
}
