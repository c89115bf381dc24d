/* rev: print each line of stdin with its characters reversed. */
#include <stdio.h>
#include <string.h>

static void reverse(char *s, size_t n)
{
    size_t i = 0, j = n;
    while (i < j) {
        char t = s[i];
        s[i] = s[j];
        s[j] = t;
        i++;
        j--;
    }
}

int main(void)
{
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        size_t n = strlen(line);
        int had_newline = n > 0 && line[n - 1] == '\n';
        if (had_newline)
            line[--n] = '\0';
        reverse(line, n);
        fputs(line, stdout);
        if (had_newline)
            putchar('\n');
    }
    return 0;
}
