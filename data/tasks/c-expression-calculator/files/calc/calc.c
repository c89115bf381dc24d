/* TODO: implement calc as described in README.md */
int main(void) { return 0; }
