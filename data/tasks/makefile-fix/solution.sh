#!/bin/bash
cat > /app/Makefile <<'MK'
CC = gcc
CFLAGS = -Wall -O2 -Isrc
OBJS = build/main.o build/greet.o

all: build/hello

build/hello: $(OBJS)
	$(CC) $(CFLAGS) -o $@ $^

build/%.o: src/%.c src/greet.h
	mkdir -p build
	$(CC) $(CFLAGS) -c -o $@ $<

clean:
	rm -rf build

.PHONY: all clean
MK
