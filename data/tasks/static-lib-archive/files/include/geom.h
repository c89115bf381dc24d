#ifndef GEOM_H
#define GEOM_H
typedef struct { double x, y; } point;
double geom_dist(point a, point b);
double geom_polygon_area(const point *pts, int n);
int geom_orientation(point a, point b, point c); /* 1 = counter-clockwise, -1 = clockwise, 0 = collinear */
#endif
