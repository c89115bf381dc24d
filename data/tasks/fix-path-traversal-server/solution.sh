#!/bin/bash
python3 - <<'PY'
p = "/app/fileserver.py"
s = open(p).read()
s = s.replace('''        path = os.path.join(ROOT, rel)
        try:''', '''        root = os.path.realpath(ROOT)
        if not rel or "\\x00" in rel or "\\\\" in rel or rel.startswith("/"):
            self.send_error(404)
            return
        path = os.path.realpath(os.path.join(root, rel))
        if os.path.commonpath([root, path]) != root or not os.path.isfile(path):
            self.send_error(404)
            return
        try:''')
open(p, "w").write(s)
PY
