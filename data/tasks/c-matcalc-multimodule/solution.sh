#!/bin/bash
set -e
cd /app
python3 - <<'PY'
import re
h = open("include/matrix.h").read()
if "#ifndef MATRIX_H" not in h:
    h = "#ifndef MATRIX_H\n#define MATRIX_H\n" + h + "#endif\n"
open("include/matrix.h", "w").write(h)

m = open("src/matrix.c").read()
m = m.replace("b->data[k * a->cols + j]", "b->data[k * b->cols + j]")
start = m.index("/* Gaussian elimination on a copy. */")
end = m.index("double mat_norm")
m = m[:start] + '''/* Gaussian elimination with partial pivoting on a copy. */
double mat_det(const Matrix *a) {
    int n = a->rows;
    double *m = malloc(sizeof(double) * n * n);
    for (int i = 0; i < n * n; i++)
        m[i] = a->data[i];
    double det = 1;
    for (int col = 0; col < n; col++) {
        int best = col;
        for (int r = col + 1; r < n; r++)
            if (fabs(m[r * n + col]) > fabs(m[best * n + col]))
                best = r;
        if (m[best * n + col] == 0) {
            free(m);
            return 0;
        }
        if (best != col) {
            for (int c = 0; c < n; c++) {
                double t = m[col * n + c];
                m[col * n + c] = m[best * n + c];
                m[best * n + c] = t;
            }
            det = -det;
        }
        double pivot = m[col * n + col];
        det *= pivot;
        for (int r = col + 1; r < n; r++) {
            double f = m[r * n + col] / pivot;
            for (int c = col; c < n; c++)
                m[r * n + c] -= f * m[col * n + c];
        }
    }
    free(m);
    return det + 0.0;
}

''' + m[end:]
m = m.replace('printf(j ? " %.6g" : "%.6g", m->data[i * m->cols + j]);', 'printf(j ? " %.6g" : "%.6g", m->data[i * m->cols + j] + 0.0);')
open("src/matrix.c", "w").write(m)

s = open("src/script.c").read()
s = s.replace("for (int r = 1; r < rows; r++) {", "for (int r = 0; r < rows; r++) {")
open("src/script.c", "w").write(s)

mk = open("Makefile").read()
mk = mk.replace("\t$(CC) $(LDLIBS) -o $@ build/libmat.a build/main.o", "\t$(CC) -o $@ build/main.o build/libmat.a $(LDLIBS)")
open("Makefile", "w").write(mk)
PY
make
