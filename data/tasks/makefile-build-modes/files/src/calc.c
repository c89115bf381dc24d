#include <assert.h>
#include "calc.h"
int checked_div(int a, int b) {
    assert(b != 0 && "division by zero");
    return b ? a / b : 0;
}
const char *build_mode(void) {
#ifdef DEBUG
    return "debug";
#else
    return "release";
#endif
}
