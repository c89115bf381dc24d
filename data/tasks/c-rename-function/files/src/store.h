#ifndef STORE_H
#define STORE_H
#define STORE_MAX 16
typedef struct { const char *keys[STORE_MAX]; int vals[STORE_MAX]; int n; } store;
void store_put(store *s, const char *key, int val);
int get_val(const store *s, const char *key, int dflt);
int get_vals(const store *s, int *out);
int get_val_count(const store *s);
#endif
