#!/bin/bash
set -e
cd /app/svc
sed -i 's/config.ini.example/config.ini/' start.sh
sed -i 's#data_dir = /app/svc/Data#data_dir = /app/svc/data#' config.ini
sed -i 's/    port = cfg\["server"\]\["port"\]/    port = cfg["server"].getint("port")/' app.py
sed -i 's#ITEM = re.compile(r"^/items/(\\d+)$")#ITEM = re.compile(r"^/items/([A-Za-z0-9-]+)$")#' app.py
sed -i 's/json.loads(path.read_text(encoding="utf-8"))/json.loads(path.read_text(encoding="utf-8-sig"))/' app.py
sed -i 's#^    log_path = cfg\["logging"\]\["access_log"\]#    log_path = cfg["logging"]["access_log"]\n    Path(log_path).parent.mkdir(parents=True, exist_ok=True)#' app.py
grep -n "getint\|A-Za-z0-9\|utf-8-sig\|mkdir" app.py
