#!/bin/bash
set -e
cat > /app/hashmap/hashmap.c <<'C'
#include <stdlib.h>
#include <string.h>
#include "hashmap.h"

struct entry { char *key; long value; int state; }; /* state: 0 empty, 1 used, 2 deleted */
struct hashmap { struct entry *slots; size_t cap, size, used; };

static size_t hash(const char *s) {
    size_t h = 5381;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) h = h * 33 + *p;
    return h;
}

hashmap *hm_new(void) {
    hashmap *m = malloc(sizeof *m);
    if (!m) return NULL;
    m->cap = 8;
    m->size = m->used = 0;
    m->slots = calloc(m->cap, sizeof *m->slots);
    if (!m->slots) { free(m); return NULL; }
    return m;
}

void hm_free(hashmap *m) {
    if (!m) return;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].state == 1) free(m->slots[i].key);
    free(m->slots);
    free(m);
}

static struct entry *find(const hashmap *m, const char *key) {
    size_t i = hash(key) % m->cap;
    while (m->slots[i].state) {
        if (m->slots[i].state == 1 && strcmp(m->slots[i].key, key) == 0) return &m->slots[i];
        i = (i + 1) % m->cap;
    }
    return NULL;
}

static int rehash(hashmap *m, size_t newcap) {
    struct entry *slots = calloc(newcap, sizeof *slots);
    if (!slots) return -1;
    for (size_t j = 0; j < m->cap; j++) {
        if (m->slots[j].state != 1) continue;
        size_t i = hash(m->slots[j].key) % newcap;
        while (slots[i].state) i = (i + 1) % newcap;
        slots[i] = m->slots[j];
    }
    free(m->slots);
    m->slots = slots;
    m->cap = newcap;
    m->used = m->size;
    return 0;
}

int hm_put(hashmap *m, const char *key, long value) {
    struct entry *e = find(m, key);
    if (e) { e->value = value; return 0; }
    if ((m->used + 1) * 4 > m->cap * 3) {
        size_t newcap = (m->size + 1) * 2 > m->cap ? m->cap * 2 : m->cap;
        if (rehash(m, newcap)) return -1;
    }
    char *copy = strdup(key);
    if (!copy) return -1;
    size_t i = hash(key) % m->cap;
    while (m->slots[i].state == 1) i = (i + 1) % m->cap;
    if (m->slots[i].state == 0) m->used++;
    m->slots[i].key = copy;
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
    free(e->key);
    e->key = NULL;
    e->state = 2;
    m->size--;
    return 1;
}

size_t hm_size(const hashmap *m) { return m->size; }

void hm_each(const hashmap *m, void (*fn)(const char *, long, void *), void *ctx) {
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].state == 1) fn(m->slots[i].key, m->slots[i].value, ctx);
}
C
