#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "matrix.h"
#include "script.h"

#define MAXVARS 26

static Matrix *vars[MAXVARS];   /* variables are single uppercase letters A..Z */

static int var_index(const char *name) {
    if (strlen(name) != 1 || name[0] < 'A' || name[0] > 'Z')
        return -1;
    return name[0] - 'A';
}

static void set_var(int i, Matrix *m) {
    mat_free(vars[i]);
    vars[i] = m;
}

static int fail(int line, const char *msg) {
    fprintf(stderr, "error: line %d: %s\n", line, msg);
    return 1;
}

int run_script(FILE *f) {
    char buf[4096], cmd[16], x[16], y[16], z[16];
    int line = 0;
    while (fgets(buf, sizeof buf, f)) {
        line++;
        int n = sscanf(buf, "%15s %15s %15s %15s", cmd, x, y, z);
        if (n <= 0 || cmd[0] == '#')
            continue;
        if (strcmp(cmd, "matrix") == 0 && n == 4) {
            int v = var_index(x), rows = atoi(y), cols = atoi(z);
            if (v < 0 || rows <= 0 || cols <= 0)
                return fail(line, "bad matrix header");
            Matrix *m = mat_new(rows, cols);
            for (int r = 1; r < rows; r++) {
                if (!fgets(buf, sizeof buf, f))
                    return fail(line, "missing matrix row");
                line++;
                char *p = buf, *end;
                for (int c = 0; c < cols; c++) {
                    m->data[r * cols + c] = strtod(p, &end);
                    if (end == p)
                        return fail(line, "bad matrix row");
                    p = end;
                }
            }
            set_var(v, m);
        } else if (strcmp(cmd, "mul") == 0 && n == 4) {
            int d = var_index(x), a = var_index(y), b = var_index(z);
            if (d < 0 || a < 0 || b < 0 || !vars[a] || !vars[b])
                return fail(line, "undefined matrix");
            Matrix *m = mat_mul(vars[a], vars[b]);
            if (!m)
                return fail(line, "shape mismatch");
            set_var(d, m);
        } else if (strcmp(cmd, "transpose") == 0 && n == 3) {
            int d = var_index(x), a = var_index(y);
            if (d < 0 || a < 0 || !vars[a])
                return fail(line, "undefined matrix");
            set_var(d, mat_transpose(vars[a]));
        } else if (strcmp(cmd, "det") == 0 && n == 2) {
            int a = var_index(x);
            if (a < 0 || !vars[a])
                return fail(line, "undefined matrix");
            if (vars[a]->rows != vars[a]->cols)
                return fail(line, "not square");
            printf("%.6g\n", mat_det(vars[a]));
        } else if (strcmp(cmd, "norm") == 0 && n == 2) {
            int a = var_index(x);
            if (a < 0 || !vars[a])
                return fail(line, "undefined matrix");
            printf("%.6g\n", mat_norm(vars[a]));
        } else if (strcmp(cmd, "print") == 0 && n == 2) {
            int a = var_index(x);
            if (a < 0 || !vars[a])
                return fail(line, "undefined matrix");
            mat_print(vars[a]);
        } else {
            return fail(line, "unknown command");
        }
    }
    return 0;
}
