#include <stdio.h>
#include "store.h"

int main(int argc, char **argv) {
    store s = {0};
    for (int i = 1; i + 1 < argc; i += 2) {
        int v;
        sscanf(argv[i + 1], "%d", &v);
        store_put(&s, argv[i], v);
    }
    int all[STORE_MAX];
    int n = get_vals(&s, all), sum = 0;
    for (int i = 0; i < n; i++) sum += all[i];
    printf("get_val(x)=%d count=%d sum=%d\n", get_val(&s, "x", -1), get_val_count(&s), sum);
    return 0;
}
