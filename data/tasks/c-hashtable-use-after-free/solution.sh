#!/bin/bash
set -e
cd /app
python3 - <<'PY'
p = "/app/kv.c"
s = open(p).read()
s = s.replace('''        for (struct node *n = buckets[i]; n; n = n->next) {
            size_t j = hash(n->key) % newn;''', '''        struct node *next;
        for (struct node *n = buckets[i]; n; n = next) {
            next = n->next;
            size_t j = hash(n->key) % newn;''')
s = s.replace("    free(buckets);\n    nbuckets = newn;", "    free(buckets);\n    buckets = nb;\n    nbuckets = newn;")
s = s.replace('''            free(n->key);
            free(n->value);
            free(n);
            *pp = n->next;
            nkeys--;''', '''            *pp = n->next;
            free(n->key);
            free(n->value);
            free(n);
            nkeys--;''')
open(p, "w").write(s)
PY
make -B
