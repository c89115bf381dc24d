#include <stdio.h>
#include "matrix.h"
#include "script.h"

int main(int argc, char **argv) {
    FILE *f = stdin;
    if (argc > 1 && !(f = fopen(argv[1], "r"))) {
        fprintf(stderr, "matcalc: cannot open %s\n", argv[1]);
        return 2;
    }
    return run_script(f);
}
