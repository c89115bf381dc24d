#!/bin/bash
set -e
cd /app/src
cat > counter.h <<'H'
#ifndef COUNTER_H
#define COUNTER_H
struct counter {
    const char *name;
    int hits;
    int misses;
};

extern int total_calls;

void counter_hit(struct counter *c);
void counter_miss(struct counter *c);
double counter_ratio(const struct counter *c);
#endif
H
cat > report.h <<'H'
#ifndef REPORT_H
#define REPORT_H
#include "counter.h"

void report_print(const struct counter *c);
#endif
H
cat >> counter.c <<'C'

int total_calls = 0;

double counter_ratio(const struct counter *c) {
    int n = c->hits + c->misses;
    return n ? (double)c->hits / n : 0.0;
}
C
cd /app && make
