struct counter {
    const char *name;
    int hits;
    int misses;
};

int total_calls = 0;

void counter_hit(struct counter *c);
void counter_miss(struct counter *c);

double counter_ratio(const struct counter *c) {
    int n = c->hits + c->misses;
    return n ? (double)c->hits / n : 0.0;
}
