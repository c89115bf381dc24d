#!/bin/bash
set -e
cat > /app/calc/calc.c <<'C'
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* AST nodes in a pool; parse fully, then evaluate */
enum { NUM, NEG, ADD, SUB, MUL, DIV, MOD, POW };
typedef struct { int op; long long v; int l, r; } node;
static node pool[100000];
static int npool;
static const char *s;
static int err; /* 1 syntax, 2 div0, 3 negexp, 4 overflow */

static int mk(int op, long long v, int l, int r) {
    if (npool >= 100000) { err = 1; return 0; }
    pool[npool] = (node){op, v, l, r};
    return npool++;
}
static void ws(void) { while (*s == ' ' || *s == '\t') s++; }
static int expr(void);
static int unary(void);
static int primary(void) {
    ws();
    if (*s == '(') {
        s++;
        int e = expr();
        ws();
        if (*s != ')') { err = 1; return 0; }
        s++;
        return e;
    }
    if (isdigit((unsigned char)*s)) {
        unsigned long long v = 0;
        while (isdigit((unsigned char)*s)) {
            v = v * 10 + (*s - '0');
            if (v > (unsigned long long)LLONG_MAX + 1) v = (unsigned long long)LLONG_MAX + 2;
            s++;
        }
        if (v > (unsigned long long)LLONG_MAX) { err = 1; return 0; }
        return mk(NUM, (long long)v, 0, 0);
    }
    err = 1;
    return 0;
}
static int power(void) {
    int b = primary();
    if (err) return 0;
    ws();
    if (*s == '^') { s++; int e = unary(); return mk(POW, 0, b, e); }
    return b;
}
static int unary(void) {
    ws();
    if (*s == '-') { s++; int u = unary(); return mk(NEG, 0, u, 0); }
    if (*s == '+') { s++; return unary(); }
    return power();
}
static int term(void) {
    int l = unary();
    for (;;) {
        if (err) return 0;
        ws();
        int op = *s == '*' ? MUL : *s == '/' ? DIV : *s == '%' ? MOD : 0;
        if (!op) return l;
        s++;
        l = mk(op, 0, l, unary());
    }
}
static int expr(void) {
    int l = term();
    for (;;) {
        if (err) return 0;
        ws();
        int op = *s == '+' ? ADD : *s == '-' ? SUB : 0;
        if (!op) return l;
        s++;
        l = mk(op, 0, l, term());
    }
}
static long long eval(int i) {
    node *n = &pool[i];
    long long a, b, r;
    if (err) return 0;
    switch (n->op) {
    case NUM: return n->v;
    case NEG:
        a = eval(n->l);
        if (err) return 0;
        if (a == LLONG_MIN) { err = 4; return 0; }
        return -a;
    }
    a = eval(n->l);
    if (err) return 0;
    b = eval(n->r);
    if (err) return 0;
    switch (n->op) {
    case ADD: if (__builtin_add_overflow(a, b, &r)) err = 4; return r;
    case SUB: if (__builtin_sub_overflow(a, b, &r)) err = 4; return r;
    case MUL: if (__builtin_mul_overflow(a, b, &r)) err = 4; return r;
    case DIV: case MOD:
        if (b == 0) { err = 2; return 0; }
        if (a == LLONG_MIN && b == -1) { if (n->op == MOD) return 0; err = 4; return 0; }
        return n->op == DIV ? a / b : a % b;
    case POW:
        if (b < 0) { err = 3; return 0; }
        r = 1;
        while (b-- > 0) {
            if (__builtin_mul_overflow(r, a, &r)) { err = 4; return 0; }
            if (r == 0 || r == 1) break;
            if (r == -1) { if (b % 2) r = -r; break; }
        }
        return r;
    }
    return 0;
}
int main(void) {
    static char line[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = 0;
        s = line;
        ws();
        if (!*s) continue;
        npool = 0;
        err = 0;
        int root = expr();
        ws();
        if (!err && *s) err = 1;
        long long v = err ? 0 : eval(root);
        if (err == 1) puts("error: syntax");
        else if (err == 2) puts("error: division by zero");
        else if (err == 3) puts("error: negative exponent");
        else if (err == 4) puts("error: overflow");
        else printf("%lld\n", v);
    }
    return 0;
}
C
printf 'calc: calc.c\n\tgcc -O2 -Wall -o calc calc.c\n' > /app/calc/Makefile
