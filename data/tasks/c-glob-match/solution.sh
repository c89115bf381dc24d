#!/bin/bash
set -e
cat > /app/glob/glob.c <<'C'
#include <stddef.h>
#include "glob.h"

/* Match one bracket expression at p (p points at '['). On success store the position after ']' in *end
   and whether c is in the set in *hit; return 0 when the bracket is unterminated (then '[' is literal). */
static int bracket(const unsigned char *p, unsigned char c, const unsigned char **end, int *hit) {
    const unsigned char *q = p + 1;
    int neg = 0, in = 0;
    if (*q == '!' || *q == '^') { neg = 1; q++; }
    int first = 1;
    while (*q && (*q != ']' || first)) {
        unsigned char lo = *q;
        if (lo == '\\' && q[1]) { q++; lo = *q; }
        q++;
        unsigned char hi = lo;
        if (*q == '-' && q[1] && q[1] != ']') {
            q++;
            hi = *q;
            if (hi == '\\' && q[1]) { q++; hi = *q; }
            q++;
        }
        if (lo <= c && c <= hi) in = 1;
        first = 0;
    }
    if (*q != ']') return 0;
    *end = q + 1;
    *hit = in != neg;
    return 1;
}

/* Does one pattern element at p match character c? Sets *next to the following element. */
static int one(const unsigned char *p, unsigned char c, const unsigned char **next) {
    if (*p == '?') { *next = p + 1; return 1; }
    if (*p == '[') {
        int hit;
        if (bracket(p, c, next, &hit)) return hit;
        *next = p + 1;
        return c == '[';
    }
    if (*p == '\\' && p[1]) { *next = p + 2; return c == p[1]; }
    *next = p + 1;
    return c == *p;
}

int glob_match(const char *pattern, const char *text) {
    const unsigned char *p = (const unsigned char *)pattern, *t = (const unsigned char *)text;
    const unsigned char *star_p = NULL, *star_t = NULL;
    for (;;) {
        if (*p == '*') {
            while (*p == '*') p++;
            star_p = p;
            star_t = t;
            continue;
        }
        if (*t) {
            const unsigned char *next;
            if (*p && one(p, *t, &next)) { p = next; t++; continue; }
        } else if (!*p) {
            return 1;
        }
        if (!star_p || !*star_t) return 0;
        p = star_p;
        t = ++star_t;
    }
}
C
