#include <stdio.h>
#include "util.h"

void shout(const char *msg, int times) {
    for (int i = 0; i < times; i++)
        printf("%s!\n", msg);
}
