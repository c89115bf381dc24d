#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "store.h"

static void reply(int fd, const char *s) {
    char out[512];
    snprintf(out, sizeof out, s);
    strcat(out, "\n");
    write(fd, out, strlen(out));
}

static int handle(int fd, char *line) {
    char cmd[16], key[64], value[256];
    line[strcspn(line, "\r\n")] = 0;
    if (sscanf(line, "%s", cmd) != 1) { reply(fd, "ERR"); return 0; }
    if (strcmp(cmd, "QUIT") == 0) { reply(fd, "BYE"); return 1; }
    if (strcmp(cmd, "COUNT") == 0) {
        char b[32]; sprintf(b, "COUNT %d", store_count()); reply(fd, b); return 0;
    }
    char *p = line + strlen(cmd) + 1;
    char *sp = strchr(p, ' ');
    if (strcmp(cmd, "SET") == 0 && sp) {
        *sp = 0;
        strcpy(key, p);
        strcpy(value, sp + 1);
        if (store_set(key, value) < 0) reply(fd, "ERR full"); else reply(fd, "OK");
        return 0;
    }
    if (strcmp(cmd, "GET") == 0) {
        strcpy(key, p);
        const char *v = store_get(key);
        if (!v) { reply(fd, "NOTFOUND"); return 0; }
        char b[300]; sprintf(b, "VALUE %s", v); reply(fd, b); return 0;
    }
    if (strcmp(cmd, "DEL") == 0) {
        strcpy(key, p);
        reply(fd, store_del(key) == 0 ? "OK" : "NOTFOUND");
        return 0;
    }
    reply(fd, "ERR");
    return 0;
}

int main(int argc, char **argv) {
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET; a.sin_port = htons(atoi(argv[1])); a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 16)) { perror("bind"); return 1; }
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0) continue;
        char buf[4096]; size_t len = 0;
        for (;;) {
            ssize_t n = read(c, buf + len, sizeof buf - 1 - len);
            if (n <= 0) break;
            len += n; buf[len] = 0;
            char *nl; int quit = 0;
            while ((nl = strchr(buf, '\n'))) {
                *nl = 0;
                char line[1100];
                strcpy(line, buf);
                quit = handle(c, line);
                memmove(buf, nl + 1, len - (nl + 1 - buf) + 1);
                len -= nl + 1 - buf;
                if (quit) break;
            }
            if (quit) break;
        }
        close(c);
    }
}
