#include <math.h>
#include "geom.h"
double geom_dist(point a, point b) { return hypot(a.x - b.x, a.y - b.y); }
