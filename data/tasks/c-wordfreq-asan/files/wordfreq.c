/* wordfreq: count words on stdin and print the N most frequent ones.
 *   usage: wordfreq N < text
 * A word is a maximal run of ASCII letters, compared case-insensitively (printed in lowercase).
 * Output: "<count> <word>" lines, by count descending, ties alphabetically; at most N lines.
 * Words can be arbitrarily long and there can be any number of distinct words.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    char *word;
    int count;
};

static struct entry *table;
static int used, cap;

static void add_word(const char *w) {
    for (int i = 0; i < used; i++) {
        if (strcmp(table[i].word, w) == 0) {
            table[i].count++;
            return;
        }
    }
    if (used == cap) {
        cap = cap ? cap * 2 : 8;
        table = realloc(table, cap);
    }
    table[used].word = malloc(strlen(w));
    strcpy(table[used].word, w);
    table[used].count = 1;
    used++;
}

static int cmp(const void *a, const void *b) {
    const struct entry *x = a, *y = b;
    if (x->count != y->count)
        return y->count - x->count;
    return strcmp(x->word, y->word);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 10;
    char buf[32];
    int len = 0;
    int c;
    while ((c = getchar()) != EOF) {
        if (isalpha(c)) {
            buf[len++] = tolower(c);
        } else if (len > 0) {
            buf[len] = '\0';
            add_word(buf);
            len = 0;
        }
    }
    if (len > 0) {
        buf[len] = '\0';
        add_word(buf);
    }
    qsort(table, used, sizeof *table, cmp);
    for (int i = 0; i <= n && i < used; i++)
        printf("%d %s\n", table[i].count, table[i].word);
    for (int i = 0; i < used; i++)
        free(table[i].word);
    free(table);
    return 0;
}
