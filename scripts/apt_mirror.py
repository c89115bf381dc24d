"""Print the Debian mirror URI that this machine's apt sources use for a suite (no host name is
hard-coded in termrl). Reads /etc/apt/sources.list (one-line format) and /etc/apt/sources.list.d/*
(one-line `.list` and deb822 `.sources`). Exits 1 when none names the suite."""

import glob
import sys


def mirrors(suite: str, apt_dir: str = "/etc/apt") -> list[str]:
    """Mirror URIs whose sources entries name `suite`, in file order."""
    found = []
    for path in [f"{apt_dir}/sources.list", *sorted(glob.glob(f"{apt_dir}/sources.list.d/*.list"))]:
        try:
            lines = open(path).read().splitlines()
        except OSError:
            continue
        for line in lines:
            parts = line.split("#", 1)[0].split()
            if len(parts) >= 3 and parts[0] == "deb":
                rest = [p for p in parts[1:] if not p.startswith("[")]
                if len(rest) >= 2 and rest[1] == suite:
                    found.append(rest[0])
    for path in sorted(glob.glob(f"{apt_dir}/sources.list.d/*.sources")):
        for stanza in open(path).read().split("\n\n"):
            fields = {}
            for line in stanza.splitlines():
                if line.startswith("#") or ":" not in line:
                    continue
                key, value = line.split(":", 1)
                fields[key.strip().lower()] = value.split()
            if "deb" in fields.get("types", []) and suite in fields.get("suites", []):
                found.extend(fields.get("uris", []))
    return found


if __name__ == "__main__":
    uris = mirrors(sys.argv[1] if len(sys.argv) > 1 else "bookworm")
    if not uris:
        sys.exit(1)
    print(uris[0])
