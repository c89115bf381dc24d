#!/bin/bash
set -e
cd /app/httpd
cat > httpd.c <<'C'
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *root;

static void sendall(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) { ssize_t w = send(fd, c, n, MSG_NOSIGNAL); if (w <= 0) return; c += w; n -= w; }
}

static void respond(int fd, int head, const char *status, const char *ctype, const char *extra, const char *body, size_t blen) {
    char *h;
    int n = asprintf(&h, "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n",
                     status, ctype, blen, extra ? extra : "");
    if (n < 0) return;
    sendall(fd, h, n);
    free(h);
    if (!head && blen) sendall(fd, body, blen);
}

static void error(int fd, int head, const char *status, const char *extra) {
    char body[128];
    int n = snprintf(body, sizeof body, "%s\n", status);
    respond(fd, head, status, "text/plain; charset=utf-8", extra, body, n);
}

static const char *ctype(const char *path) {
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash)) return "application/octet-stream";
    static const char *map[][2] = {{".html", "text/html; charset=utf-8"}, {".htm", "text/html; charset=utf-8"},
        {".txt", "text/plain; charset=utf-8"}, {".css", "text/css"}, {".js", "application/javascript"},
        {".json", "application/json"}, {".png", "image/png"}, {".jpg", "image/jpeg"}, {".jpeg", "image/jpeg"}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++) if (!strcasecmp(dot, map[i][0])) return map[i][1];
    return "application/octet-stream";
}

static int hexv(int c) { return isdigit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1; }

static void serve_file(int fd, int head, const char *fs) {
    int f = open(fs, O_RDONLY);
    if (f < 0) { error(fd, head, "404 Not Found", NULL); return; }
    struct stat st;
    fstat(f, &st);
    char *buf = malloc(st.st_size + 1);
    size_t got = 0;
    while (got < (size_t)st.st_size) { ssize_t r = read(f, buf + got, st.st_size - got); if (r <= 0) break; got += r; }
    close(f);
    respond(fd, head, "200 OK", ctype(fs), NULL, buf, got);
    free(buf);
}

static void handle(int fd) {
    char req[16384];
    size_t len = 0;
    while (len < sizeof req - 1) {
        ssize_t r = recv(fd, req + len, sizeof req - 1 - len, 0);
        if (r <= 0) break;
        len += r;
        req[len] = 0;
        if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n")) break;
    }
    req[len] = 0;
    char *eol = strchr(req, '\n');
    if (!eol) { error(fd, 0, "400 Bad Request", NULL); return; }
    *eol = 0;
    if (eol > req && eol[-1] == '\r') eol[-1] = 0;
    char *m = req, *sp1 = strchr(m, ' ');
    if (!sp1) { error(fd, 0, "400 Bad Request", NULL); return; }
    *sp1 = 0;
    char *target = sp1 + 1, *sp2 = strchr(target, ' ');
    if (!sp2) { error(fd, 0, "400 Bad Request", NULL); return; }
    *sp2 = 0;
    char *ver = sp2 + 1;
    if (!*m || !*target || (strcmp(ver, "HTTP/1.0") && strcmp(ver, "HTTP/1.1")) || strchr(ver, ' ')) {
        error(fd, 0, "400 Bad Request", NULL); return;
    }
    for (char *p = m; *p; p++) if (!isupper((unsigned char)*p)) { error(fd, 0, "400 Bad Request", NULL); return; }
    int head = !strcmp(m, "HEAD");
    if (!head && strcmp(m, "GET")) { error(fd, 0, "405 Method Not Allowed", "Allow: GET, HEAD\r\n"); return; }
    char *q = strchr(target, '?');
    if (q) *q = 0;
    if (target[0] != '/') { error(fd, head, "400 Bad Request", NULL); return; }
    char path[8192];
    size_t pl = 0;
    for (char *p = target; *p && pl < sizeof path - 1; p++) {
        if (*p == '%') {
            int a = hexv((unsigned char)p[1]), b = a < 0 ? -1 : hexv((unsigned char)p[2]);
            if (a < 0 || b < 0) { error(fd, head, "400 Bad Request", NULL); return; }
            int c = a * 16 + b;
            if (!c) { error(fd, head, "400 Bad Request", NULL); return; }
            path[pl++] = (char)c;
            p += 2;
        } else path[pl++] = *p;
    }
    path[pl] = 0;
    for (char *s = path; s; s = strchr(s + 1, '/')) {
        char *seg = s + 1, *end = strchr(seg, '/');
        size_t sl = end ? (size_t)(end - seg) : strlen(seg);
        if (sl == 2 && seg[0] == '.' && seg[1] == '.') { error(fd, head, "403 Forbidden", NULL); return; }
    }
    char *fs;
    if (asprintf(&fs, "%s%s", root, path) < 0) return;
    struct stat st;
    if (stat(fs, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (path[pl - 1] != '/') {
            char *loc;
            if (asprintf(&loc, "Location: %s/\r\n", target) >= 0) { error(fd, head, "301 Moved Permanently", loc); free(loc); }
        } else {
            char *idx;
            if (asprintf(&idx, "%sindex.html", fs) >= 0) {
                struct stat is;
                if (stat(idx, &is) == 0 && S_ISREG(is.st_mode)) serve_file(fd, head, idx);
                else error(fd, head, "404 Not Found", NULL);
                free(idx);
            }
        }
    } else if (stat(fs, &st) == 0 && S_ISREG(st.st_mode)) {
        serve_file(fd, head, fs);
    } else {
        error(fd, head, "404 Not Found", NULL);
    }
    free(fs);
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: httpd PORT ROOT\n"); return 2; }
    root = argv[2];
    signal(SIGCHLD, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons(atoi(argv[1]));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 128)) { perror("bind"); return 1; }
    for (;;) {
        int fd = accept(ls, NULL, NULL);
        if (fd < 0) continue;
        pid_t pid = fork();
        if (pid == 0) {
            close(ls);
            handle(fd);
            shutdown(fd, SHUT_WR);
            close(fd);
            _exit(0);
        }
        close(fd);
    }
}
C
printf 'httpd: httpd.c\n\tgcc -O2 -Wall -o httpd httpd.c\n' > Makefile
make
