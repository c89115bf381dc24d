#ifndef GLOB_MATCH_H
#define GLOB_MATCH_H
/* Return 1 if the whole of text matches pattern, 0 otherwise. See /app/glob/SPEC.md. */
int glob_match(const char *pattern, const char *text);
#endif
