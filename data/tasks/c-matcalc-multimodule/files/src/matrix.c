#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "matrix.h"

Matrix *mat_new(int rows, int cols) {
    Matrix *m = malloc(sizeof *m);
    m->rows = rows;
    m->cols = cols;
    m->data = calloc((size_t)rows * cols, sizeof(double));
    return m;
}

void mat_free(Matrix *m) {
    if (m) {
        free(m->data);
        free(m);
    }
}

Matrix *mat_mul(const Matrix *a, const Matrix *b) {
    if (a->cols != b->rows)
        return NULL;
    Matrix *c = mat_new(a->rows, b->cols);
    for (int i = 0; i < a->rows; i++)
        for (int j = 0; j < b->cols; j++) {
            double s = 0;
            for (int k = 0; k < a->cols; k++)
                s += a->data[i * a->cols + k] * b->data[k * a->cols + j];
            c->data[i * c->cols + j] = s;
        }
    return c;
}

Matrix *mat_transpose(const Matrix *a) {
    Matrix *t = mat_new(a->cols, a->rows);
    for (int i = 0; i < a->rows; i++)
        for (int j = 0; j < a->cols; j++)
            t->data[j * t->cols + i] = a->data[i * a->cols + j];
    return t;
}

/* Gaussian elimination on a copy. */
double mat_det(const Matrix *a) {
    int n = a->rows;
    double *m = malloc(sizeof(double) * n * n);
    for (int i = 0; i < n * n; i++)
        m[i] = a->data[i];
    double det = 1;
    for (int col = 0; col < n; col++) {
        double pivot = m[col * n + col];
        det *= pivot;
        for (int r = col + 1; r < n; r++) {
            double f = m[r * n + col] / pivot;
            for (int c = col; c < n; c++)
                m[r * n + c] -= f * m[col * n + c];
        }
    }
    free(m);
    return det;
}

double mat_norm(const Matrix *a) {
    double s = 0;
    for (int i = 0; i < a->rows * a->cols; i++)
        s += a->data[i] * a->data[i];
    return sqrt(s);
}

void mat_print(const Matrix *m) {
    for (int i = 0; i < m->rows; i++) {
        for (int j = 0; j < m->cols; j++)
            printf(j ? " %.6g" : "%.6g", m->data[i * m->cols + j]);
        printf("\n");
    }
}
