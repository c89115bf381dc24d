#!/bin/bash
set -e
cat > /app/Makefile <<'MK'
MODE ?= release
ifeq ($(MODE),release)
  MODEFLAGS = -O2 -DNDEBUG
else ifeq ($(MODE),debug)
  MODEFLAGS = -O0 -g -DDEBUG
else
  $(error invalid MODE '$(MODE)': use release or debug)
endif
CC = gcc
OUT = build/$(MODE)
SRCS = $(wildcard src/*.c)
OBJS = $(patsubst src/%.c,$(OUT)/obj/%.o,$(SRCS))

all: $(OUT)/app

$(OUT)/app: $(OBJS)
	$(CC) $(MODEFLAGS) -o $@ $^

$(OUT)/obj/%.o: src/%.c $(wildcard include/*.h)
	@mkdir -p $(@D)
	$(CC) $(MODEFLAGS) -Iinclude -c -o $@ $<

clean:
ifeq ($(origin MODE),command line)
	rm -rf $(OUT)
else
	rm -rf build
endif

.PHONY: all clean
MK
