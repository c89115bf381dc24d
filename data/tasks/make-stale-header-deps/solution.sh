#!/bin/bash
set -e
cat > /app/Makefile <<'MK'
CC = gcc
CFLAGS = -O2 -Wall -Iinclude -MMD -MP

SRCS = $(wildcard src/*.c)
OBJS = $(patsubst src/%.c,build/%.o,$(SRCS))

build/greet: $(OBJS)
	$(CC) -o $@ $(OBJS)

build/%.o: src/%.c
	mkdir -p build
	$(CC) $(CFLAGS) -c $< -o $@

clean:
	rm -rf build

.PHONY: clean
-include $(OBJS:.o=.d)
MK
