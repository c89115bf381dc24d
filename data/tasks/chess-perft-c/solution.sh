#!/bin/bash
set -e
cd /app
cat > perft.c <<'CEOF'
/* perft: count the leaf nodes of the legal move tree of a chess position. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>

typedef struct {
    char b[64];
    char side;      /* 'w' or 'b' */
    int castle;     /* bits: 1 K, 2 Q, 4 k, 8 q */
    int ep;         /* -1 or square */
} Pos;

typedef struct { int from, to; char promo; } Move;

static const int KN[8][2] = {{1,2},{2,1},{2,-1},{1,-2},{-1,-2},{-2,-1},{-2,1},{-1,2}};
static const int KG[8][2] = {{1,0},{1,1},{0,1},{-1,1},{-1,0},{-1,-1},{0,-1},{1,-1}};
static const int DG[4][2] = {{1,1},{1,-1},{-1,1},{-1,-1}};
static const int OR[4][2] = {{1,0},{-1,0},{0,1},{0,-1}};

static int own(char p, char side) {
    return p != '.' && (side == 'w' ? isupper((unsigned char)p) : islower((unsigned char)p));
}

static int parse_fen(const char *fen, Pos *p) {
    char board[128], side[8] = "w", castle[8] = "-", ep[8] = "-";
    if (sscanf(fen, "%127s %7s %7s %7s", board, side, castle, ep) < 1)
        return -1;
    memset(p->b, '.', 64);
    int r = 7, f = 0;
    for (char *c = board; *c; c++) {
        if (*c == '/') { r--; f = 0; }
        else if (isdigit((unsigned char)*c)) f += *c - '0';
        else { if (r < 0 || f > 7) return -1; p->b[r * 8 + f++] = *c; }
    }
    p->side = side[0];
    p->castle = 0;
    for (char *c = castle; *c; c++)
        p->castle |= *c == 'K' ? 1 : *c == 'Q' ? 2 : *c == 'k' ? 4 : *c == 'q' ? 8 : 0;
    p->ep = ep[0] == '-' ? -1 : (ep[1] - '1') * 8 + (ep[0] - 'a');
    return 0;
}

static int attacked(const char *b, int sq, char by) {
    int r = sq / 8, f = sq % 8;
    char pawn = by == 'w' ? 'P' : 'p', knight = by == 'w' ? 'N' : 'n', king = by == 'w' ? 'K' : 'k';
    char bis = by == 'w' ? 'B' : 'b', rook = by == 'w' ? 'R' : 'r', queen = by == 'w' ? 'Q' : 'q';
    int pr = by == 'w' ? r - 1 : r + 1;
    if (pr >= 0 && pr < 8) {
        if (f > 0 && b[pr * 8 + f - 1] == pawn) return 1;
        if (f < 7 && b[pr * 8 + f + 1] == pawn) return 1;
    }
    for (int i = 0; i < 8; i++) {
        int rr = r + KN[i][0], ff = f + KN[i][1];
        if (rr >= 0 && rr < 8 && ff >= 0 && ff < 8 && b[rr * 8 + ff] == knight) return 1;
        rr = r + KG[i][0]; ff = f + KG[i][1];
        if (rr >= 0 && rr < 8 && ff >= 0 && ff < 8 && b[rr * 8 + ff] == king) return 1;
    }
    for (int i = 0; i < 4; i++) {
        for (int k = 0; k < 2; k++) {
            int dr = k ? OR[i][0] : DG[i][0], df = k ? OR[i][1] : DG[i][1];
            char slider = k ? rook : bis;
            int rr = r + dr, ff = f + df;
            while (rr >= 0 && rr < 8 && ff >= 0 && ff < 8) {
                char q = b[rr * 8 + ff];
                if (q != '.') {
                    if (q == slider || q == queen) return 1;
                    break;
                }
                rr += dr; ff += df;
            }
        }
    }
    return 0;
}

static int add(Move *m, int n, int from, int to, char promo) {
    m[n].from = from; m[n].to = to; m[n].promo = promo;
    return n + 1;
}

static int gen(const Pos *p, Move *m) {
    int n = 0;
    char side = p->side, enemy = side == 'w' ? 'b' : 'w';
    const char *b = p->b;
    for (int sq = 0; sq < 64; sq++) {
        char pc = b[sq];
        if (!own(pc, side)) continue;
        int r = sq / 8, f = sq % 8;
        char t = toupper((unsigned char)pc);
        if (t == 'P') {
            int d = side == 'w' ? 1 : -1, start = side == 'w' ? 1 : 6, last = side == 'w' ? 7 : 0;
            const char *promos = side == 'w' ? "QRBN" : "qrbn";
            int r1 = r + d;
            if (r1 < 0 || r1 > 7) continue;
            int to = r1 * 8 + f;
            if (b[to] == '.') {
                if (r1 == last) for (int k = 0; k < 4; k++) n = add(m, n, sq, to, promos[k]);
                else {
                    n = add(m, n, sq, to, 0);
                    if (r == start && b[(r + 2 * d) * 8 + f] == '.') n = add(m, n, sq, (r + 2 * d) * 8 + f, 0);
                }
            }
            for (int df = -1; df <= 1; df += 2) {
                int ff = f + df;
                if (ff < 0 || ff > 7) continue;
                to = r1 * 8 + ff;
                if (own(b[to], enemy)) {
                    if (r1 == last) for (int k = 0; k < 4; k++) n = add(m, n, sq, to, promos[k]);
                    else n = add(m, n, sq, to, 0);
                } else if (to == p->ep) {
                    n = add(m, n, sq, to, 0);
                }
            }
        } else if (t == 'N' || t == 'K') {
            const int (*off)[2] = t == 'N' ? KN : KG;
            for (int i = 0; i < 8; i++) {
                int rr = r + off[i][0], ff = f + off[i][1];
                if (rr >= 0 && rr < 8 && ff >= 0 && ff < 8 && !own(b[rr * 8 + ff], side))
                    n = add(m, n, sq, rr * 8 + ff, 0);
            }
            int home = side == 'w' ? 4 : 60;
            if (t == 'K' && sq == home && !attacked(b, sq, enemy)) {
                int ks = side == 'w' ? 1 : 4, qs = side == 'w' ? 2 : 8;
                if ((p->castle & ks) && b[home + 1] == '.' && b[home + 2] == '.' &&
                    !attacked(b, home + 1, enemy) && !attacked(b, home + 2, enemy))
                    n = add(m, n, sq, home + 2, 0);
                if ((p->castle & qs) && b[home - 1] == '.' && b[home - 2] == '.' && b[home - 3] == '.' &&
                    !attacked(b, home - 1, enemy) && !attacked(b, home - 2, enemy))
                    n = add(m, n, sq, home - 2, 0);
            }
        } else {
            for (int i = 0; i < 8; i++) {
                int dr, df;
                if (i < 4) { if (t == 'R') continue; dr = DG[i][0]; df = DG[i][1]; }
                else { if (t == 'B') continue; dr = OR[i - 4][0]; df = OR[i - 4][1]; }
                int rr = r + dr, ff = f + df;
                while (rr >= 0 && rr < 8 && ff >= 0 && ff < 8) {
                    char q = b[rr * 8 + ff];
                    if (own(q, side)) break;
                    n = add(m, n, sq, rr * 8 + ff, 0);
                    if (q != '.') break;
                    rr += dr; ff += df;
                }
            }
        }
    }
    return n;
}

static void make(const Pos *p, const Move *mv, Pos *q) {
    *q = *p;
    char pc = q->b[mv->from];
    q->b[mv->from] = '.';
    q->ep = -1;
    if (pc == 'P' || pc == 'p') {
        if (mv->to == p->ep) q->b[pc == 'P' ? mv->to - 8 : mv->to + 8] = '.';
        if (abs(mv->to - mv->from) == 16) q->ep = (mv->from + mv->to) / 2;
        if (mv->promo) pc = mv->promo;
    }
    if ((pc == 'K' || pc == 'k') && abs(mv->to - mv->from) == 2) {
        if (mv->to > mv->from) { q->b[mv->from + 1] = q->b[mv->from + 3]; q->b[mv->from + 3] = '.'; }
        else { q->b[mv->from - 1] = q->b[mv->from - 4]; q->b[mv->from - 4] = '.'; }
    }
    q->b[mv->to] = pc;
    if (pc == 'K') q->castle &= ~3;
    if (pc == 'k') q->castle &= ~12;
    int sqs[2] = {mv->from, mv->to};
    for (int i = 0; i < 2; i++) {
        if (sqs[i] == 0) q->castle &= ~2;
        if (sqs[i] == 7) q->castle &= ~1;
        if (sqs[i] == 56) q->castle &= ~8;
        if (sqs[i] == 63) q->castle &= ~4;
    }
    q->side = p->side == 'w' ? 'b' : 'w';
}

static long long perft(const Pos *p, int depth) {
    if (depth == 0) return 1;
    Move moves[256];
    int n = gen(p, moves);
    long long total = 0;
    char king = p->side == 'w' ? 'K' : 'k';
    for (int i = 0; i < n; i++) {
        Pos q;
        make(p, &moves[i], &q);
        int ksq = (int)(strchr(q.b, king) - q.b);
        if (attacked(q.b, ksq, q.side)) continue;
        total += depth == 1 ? 1 : perft(&q, depth - 1);
    }
    return total;
}

int main(int argc, char **argv) {
    Pos p;
    if (argc != 3 || parse_fen(argv[1], &p) != 0) {
        fprintf(stderr, "usage: perft FEN DEPTH\n");
        return 2;
    }
    printf("%lld\n", perft(&p, atoi(argv[2])));
    return 0;
}
CEOF
printf 'CFLAGS = -O2 -Wall\n\nperft: perft.c\n\t$(CC) $(CFLAGS) -o $@ $<\n\nclean:\n\trm -f perft\n' > Makefile
make
