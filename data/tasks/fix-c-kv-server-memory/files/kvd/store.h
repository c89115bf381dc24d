#ifndef STORE_H
#define STORE_H
#define MAX_KEYS 1000
int store_set(const char *key, const char *value);  /* 0 ok, -1 full */
const char *store_get(const char *key);             /* NULL if missing */
int store_del(const char *key);                      /* 0 ok, -1 missing */
int store_count(void);
#endif
