#include "counter.h"

void report_print(const struct counter *c);
