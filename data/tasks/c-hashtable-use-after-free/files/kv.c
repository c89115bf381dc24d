/* kv: an in-memory key/value store driven by commands on stdin, one per line:
 *   set KEY VALUE   store VALUE under KEY (replacing any old value); prints nothing
 *   get KEY         prints VALUE, or "(nil)" when KEY is absent
 *   del KEY         removes KEY; prints "1" if it existed, else "0"
 *   count           prints the number of keys stored
 * KEY and VALUE are single words of up to 200 characters. Lines that are not a valid command are ignored.
 * The table starts with 4 buckets and doubles when the number of keys exceeds 2 per bucket.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
    char *key, *value;
    struct node *next;
};

static struct node **buckets;
static size_t nbuckets = 4, nkeys;

static unsigned long hash(const char *s) {
    unsigned long h = 5381;
    while (*s)
        h = h * 33 + (unsigned char)*s++;
    return h;
}

static void grow(void) {
    size_t newn = nbuckets * 2;
    struct node **nb = calloc(newn, sizeof *nb);
    for (size_t i = 0; i < nbuckets; i++) {
        for (struct node *n = buckets[i]; n; n = n->next) {
            size_t j = hash(n->key) % newn;
            n->next = nb[j];
            nb[j] = n;
        }
    }
    free(buckets);
    nbuckets = newn;
}

static struct node *find(const char *key) {
    for (struct node *n = buckets[hash(key) % nbuckets]; n; n = n->next)
        if (strcmp(n->key, key) == 0)
            return n;
    return NULL;
}

static void set(const char *key, const char *value) {
    struct node *n = find(key);
    if (n) {
        free(n->value);
        n->value = strdup(value);
        return;
    }
    n = malloc(sizeof *n);
    n->key = strdup(key);
    n->value = strdup(value);
    size_t b = hash(key) % nbuckets;
    n->next = buckets[b];
    buckets[b] = n;
    if (++nkeys > 2 * nbuckets)
        grow();
}

static int del(const char *key) {
    struct node **pp = &buckets[hash(key) % nbuckets];
    for (struct node *n = *pp; n; n = n->next) {
        if (strcmp(n->key, key) == 0) {
            free(n->key);
            free(n->value);
            free(n);
            *pp = n->next;
            nkeys--;
            return 1;
        }
        pp = &n->next;
    }
    return 0;
}

int main(void) {
    char line[512], cmd[16], key[256], value[256];
    buckets = calloc(nbuckets, sizeof *buckets);
    while (fgets(line, sizeof line, stdin)) {
        int k = sscanf(line, "%15s %255s %255s", cmd, key, value);
        if (k == 3 && strcmp(cmd, "set") == 0) {
            set(key, value);
        } else if (k == 2 && strcmp(cmd, "get") == 0) {
            struct node *n = find(key);
            puts(n ? n->value : "(nil)");
        } else if (k == 2 && strcmp(cmd, "del") == 0) {
            printf("%d\n", del(key));
        } else if (k == 1 && strcmp(cmd, "count") == 0) {
            printf("%zu\n", nkeys);
        }
    }
    for (size_t i = 0; i < nbuckets; i++) {
        struct node *n = buckets[i];
        while (n) {
            struct node *next = n->next;
            free(n->key);
            free(n->value);
            free(n);
            n = next;
        }
    }
    free(buckets);
    return 0;
}
