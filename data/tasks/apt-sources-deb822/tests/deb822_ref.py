"""Reference one-line sources.list -> deb822 conversion and a random sources.list generator (tests only)."""
import random

OPT = {"arch": "Architectures", "signed-by": "Signed-By", "trusted": "Trusted", "lang": "Languages", "target": "Targets"}
ORDER = ["arch", "lang", "target", "trusted", "signed-by"]


def parse(text):
    entries = []
    for line in text.splitlines():
        s = line.split("#", 1)[0].strip()
        if not s:
            continue
        typ, rest = s.split(None, 1)
        opts = {}
        if rest.startswith("["):
            inner, rest = rest[1:].split("]", 1)
            for kv in inner.split():
                k, v = kv.split("=", 1)
                opts[k] = tuple(v.split(","))
        parts = rest.split()
        entries.append((typ, parts[0], parts[1], tuple(parts[2:]), tuple(sorted(opts.items()))))
    return entries


def convert(text):
    step1 = {}
    for typ, uri, suite, comps, opts in parse(text):
        step1.setdefault((uri, suite, comps, opts), [])
        if typ not in step1[(uri, suite, comps, opts)]:
            step1[(uri, suite, comps, opts)].append(typ)
    step2 = {}
    for (uri, suite, comps, opts), types in step1.items():
        types = tuple(t for t in ("deb", "deb-src") if t in types)
        key = (types, uri, comps, opts)
        step2.setdefault(key, [])
        if suite not in step2[key]:
            step2[key].append(suite)
    out = []
    for (types, uri, comps, opts), suites in step2.items():
        lines = [f"Types: {' '.join(types)}", f"URIs: {uri}", f"Suites: {' '.join(suites)}"]
        if comps:
            lines.append(f"Components: {' '.join(comps)}")
        od = dict(opts)
        for k in ORDER:
            if k in od:
                lines.append(f"{OPT[k]}: {' '.join(od[k])}")
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def generate(seed):
    rnd = random.Random(seed)
    mirrors = ["http://deb.debian.org/debian", "http://security.debian.org/debian-security",
               "https://download.docker.com/linux/debian", "http://mirror.example.org/debian/"]
    suites = ["bookworm", "bookworm-updates", "bookworm-backports", "bookworm-security", "trixie"]
    comps = [("main",), ("main", "contrib"), ("main", "contrib", "non-free", "non-free-firmware"), ("stable",)]
    lines = ["# generated sources.list", ""]
    for _ in range(rnd.randint(8, 14)):
        uri, c = rnd.choice(mirrors), rnd.choice(comps)
        opts = []
        if rnd.random() < 0.3:
            opts.append("arch=" + ",".join(rnd.sample(["amd64", "arm64", "i386"], rnd.randint(1, 2))))
        if rnd.random() < 0.25:
            opts.append("signed-by=/usr/share/keyrings/repo-archive-keyring.gpg")
        if rnd.random() < 0.1:
            opts.append("trusted=yes")
        if rnd.random() < 0.1:
            opts.append("lang=en,de")
        rnd.shuffle(opts)
        o = f"[{' '.join(opts)}] " if opts else ""
        for s in rnd.sample(suites, rnd.randint(1, 3)):
            for t in (["deb", "deb-src"] if rnd.random() < 0.4 else [rnd.choice(["deb", "deb-src"])]):
                lines.append(f"{t} {o}{uri} {s} {' '.join(c)}")
        if rnd.random() < 0.2:
            lines.append(f"# deb {uri} sid main")
        if rnd.random() < 0.15:
            lines.append(f"deb {uri} {rnd.choice(suites)} {' '.join(c)}   # trailing comment")
    if rnd.random() < 0.5:
        lines.append("deb [trusted=yes] file:/srv/local-repo ./")
    rnd.shuffle(lines)
    return "\n".join(lines) + "\n"
