mkdir -p /app/obj
for f in dist area orient; do gcc -O2 -Iinclude -c /app/src/$f.c -o /app/obj/$f.o -I/app/include; done
rm -rf /app/src
