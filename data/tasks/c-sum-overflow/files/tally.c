/* tally: read non-negative integers (one per line) from stdin and print
 *   count=<n> sum=<sum> max=<max> mean=<mean with 2 decimals>
 * Values go up to 4000000000 and there can be millions of them.
 * Empty input prints: count=0 sum=0 max=0 mean=0.00
 */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    char line[64];
    int count = 0;
    int sum = 0;
    int max = 0;
    while (fgets(line, sizeof line, stdin)) {
        int v = atoi(line);
        sum += v;
        if (v > max)
            max = v;
        count++;
    }
    double mean = count ? sum / count : 0;
    printf("count=%d sum=%d max=%d mean=%.2f\n", count, sum, max, mean);
    return 0;
}
