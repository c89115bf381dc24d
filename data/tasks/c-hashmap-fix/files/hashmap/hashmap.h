#ifndef HASHMAP_H
#define HASHMAP_H
#include <stddef.h>

/* String -> long map with open addressing (linear probing). Keys are copied. */
typedef struct hashmap hashmap;

hashmap *hm_new(void);
void hm_free(hashmap *m);
/* Insert or overwrite. Returns 0 on success, -1 on allocation failure. */
int hm_put(hashmap *m, const char *key, long value);
/* Returns 1 and stores the value in *out if key is present, else 0. */
int hm_get(const hashmap *m, const char *key, long *out);
/* Remove key. Returns 1 if it was present, else 0. */
int hm_del(hashmap *m, const char *key);
size_t hm_size(const hashmap *m);
/* Call fn for every entry (any order). */
void hm_each(const hashmap *m, void (*fn)(const char *key, long value, void *ctx), void *ctx);
#endif
