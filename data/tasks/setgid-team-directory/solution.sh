#!/bin/bash
set -e
chown root /srv/analytics
chgrp -R analytics /srv/analytics
find /srv/analytics -type d -exec chmod 2770 {} +
find /srv/analytics -type f -exec chmod 660 {} +
