#ifndef UTIL_H
#define UTIL_H
void shout(const char *msg, int times);
#endif
