#!/bin/bash
set -e
cd /app/src
sed -i 's/\bget_val\b/store_get/g' store.h store.c main.c
sed -i 's/"store_get(x)=/"get_val(x)=/' main.c
cd /app && rm -f kv && make
