#!/bin/bash
set -e
cd /app/mk
cat > mk.c <<'C'
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct { char **v; int n, cap; } list;
static void push(list *l, char *s) {
    if (l->n == l->cap) { l->cap = l->cap ? l->cap * 2 : 8; l->v = realloc(l->v, l->cap * sizeof *l->v); }
    l->v[l->n++] = s;
}
typedef struct { list lines; } recipe;
typedef struct { char *name; list prereq; recipe *rec; int has_rule, phony, state, rebuilt; } target;

static list vnames, vvals, rulelines, ruleline_no;
static recipe **rulerec;
static target *T;
static int nT, capT, dry, nrebuilt;

static void die(const char *fmt, ...) {
    va_list ap; va_start(ap, fmt);
    fputs("mk: ", stderr); vfprintf(stderr, fmt, ap); fputc('\n', stderr);
    va_end(ap);
    fflush(stdout);
    exit(2);
}
static const char *getvar(const char *n) {
    for (int i = vnames.n - 1; i >= 0; i--) if (!strcmp(vnames.v[i], n)) return vvals.v[i];
    return "";
}
typedef struct { char *s; size_t n, cap; } buf;
static void bput(buf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) { b->cap = (b->n + n + 1) * 2; b->s = realloc(b->s, b->cap); }
    memcpy(b->s + b->n, s, n); b->n += n; b->s[b->n] = 0;
}
static void expand_into(buf *b, const char *s, target *t, int depth) {
    if (depth > 50) die("recursive variable expansion");
    while (*s) {
        if (*s != '$') { bput(b, s, 1); s++; continue; }
        s++;
        if (*s == '$') { bput(b, "$", 1); s++; }
        else if (*s == '(') {
            const char *e = strchr(s, ')');
            if (!e) die("unterminated variable reference");
            char *name = strndup(s + 1, e - s - 1);
            expand_into(b, getvar(name), t, depth + 1);
            free(name);
            s = e + 1;
        } else if (*s == '@' || *s == '<' || *s == '^') {
            if (t) {
                if (*s == '@') bput(b, t->name, strlen(t->name));
                else if (*s == '<') { if (t->prereq.n) bput(b, t->prereq.v[0], strlen(t->prereq.v[0])); }
                else for (int i = 0; i < t->prereq.n; i++) {
                    if (i) bput(b, " ", 1);
                    bput(b, t->prereq.v[i], strlen(t->prereq.v[i]));
                }
            }
            s++;
        } else if (*s) { bput(b, "$", 1); bput(b, s, 1); s++; }
    }
}
static char *expand(const char *s, target *t) { buf b = {0}; bput(&b, "", 0); expand_into(&b, s, t, 0); return b.s; }

static target *get(const char *name) {
    for (int i = 0; i < nT; i++) if (!strcmp(T[i].name, name)) return &T[i];
    if (nT == capT) { capT = capT ? capT * 2 : 16; T = realloc(T, capT * sizeof *T); }
    memset(&T[nT], 0, sizeof *T);
    T[nT].name = strdup(name);
    return &T[nT++];
}
static char *trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = 0;
    return s;
}
static void parse(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open %s", path);
    char *line = NULL; size_t cap = 0; ssize_t len; int no = 0;
    recipe *cur = NULL;
    list recs = {0};
    while ((len = getline(&line, &cap, f)) != -1) {
        no++;
        if (len && line[len - 1] == '\n') line[--len] = 0;
        if (line[0] == '\t') {
            if (!cur) die("line %d: recipe line without a rule", no);
            char *r = trim(line + 1);
            if (*r) push(&cur->lines, strdup(r));
            continue;
        }
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *s = trim(line);
        if (!*s) continue;
        char *eq = strchr(s, '='), *colon = strchr(s, ':');
        if (eq && (!colon || eq < colon)) {
            *eq = 0;
            char *name = trim(s);
            int ok = *name && (isalpha((unsigned char)*name) || *name == '_');
            for (char *p = name; *p; p++) if (!isalnum((unsigned char)*p) && *p != '_') ok = 0;
            if (!ok) die("line %d: bad variable name", no);
            push(&vnames, strdup(name));
            push(&vvals, strdup(trim(eq + 1)));
            cur = NULL;
        } else if (colon) {
            cur = calloc(1, sizeof *cur);
            push(&rulelines, strdup(s));
            char *nos; if (asprintf(&nos, "%d", no) < 0) exit(2);
            push(&ruleline_no, nos);
            push(&recs, (char *)cur);
        } else die("line %d: syntax error", no);
    }
    fclose(f);
    rulerec = (recipe **)recs.v;
}
static void setup_rules(void) {
    for (int r = 0; r < rulelines.n; r++) {
        char *e = expand(rulelines.v[r], NULL);
        char *colon = strchr(e, ':');
        if (!colon) die("line %s: syntax error", ruleline_no.v[r]);
        *colon = 0;
        list tg = {0}, pq = {0};
        for (char *tok = strtok(e, " \t"); tok; tok = strtok(NULL, " \t")) push(&tg, tok);
        for (char *tok = strtok(colon + 1, " \t"); tok; tok = strtok(NULL, " \t")) push(&pq, tok);
        if (!tg.n) die("line %s: rule without target", ruleline_no.v[r]);
        for (int i = 0; i < tg.n; i++) {
            target *t = get(tg.v[i]);
            for (int j = 0; j < pq.n; j++) {
                int dup = 0;
                for (int k = 0; k < t->prereq.n; k++) if (!strcmp(t->prereq.v[k], pq.v[j])) dup = 1;
                if (!dup) push(&t->prereq, strdup(pq.v[j]));
            }
            if (rulerec[r]->lines.n) {
                if (t->rec && t->rec->lines.n) die("line %s: more than one recipe for '%s'", ruleline_no.v[r], t->name);
                t->rec = rulerec[r];
            }
            t->has_rule = 1;
        }
    }
    for (int i = 0; i < nT; i++) if (!strcmp(T[i].name, ".PHONY"))
        for (int j = 0; j < T[i].prereq.n; j++) get(T[i].prereq.v[j])->phony = 1;
}
static int mtime(const char *p, struct timespec *ts) {
    struct stat st;
    if (stat(p, &st)) return 0;
    *ts = st.st_mtim;
    return 1;
}
static int newer(struct timespec a, struct timespec b) { return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec); }
static void build(int idx, const char *via) {
    target *t = &T[idx];
    if (t->state == 1) die("circular dependency %s <- %s", t->name, via);
    if (t->state == 2) return;
    t->state = 1;
    for (int i = 0; i < t->prereq.n; i++) {
        target *p = get(t->prereq.v[i]);
        t = &T[idx];
        build((int)(p - T), t->name);
        t = &T[idx];
    }
    struct timespec tt, pt;
    int exists = mtime(t->name, &tt);
    if (!t->has_rule) {
        if (!exists && !t->phony) die("no rule to make target '%s'", t->name);
        t->state = 2;
        return;
    }
    int need = t->phony || !exists;
    for (int i = 0; i < t->prereq.n && !need; i++) {
        target *p = get(t->prereq.v[i]);
        t = &T[idx];
        if (p->phony || !mtime(p->name, &pt) || newer(pt, tt)) need = 1;
    }
    if (need) {
        for (int i = 0; t->rec && i < t->rec->lines.n; i++) {
            char *cmd = expand(t->rec->lines.v[i], t);
            int silent = cmd[0] == '@';
            char *c = silent ? cmd + 1 : cmd;
            if (!silent || dry) { puts(c); fflush(stdout); }
            if (!dry) {
                pid_t pid = fork();
                if (pid == 0) { execl("/bin/sh", "sh", "-c", c, (char *)NULL); _exit(127); }
                int st; waitpid(pid, &st, 0);
                int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                if (code) die("*** [%s] Error %d", t->name, code);
            }
            free(cmd);
        }
        t->rebuilt = 1;
        nrebuilt++;
    }
    t->state = 2;
}
int main(int argc, char **argv) {
    const char *file = "Mkfile";
    int opt;
    while ((opt = getopt(argc, argv, "nf:")) != -1) {
        if (opt == 'n') dry = 1;
        else if (opt == 'f') file = optarg;
        else die("usage: mk [-n] [-f FILE] [TARGET...]");
    }
    parse(file);
    setup_rules();
    list goals = {0};
    for (int i = optind; i < argc; i++) push(&goals, argv[i]);
    if (!goals.n) {
        char *e = rulelines.n ? expand(rulelines.v[0], NULL) : NULL;
        if (!e) die("no targets");
        char *tok = strtok(e, " \t:");
        if (!tok) die("no targets");
        push(&goals, tok);
    }
    for (int i = 0; i < goals.n; i++) {
        int before = nrebuilt;
        target *t = get(goals.v[i]);
        build((int)(t - T), "command line");
        if (nrebuilt == before) { printf("mk: '%s' is up to date.\n", goals.v[i]); fflush(stdout); }
    }
    return 0;
}
C
printf 'mk: mk.c\n\tgcc -O2 -Wall -o mk mk.c\n' > Makefile
make
