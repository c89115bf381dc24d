#!/bin/bash
set -e
cat > /app/Makefile <<'MK'
CC = gcc
CFLAGS = -O2 -Wall
PREFIX ?= /usr/local
DESTDIR ?=
B = build
LIBSRC = $(wildcard lib/*.c)
STATIC_OBJS = $(patsubst lib/%.c,$(B)/obj/%.o,$(LIBSRC))
PIC_OBJS = $(patsubst lib/%.c,$(B)/pic/%.o,$(LIBSRC))
GEN = $(B)/include/errcodes.h
INC = -I$(B)/include -Ilib
TOOLS = $(B)/bin/sumtool $(B)/bin/joiner

all: $(B)/libmini.a $(B)/libmini.so $(TOOLS)

$(GEN): gen/errors.tbl gen/mkerrors.awk
	@mkdir -p $(@D)
	awk -f gen/mkerrors.awk gen/errors.tbl > $@.tmp && mv $@.tmp $@

$(B)/obj/%.o: lib/%.c lib/*.h $(GEN)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(INC) -c -o $@ $<

$(B)/pic/%.o: lib/%.c lib/*.h $(GEN)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC $(INC) -c -o $@ $<

$(B)/libmini.a: $(STATIC_OBJS)
	rm -f $@
	ar rcs $@ $^

$(B)/libmini.so.1.2.0: $(PIC_OBJS)
	$(CC) -shared -Wl,-soname,libmini.so.1 -o $@ $^

$(B)/libmini.so.1: $(B)/libmini.so.1.2.0
	ln -sf libmini.so.1.2.0 $@

$(B)/libmini.so: $(B)/libmini.so.1
	ln -sf libmini.so.1 $@

$(B)/bin/%: tools/%.c $(B)/libmini.a lib/*.h $(GEN)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(INC) -o $@ $< $(B)/libmini.a

$(B)/test_lib: tests/test_lib.c $(B)/libmini.a lib/*.h $(GEN)
	$(CC) $(CFLAGS) $(INC) -o $@ $< $(B)/libmini.a

check: $(B)/test_lib
	./$(B)/test_lib

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/mini
	install -m 755 $(TOOLS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(B)/libmini.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(B)/libmini.so.1.2.0 $(DESTDIR)$(PREFIX)/lib/
	ln -sf libmini.so.1.2.0 $(DESTDIR)$(PREFIX)/lib/libmini.so.1
	ln -sf libmini.so.1 $(DESTDIR)$(PREFIX)/lib/libmini.so
	install -m 644 lib/vec.h lib/strbuf.h $(GEN) $(DESTDIR)$(PREFIX)/include/mini/

clean:
	rm -rf $(B)

.PHONY: all check install clean
MK
