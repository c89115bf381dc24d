#ifndef CALC_H
#define CALC_H
int checked_div(int a, int b);
const char *build_mode(void);
#endif
