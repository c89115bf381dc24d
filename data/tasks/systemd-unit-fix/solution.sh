#!/bin/bash
cat > /app/webapp.service <<'UNIT'
[Unit]
Description=Example web application
After=network.target

[Service]
User=webapp
ExecStart=/usr/bin/python3 /opt/webapp/server.py --port 8080
Restart=on-failure
RestartSec=5
Environment=APP_ENV=production

[Install]
WantedBy=multi-user.target
UNIT
