#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* stats: print count, mean, population standard deviation and geometric mean of the arguments */
int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: stats NUMBER...\n");
        return 2;
    }
    int n = argc - 1;
    double sum = 0, sq = 0, logsum = 0;
    for (int i = 1; i < argc; i++) {
        double x = strtod(argv[i], NULL);
        sum += x;
        logsum += log(fabs(x));
    }
    double mean = sum / n;
    for (int i = 1; i < argc; i++) {
        double d = strtod(argv[i], NULL) - mean;
        sq += pow(d, 2);
    }
    printf("n=%d mean=%.4f sd=%.4f gmean=%.4f\n", n, mean, sqrt(sq / n), exp(logsum / n));
    return 0;
}
