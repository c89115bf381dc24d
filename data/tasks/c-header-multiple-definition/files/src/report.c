#include <stdio.h>
#include "report.h"

void report_print(const struct counter *c) {
    printf("%s: %d hits, %d misses, ratio %.2f\n", c->name, c->hits, c->misses, counter_ratio(c));
}
