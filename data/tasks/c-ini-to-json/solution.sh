#!/bin/bash
set -e
cat > /app/ini2json/ini2json.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct node { char *name; char *value; struct node *child, *next; } node;

static node *child(node *p, const char *name, size_t len, int want_obj, int *err) {
    node **pp = &p->child;
    for (; *pp; pp = &(*pp)->next)
        if (strlen((*pp)->name) == len && memcmp((*pp)->name, name, len) == 0) {
            if (want_obj && (*pp)->value) { *err = 1; return NULL; }
            if (!want_obj && !(*pp)->value) { *err = 1; return NULL; }
            return *pp;
        }
    node *n = calloc(1, sizeof *n);
    n->name = strndup(name, len);
    *pp = n;
    return n;
}

static void jstr(const char *s) {
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"') fputs("\\\"", stdout);
        else if (*p == '\\') fputs("\\\\", stdout);
        else if (*p == '\n') fputs("\\n", stdout);
        else if (*p == '\t') fputs("\\t", stdout);
        else if (*p == '\r') fputs("\\r", stdout);
        else if (*p < 0x20) printf("\\u%04x", *p);
        else putchar(*p);
    }
    putchar('"');
}

static void dump(const node *n) {
    putchar('{');
    for (const node *c = n->child; c; c = c->next) {
        jstr(c->name);
        putchar(':');
        if (c->value) jstr(c->value); else dump(c);
        if (c->next) putchar(',');
    }
    putchar('}');
}

static int namechar(int c, int dot) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || (dot && c == '.');
}

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n')) *--e = 0;
    return s;
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: ini2json FILE\n"); return 2; }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    node root = {0}, *cur = &root;
    char *line = NULL;
    size_t cap = 0;
    int no = 0, err = 0;
    while (getline(&line, &cap, f) != -1) {
        no++;
        char *s = trim(line);
        if (!*s || *s == ';' || *s == '#') continue;
        if (*s == '[') {
            size_t L = strlen(s);
            if (s[L - 1] != ']') goto bad;
            s[L - 1] = 0;
            char *name = trim(s + 1);
            if (!*name) goto bad;
            cur = &root;
            char *part = name;
            for (;;) {
                size_t k = 0;
                while (namechar((unsigned char)part[k], 0)) k++;
                if (k == 0 || (part[k] && part[k] != '.')) goto bad;
                cur = child(cur, part, k, 1, &err);
                if (err) goto bad;
                if (!part[k]) break;
                part += k + 1;
            }
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq) goto bad;
        *eq = 0;
        char *key = trim(s), *val = trim(eq + 1);
        if (!*key) goto bad;
        for (char *k = key; *k; k++) if (!namechar((unsigned char)*k, 1)) goto bad;
        char *out = strdup(val);
        if (*val == '"') {
            size_t L = strlen(val), o = 0;
            if (L < 2 || val[L - 1] != '"') goto bad;
            for (size_t i = 1; i < L - 1; i++) {
                char c = val[i];
                if (c == '\\') {
                    char e = val[++i];
                    if (i >= L - 1) goto bad;
                    c = e == 'n' ? '\n' : e == 't' ? '\t' : e == '"' ? '"' : e == '\\' ? '\\' : 0;
                    if (!c) goto bad;
                } else if (c == '"') goto bad;
                out[o++] = c;
            }
            out[o] = 0;
        }
        node *n = child(cur, key, strlen(key), 0, &err);
        if (err) goto bad;
        free(n->value);
        n->value = out;
    }
    dump(&root);
    putchar('\n');
    return 0;
bad:
    fprintf(stderr, "error: line %d\n", no);
    return 1;
}
C
printf 'ini2json: ini2json.c\n\tgcc -O2 -Wall -o ini2json ini2json.c\n' > /app/ini2json/Makefile
