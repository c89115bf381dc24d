typedef struct {
    int rows, cols;
    double *data;   /* row-major: element (i, j) is data[i * cols + j] */
} Matrix;

Matrix *mat_new(int rows, int cols);
void mat_free(Matrix *m);
Matrix *mat_mul(const Matrix *a, const Matrix *b);   /* NULL if the shapes do not match */
Matrix *mat_transpose(const Matrix *a);
double mat_det(const Matrix *a);                      /* square matrices only */
double mat_norm(const Matrix *a);                     /* Frobenius norm */
void mat_print(const Matrix *m);
