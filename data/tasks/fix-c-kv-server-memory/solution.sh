#!/bin/bash
set -e
cat > /app/kvd/store.c <<'C'
#include <string.h>
#include "store.h"

struct entry { char key[33]; char value[201]; int used; };
static struct entry table[MAX_KEYS];

static struct entry *find(const char *key) {
    for (int i = 0; i < MAX_KEYS; i++)
        if (table[i].used && strcmp(table[i].key, key) == 0) return &table[i];
    return NULL;
}

int store_set(const char *key, const char *value) {
    if (strlen(key) > 32 || strlen(value) > 200) return -2;
    struct entry *e = find(key);
    if (!e) {
        for (int i = 0; i < MAX_KEYS; i++) if (!table[i].used) { e = &table[i]; break; }
        if (!e) return -1;
    }
    snprintf(e->key, sizeof e->key, "%s", key);
    snprintf(e->value, sizeof e->value, "%s", value);
    e->used = 1;
    return 0;
}

const char *store_get(const char *key) { struct entry *e = find(key); return e ? e->value : NULL; }

int store_del(const char *key) { struct entry *e = find(key); if (!e) return -1; e->used = 0; return 0; }

int store_count(void) { int n = 0; for (int i = 0; i < MAX_KEYS; i++) n += table[i].used; return n; }
C
sed -i '1i #include <stdio.h>' /app/kvd/store.c
cat > /app/kvd/kvd.c <<'C'
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "store.h"

#define MAX_LINE 1024

static void reply(int fd, const char *s) {
    size_t n = strlen(s);
    char out[512];
    if (n > sizeof out - 2) n = sizeof out - 2;
    memcpy(out, s, n);
    out[n] = '\n';
    ssize_t w = write(fd, out, n + 1);
    (void)w;
}

static int valid_key(const char *k, size_t n) {
    if (n < 1 || n > 32) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
            return 0;
    }
    return 1;
}

static int valid_value(const char *v, size_t n) {
    if (n > 200) return 0;
    for (size_t i = 0; i < n; i++) if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] > 0x7e) return 0;
    return 1;
}

/* returns 1 to close the connection */
static int handle(int fd, char *line, size_t len) {
    if (len && line[len - 1] == '\r') line[--len] = 0;
    if (memchr(line, 0, len)) { reply(fd, "ERR"); return 0; }
    if (strcmp(line, "QUIT") == 0) { reply(fd, "BYE"); return 1; }
    if (strcmp(line, "COUNT") == 0) {
        char b[32]; snprintf(b, sizeof b, "COUNT %d", store_count()); reply(fd, b); return 0;
    }
    char *sp = strchr(line, ' ');
    if (!sp) { reply(fd, "ERR"); return 0; }
    *sp = 0;
    char *cmd = line, *key = sp + 1;
    if (strcmp(cmd, "SET") == 0) {
        char *sp2 = strchr(key, ' ');
        if (!sp2) { reply(fd, "ERR"); return 0; }
        *sp2 = 0;
        char *val = sp2 + 1;
        if (!valid_key(key, strlen(key)) || !valid_value(val, strlen(val))) { reply(fd, "ERR"); return 0; }
        int r = store_set(key, val);
        reply(fd, r == 0 ? "OK" : (r == -1 ? "ERR full" : "ERR"));
        return 0;
    }
    if (!valid_key(key, strlen(key))) { reply(fd, "ERR"); return 0; }
    if (strcmp(cmd, "GET") == 0) {
        const char *v = store_get(key);
        if (!v) { reply(fd, "NOTFOUND"); return 0; }
        char b[256]; snprintf(b, sizeof b, "VALUE %s", v); reply(fd, b); return 0;
    }
    if (strcmp(cmd, "DEL") == 0) { reply(fd, store_del(key) == 0 ? "OK" : "NOTFOUND"); return 0; }
    reply(fd, "ERR");
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: kvd PORT\n"); return 2; }
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET; a.sin_port = htons(atoi(argv[1])); a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 16)) { perror("bind"); return 1; }
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0) continue;
        char buf[MAX_LINE + 2]; size_t len = 0; int done = 0;
        while (!done) {
            ssize_t n = read(c, buf + len, sizeof buf - 1 - len);
            if (n <= 0) break;
            len += n;
            for (;;) {
                char *nl = memchr(buf, '\n', len);
                if (!nl) {
                    if (len > MAX_LINE) { reply(c, "ERR"); done = 1; }
                    break;
                }
                size_t ll = nl - buf;
                if (ll > MAX_LINE) { reply(c, "ERR"); done = 1; break; }
                *nl = 0;
                if (handle(c, buf, ll)) { done = 1; break; }
                memmove(buf, nl + 1, len - ll - 1);
                len -= ll + 1;
            }
        }
        close(c);
    }
}
C
make -C /app/kvd -B >/dev/null
