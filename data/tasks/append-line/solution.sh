#!/bin/bash
grep -qxF '10.0.0.9 cache.internal' /app/hosts || echo '10.0.0.9 cache.internal' >> /app/hosts
