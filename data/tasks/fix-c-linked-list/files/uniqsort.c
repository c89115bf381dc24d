/* uniqsort: read integers from stdin, print them sorted ascending with
 * duplicates removed, one per line. Uses a sorted singly linked list. */
#include <stdio.h>
#include <stdlib.h>

struct node {
    long value;
    struct node *next;
};

/* insert value keeping the list sorted; returns the (possibly new) head */
static struct node *insert_sorted(struct node *head, long value)
{
    struct node *n = malloc(sizeof *n);
    n->value = value;
    n->next = NULL;
    if (head == NULL)
        return n;
    struct node *cur = head;
    while (cur->next && cur->next->value < value)
        cur = cur->next;
    n->next = cur->next;
    cur->next = n;
    return head;
}

/* remove consecutive duplicates from a sorted list */
static void dedup(struct node *head)
{
    for (struct node *cur = head; cur && cur->next; cur = cur->next) {
        if (cur->value == cur->next->value) {
            free(cur->next);
            cur->next = cur->next->next;
        }
    }
}

static void free_list(struct node *head)
{
    while (head) {
        free(head);
        head = head->next;
    }
}

int main(void)
{
    struct node *head = NULL;
    long v;
    while (scanf("%ld", &v) == 1)
        head = insert_sorted(head, v);
    dedup(head);
    for (struct node *cur = head; cur; cur = cur->next)
        printf("%ld\n", cur->value);
    free_list(head);
    return 0;
}
