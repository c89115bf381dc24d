#!/bin/bash
set -e
cd /app
python3 - <<'PY'
p = "/app/wordfreq.c"
s = open(p).read()
s = s.replace("table = realloc(table, cap);", "table = realloc(table, cap * sizeof *table);")
s = s.replace("table[used].word = malloc(strlen(w));", "table[used].word = malloc(strlen(w) + 1);")
s = s.replace("    char buf[32];\n    int len = 0;", "    size_t bcap = 32;\n    char *buf = malloc(bcap);\n    size_t len = 0;")
s = s.replace("            buf[len++] = tolower(c);", "            if (len + 1 >= bcap) {\n                bcap *= 2;\n                buf = realloc(buf, bcap);\n            }\n            buf[len++] = tolower(c);")
s = s.replace("return y->count - x->count;", "return y->count > x->count ? 1 : -1;")
s = s.replace("for (int i = 0; i <= n && i < used; i++)", "for (int i = 0; i < n && i < used; i++)")
s = s.replace("    free(table);\n", "    free(table);\n    free(buf);\n")
open(p, "w").write(s)
PY
make -B wordfreq && make -B asan
