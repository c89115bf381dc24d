#!/bin/bash
chmod 1777 /app/public/uploads
