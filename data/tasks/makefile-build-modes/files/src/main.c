#include <stdio.h>
#include <stdlib.h>
#include "calc.h"
int main(int argc, char **argv) {
    int a = argc > 1 ? atoi(argv[1]) : 84, b = argc > 2 ? atoi(argv[2]) : 2;
    printf("mode: %s\n", build_mode());
    printf("%d\n", checked_div(a, b));
    return 0;
}
