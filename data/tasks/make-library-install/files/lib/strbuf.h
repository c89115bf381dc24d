#ifndef MINI_STRBUF_H
#define MINI_STRBUF_H
#include <stddef.h>
typedef struct { char *s; size_t len, cap; } strbuf;
void sb_init(strbuf *b);
void sb_free(strbuf *b);
int sb_append(strbuf *b, const char *text);
int sb_join(strbuf *b, const char *sep, char *const *parts, size_t n);
#endif
