#!/bin/bash
set -e
python3 - <<'PY'
p = "/app/uniqsort.c"
s = open(p).read()
s = s.replace("""    if (head == NULL)
        return n;
""", """    if (head == NULL || value < head->value) {
        n->next = head;
        return n;
    }
""")
s = s.replace("""    for (struct node *cur = head; cur && cur->next; cur = cur->next) {
        if (cur->value == cur->next->value) {
            free(cur->next);
            cur->next = cur->next->next;
        }
    }""", """    struct node *cur = head;
    while (cur && cur->next) {
        if (cur->value == cur->next->value) {
            struct node *dup = cur->next;
            cur->next = dup->next;
            free(dup);
        } else {
            cur = cur->next;
        }
    }""")
s = s.replace("""    while (head) {
        free(head);
        head = head->next;
    }""", """    while (head) {
        struct node *next = head->next;
        free(head);
        head = next;
    }""")
open(p, "w").write(s)
PY
make -C /app -s -B
