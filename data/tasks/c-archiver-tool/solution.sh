#!/bin/bash
set -e
cd /app/sar
cat > sar.c <<'C'
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint32_t crc_table[256];
static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}
static uint32_t crc32_buf(const unsigned char *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    while (n--) c = crc_table[(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}
static void fail(const char *fmt, const char *a) { fprintf(stderr, "sar: "); fprintf(stderr, fmt, a); fputc('\n', stderr); exit(1); }

typedef struct { char *path; int type; uint32_t mode; uint64_t size; uint32_t crc; unsigned char *data; } entry;
static entry *E; static size_t nE, capE;
static void add(entry e) { if (nE == capE) { capE = capE ? capE * 2 : 32; E = realloc(E, capE * sizeof *E); } E[nE++] = e; }

static int valid_path(const char *p) {
    size_t n = strlen(p);
    if (n < 1 || n > 4096 || p[0] == '/' || p[n - 1] == '/') return 0;
    const char *s = p;
    for (;;) {
        const char *e = strchr(s, '/');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        if (l == 0 || (l == 1 && s[0] == '.') || (l == 2 && s[0] == '.' && s[1] == '.')) return 0;
        if (!e) return 1;
        s = e + 1;
    }
}
static int cmpstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static void collect(const char *fs, const char *name) {
    struct stat st;
    if (lstat(fs, &st)) fail("cannot stat %s", fs);
    if (S_ISDIR(st.st_mode)) {
        add((entry){strdup(name), 1, st.st_mode & 0777, 0, 0, NULL});
        DIR *d = opendir(fs);
        if (!d) fail("cannot open directory %s", fs);
        char **names = NULL; size_t n = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
            names = realloc(names, (n + 1) * sizeof *names);
            names[n++] = strdup(de->d_name);
        }
        closedir(d);
        qsort(names, n, sizeof *names, cmpstr);
        for (size_t i = 0; i < n; i++) {
            char *cfs, *cname;
            if (asprintf(&cfs, "%s/%s", fs, names[i]) < 0 || asprintf(&cname, "%s/%s", name, names[i]) < 0) exit(1);
            collect(cfs, cname);
        }
    } else if (S_ISREG(st.st_mode)) {
        FILE *f = fopen(fs, "rb");
        if (!f) fail("cannot read %s", fs);
        unsigned char *buf = malloc(st.st_size + 1);
        size_t got = fread(buf, 1, st.st_size, f);
        fclose(f);
        add((entry){strdup(name), 0, st.st_mode & 0777, got, crc32_buf(buf, got), buf});
    }
}
static void put(FILE *f, uint64_t v, int n) { for (int i = 0; i < n; i++) fputc((int)((v >> (8 * i)) & 0xFF), f); }
static int create(const char *ar, char **paths, int n) {
    for (int i = 0; i < n; i++) {
        char *p = strdup(paths[i]);
        while (!strncmp(p, "./", 2)) memmove(p, p + 2, strlen(p) - 1);
        size_t l = strlen(p);
        while (l > 1 && p[l - 1] == '/') p[--l] = 0;
        if (!valid_path(p)) fail("invalid path %s", paths[i]);
        collect(paths[i], p);
    }
    FILE *f = fopen(ar, "wb");
    if (!f) fail("cannot write %s", ar);
    fwrite("SAR1", 1, 4, f);
    put(f, nE, 4);
    for (size_t i = 0; i < nE; i++) {
        size_t l = strlen(E[i].path);
        put(f, l, 2); fwrite(E[i].path, 1, l, f);
        put(f, E[i].type, 1); put(f, E[i].mode, 4); put(f, E[i].size, 8); put(f, E[i].crc, 4);
        if (E[i].size) fwrite(E[i].data, 1, E[i].size, f);
    }
    return fclose(f) ? 1 : 0;
}
static unsigned char *A; static size_t alen, pos;
static uint64_t get(int n) {
    if (alen - pos < (size_t)n) fail("%s", "truncated archive");
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= (uint64_t)A[pos + i] << (8 * i);
    pos += n;
    return v;
}
static void load(const char *ar) {
    FILE *f = fopen(ar, "rb");
    if (!f) fail("cannot open %s", ar);
    size_t cap = 1 << 16; A = malloc(cap);
    size_t r;
    while ((r = fread(A + alen, 1, cap - alen, f)) > 0) { alen += r; if (alen == cap) { cap *= 2; A = realloc(A, cap); } }
    fclose(f);
    if (alen < 4 || memcmp(A, "SAR1", 4)) fail("%s", "bad magic");
    pos = 4;
    uint64_t count = get(4);
    for (uint64_t i = 0; i < count; i++) {
        entry e;
        size_t l = get(2);
        if (alen - pos < l) fail("%s", "truncated archive");
        e.path = strndup((char *)A + pos, l);
        if (strlen(e.path) != l || !valid_path(e.path)) fail("invalid path in archive: %s", e.path);
        pos += l;
        e.type = (int)get(1);
        if (e.type > 1) fail("unknown entry type for %s", e.path);
        e.mode = (uint32_t)get(4) & 0777;
        e.size = get(8);
        e.crc = (uint32_t)get(4);
        if (alen - pos < e.size) fail("%s", "truncated archive");
        e.data = A + pos;
        pos += e.size;
        if (crc32_buf(e.data, e.size) != e.crc) fail("crc mismatch: %s", e.path);
        add(e);
    }
    if (pos != alen) fail("%s", "trailing garbage after last entry");
}
static void mkdirs(const char *p) {
    char *s = strdup(p);
    for (char *q = s + 1; *q; q++) if (*q == '/') { *q = 0; mkdir(s, 0755); *q = '/'; }
    mkdir(s, 0755);
    free(s);
}
int main(int argc, char **argv) {
    crc_init();
    if (argc >= 4 && !strcmp(argv[1], "c")) return create(argv[2], argv + 3, argc - 3);
    if (argc == 3 && !strcmp(argv[1], "t")) {
        load(argv[2]);
        for (size_t i = 0; i < nE; i++)
            printf("%c %03o %llu %s\n", E[i].type ? 'd' : 'f', E[i].mode, (unsigned long long)E[i].size, E[i].path);
        return 0;
    }
    if ((argc == 3 || argc == 4) && !strcmp(argv[1], "x")) {
        load(argv[2]);
        const char *dir = argc == 4 ? argv[3] : ".";
        mkdirs(dir);
        for (size_t i = 0; i < nE; i++) {
            char *out;
            if (asprintf(&out, "%s/%s", dir, E[i].path) < 0) return 1;
            char *slash = strrchr(out, '/');
            *slash = 0; mkdirs(out); *slash = '/';
            if (E[i].type == 1) { mkdirs(out); }
            else {
                FILE *f = fopen(out, "wb");
                if (!f) fail("cannot write %s", out);
                fwrite(E[i].data, 1, E[i].size, f);
                fclose(f);
                chmod(out, E[i].mode);
            }
        }
        for (size_t i = nE; i-- > 0;) if (E[i].type == 1) {
            char *out;
            if (asprintf(&out, "%s/%s", dir, E[i].path) >= 0) chmod(out, E[i].mode);
        }
        return 0;
    }
    fprintf(stderr, "usage: sar c ARCHIVE PATH... | sar t ARCHIVE | sar x ARCHIVE [DIR]\n");
    return 2;
}
C
printf 'sar: sar.c\n\tgcc -O2 -Wall -o sar sar.c\n' > Makefile
make
