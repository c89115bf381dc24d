#ifndef SCRIPT_H
#define SCRIPT_H
#include <stdio.h>
#include "matrix.h"

/* Runs a matcalc script read from f; returns 0 on success, 1 on the first error. */
int run_script(FILE *f);
#endif
