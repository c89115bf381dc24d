#include "counter.h"

void counter_hit(struct counter *c) { c->hits++; total_calls++; }
void counter_miss(struct counter *c) { c->misses++; total_calls++; }
