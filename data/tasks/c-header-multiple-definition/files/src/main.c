#include <stdio.h>
#include "counter.h"
#include "report.h"

/* usage: counter_demo PATTERN  (h = hit, m = miss) */
int main(int argc, char **argv) {
    struct counter c = {"cache", 0, 0};
    for (const char *p = argc > 1 ? argv[1] : ""; *p; p++) {
        if (*p == 'h') counter_hit(&c);
        else if (*p == 'm') counter_miss(&c);
    }
    report_print(&c);
    printf("total calls: %d\n", total_calls);
    return 0;
}
