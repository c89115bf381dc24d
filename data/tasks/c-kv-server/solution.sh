#!/bin/bash
set -e
cd /app/kvd
cat > store.h <<'C'
#ifndef STORE_H
#define STORE_H
#include <stddef.h>
int store_open(const char *path);
const char *store_get(const char *key);
void store_set(const char *key, const char *value, int log);
int store_del(const char *key, int log);
size_t store_keys(const char *prefix, const char ***out);
#endif
C
cat > store.c <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store.h"

static char **keys, **vals;
static size_t n, cap;
static int logfd = -1;

static long find(const char *k) {
    for (size_t i = 0; i < n; i++) if (strcmp(keys[i], k) == 0) return (long)i;
    return -1;
}
static void logline(const char *a, const char *k, const char *v) {
    char *s;
    int len = v ? asprintf(&s, "%s %s %s\n", a, k, v) : asprintf(&s, "%s %s\n", a, k);
    if (len < 0) return;
    ssize_t off = 0;
    while (off < len) { ssize_t w = write(logfd, s + off, len - off); if (w <= 0) break; off += w; }
    free(s);
}
const char *store_get(const char *k) { long i = find(k); return i < 0 ? NULL : vals[i]; }
void store_set(const char *k, const char *v, int log) {
    long i = find(k);
    if (i >= 0) { free(vals[i]); vals[i] = strdup(v); }
    else {
        if (n == cap) { cap = cap ? cap * 2 : 64; keys = realloc(keys, cap * sizeof *keys); vals = realloc(vals, cap * sizeof *vals); }
        keys[n] = strdup(k); vals[n] = strdup(v); n++;
    }
    if (log) logline("S", k, v);
}
int store_del(const char *k, int log) {
    long i = find(k);
    if (i < 0) return 0;
    free(keys[i]); free(vals[i]);
    keys[i] = keys[n - 1]; vals[i] = vals[n - 1]; n--;
    if (log) logline("D", k, NULL);
    return 1;
}
static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
size_t store_keys(const char *prefix, const char ***out) {
    const char **r = malloc((n + 1) * sizeof *r);
    size_t m = 0, pl = strlen(prefix);
    for (size_t i = 0; i < n; i++) if (strncmp(keys[i], prefix, pl) == 0) r[m++] = keys[i];
    qsort(r, m, sizeof *r, cmp);
    *out = r;
    return m;
}
int store_open(const char *path) {
    FILE *f = fopen(path, "r");
    if (f) {
        char *line = NULL; size_t lc = 0; ssize_t len;
        while ((len = getline(&line, &lc, f)) > 0) {
            if (line[len - 1] != '\n') break; /* torn last line */
            line[len - 1] = 0;
            char *k = line + 2, *sp = strchr(k, ' ');
            if (line[0] == 'S' && sp) { *sp = 0; store_set(k, sp + 1, 0); }
            else if (line[0] == 'D') store_del(k, 0);
        }
        free(line);
        fclose(f);
    }
    logfd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    return logfd < 0 ? -1 : 0;
}
C
cat > proto.h <<'C'
#ifndef PROTO_H
#define PROTO_H
/* Handle one request line (no newline). Appends the reply to *out (malloc'd, *outlen bytes). Returns 1 to close. */
int proto_handle(char *line, char **out, size_t *outlen);
#endif
C
cat > proto.c <<'C'
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "proto.h"
#include "store.h"

static void reply(char **out, size_t *len, const char *fmt, const char *a) {
    char *s;
    int n = asprintf(&s, fmt, a);
    *out = realloc(*out, *len + n + 1);
    memcpy(*out + *len, s, n);
    *len += n;
    free(s);
}
static int goodkey(const char *k) {
    size_t l = strlen(k);
    if (l < 1 || l > 64) return 0;
    for (; *k; k++) if ((unsigned char)*k <= 32 || *k == 127) return 0;
    return 1;
}
static int parse_ll(const char *s, long long *v) {
    if (!*s) return 0;
    const char *p = s + (*s == '-');
    if (!*p) return 0;
    for (const char *q = p; *q; q++) if (!isdigit((unsigned char)*q)) return 0;
    errno = 0;
    *v = strtoll(s, NULL, 10);
    return errno == 0;
}
int proto_handle(char *line, char **out, size_t *len) {
    char *cmd = line, *rest = strchr(line, ' ');
    if (rest) *rest++ = 0;
    if (!strcasecmp(cmd, "SET")) {
        char *val = rest ? strchr(rest, ' ') : NULL;
        if (!rest || !val) { reply(out, len, "ERR usage: SET key value\n", ""); return 0; }
        *val++ = 0;
        if (!goodkey(rest)) { reply(out, len, "ERR bad key\n", ""); return 0; }
        store_set(rest, val, 1);
        reply(out, len, "OK\n", "");
    } else if (!strcasecmp(cmd, "GET") || !strcasecmp(cmd, "DEL")) {
        if (!rest || !goodkey(rest)) { reply(out, len, "ERR usage: %s key\n", cmd); return 0; }
        if (toupper((unsigned char)cmd[0]) == 'G') {
            const char *v = store_get(rest);
            if (v) reply(out, len, "VALUE %s\n", v); else reply(out, len, "NOTFOUND\n", "");
        } else reply(out, len, store_del(rest, 1) ? "DELETED\n" : "NOTFOUND\n", "");
    } else if (!strcasecmp(cmd, "INCR")) {
        char *d = rest ? strchr(rest, ' ') : NULL;
        long long delta = 1, cur = 0;
        if (d) { *d++ = 0; if (!parse_ll(d, &delta)) { reply(out, len, "ERR bad delta\n", ""); return 0; } }
        if (!rest || !goodkey(rest)) { reply(out, len, "ERR usage: INCR key [delta]\n", ""); return 0; }
        const char *v = store_get(rest);
        if (v && !parse_ll(v, &cur)) { reply(out, len, "ERR not an integer\n", ""); return 0; }
        if (__builtin_add_overflow(cur, delta, &cur)) { reply(out, len, "ERR overflow\n", ""); return 0; }
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", cur);
        store_set(rest, buf, 1);
        reply(out, len, "VALUE %s\n", buf);
    } else if (!strcasecmp(cmd, "KEYS")) {
        if (rest && (strchr(rest, ' ') || !*rest)) { reply(out, len, "ERR usage: KEYS [prefix]\n", ""); return 0; }
        const char **ks;
        size_t m = store_keys(rest ? rest : "", &ks);
        char num[32];
        snprintf(num, sizeof num, "%zu", m);
        reply(out, len, "KEYS %s\n", num);
        for (size_t i = 0; i < m; i++) reply(out, len, "%s\n", ks[i]);
        free(ks);
    } else if (!strcasecmp(cmd, "QUIT") && !rest) {
        reply(out, len, "BYE\n", "");
        return 1;
    } else {
        reply(out, len, "ERR unknown command\n", "");
    }
    return 0;
}
C
cat > main.c <<'C'
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "proto.h"
#include "store.h"

#define MAXC 1024
struct client { int fd; char *buf; size_t len; };
static struct client cl[MAXC];

static void sendall(int fd, const char *p, size_t n) {
    while (n) { ssize_t w = send(fd, p, n, MSG_NOSIGNAL); if (w <= 0) return; p += w; n -= w; }
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: kvd PORT DATAFILE\n"); return 2; }
    signal(SIGPIPE, SIG_IGN);
    if (store_open(argv[2])) { perror(argv[2]); return 1; }
    int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons(atoi(argv[1]));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 128)) { perror("bind"); return 1; }
    struct pollfd pf[MAXC + 1];
    for (;;) {
        int n = 0;
        pf[n++] = (struct pollfd){ls, POLLIN, 0};
        int map[MAXC + 1];
        for (int i = 0; i < MAXC; i++) if (cl[i].fd > 0) { map[n] = i; pf[n++] = (struct pollfd){cl[i].fd, POLLIN, 0}; }
        if (poll(pf, n, -1) < 0) continue;
        if (pf[0].revents & POLLIN) {
            int fd = accept(ls, NULL, NULL);
            if (fd >= 0) {
                int i = 0;
                while (i < MAXC && cl[i].fd > 0) i++;
                if (i == MAXC) close(fd); else cl[i] = (struct client){fd, NULL, 0};
            }
        }
        for (int k = 1; k < n; k++) {
            if (!pf[k].revents) continue;
            struct client *c = &cl[map[k]];
            char tmp[4096];
            ssize_t r = recv(c->fd, tmp, sizeof tmp, 0);
            int closeit = r <= 0;
            if (r > 0) {
                c->buf = realloc(c->buf, c->len + r);
                memcpy(c->buf + c->len, tmp, r);
                c->len += r;
                char *nl;
                while (!closeit && (nl = memchr(c->buf, '\n', c->len))) {
                    size_t ll = nl - c->buf;
                    char *line = malloc(ll + 1);
                    memcpy(line, c->buf, ll);
                    line[ll] = 0;
                    if (ll && line[ll - 1] == '\r') line[ll - 1] = 0;
                    memmove(c->buf, nl + 1, c->len - ll - 1);
                    c->len -= ll + 1;
                    char *out = NULL;
                    size_t olen = 0;
                    closeit = proto_handle(line, &out, &olen);
                    sendall(c->fd, out, olen);
                    free(out);
                    free(line);
                }
            }
            if (closeit) { close(c->fd); free(c->buf); *c = (struct client){0, NULL, 0}; }
        }
    }
}
C
cat > Makefile <<'M'
CFLAGS = -O2 -Wall
OBJS = main.o proto.o store.o
kvd: $(OBJS)
	gcc -o $@ $(OBJS)
%.o: %.c store.h proto.h
	gcc $(CFLAGS) -c $<
clean:
	rm -f kvd $(OBJS)
M
make
