#!/bin/bash
set -e
python3 - <<'PY'
p = "/app/svc/kvserver.py"
s = open(p).read()
s = s.replace("import os\nimport time\n", "import os\nimport signal\nimport sys\nimport threading\nimport time\n")
s = s.replace('''def main():
    global CONFIG
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="/app/svc/config.json")
    args = ap.parse_args()
    CONFIG = load_config(args.config)
    server = ThreadingHTTPServer(("127.0.0.1", CONFIG["port"]), Handler)
    server.serve_forever()
''', '''def valid(cfg):
    return (isinstance(cfg, dict) and isinstance(cfg.get("banner"), str) and isinstance(cfg.get("responses"), dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in cfg["responses"].items()))


def main():
    global CONFIG
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="/app/svc/config.json")
    args = ap.parse_args()
    CONFIG = load_config(args.config)
    server = ThreadingHTTPServer(("127.0.0.1", CONFIG["port"]), Handler)
    server.daemon_threads = False  # server_close() waits for requests in flight
    pidfile = CONFIG["pidfile"]

    def on_hup(signum, frame):
        global CONFIG, RELOADS
        try:
            new = load_config(args.config)
            if not valid(new):
                raise ValueError("banner must be a string and responses an object of strings")
        except (OSError, ValueError) as e:
            print(f"reload failed: {e}", file=sys.stderr, flush=True)
            return
        CONFIG = dict(CONFIG, banner=new["banner"], responses=new["responses"])
        RELOADS += 1
        print("reload ok", file=sys.stderr, flush=True)

    def on_term(signum, frame):
        threading.Thread(target=server.shutdown).start()

    signal.signal(signal.SIGHUP, on_hup)
    signal.signal(signal.SIGTERM, on_term)
    with open(pidfile, "w") as f:
        f.write(f"{os.getpid()}\\n")
    server.serve_forever()
    server.server_close()
    os.remove(pidfile)
    sys.exit(0)
''')
open(p, "w").write(s)
PY
