#!/bin/bash
set -e
python3 -c 'import xml.etree.ElementTree as ET; print("\n".join(i.findtext("title") for i in ET.parse("/app/feed.xml").iter("item")))' > /app/titles.txt
