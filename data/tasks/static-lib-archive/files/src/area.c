#include <math.h>
#include "geom.h"
double geom_polygon_area(const point *p, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) {
        int j = (i + 1) % n;
        s += p[i].x * p[j].y - p[j].x * p[i].y;
    }
    return fabs(s) / 2;
}
