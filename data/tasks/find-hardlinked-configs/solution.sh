#!/bin/bash
find /app/configs -samefile /app/configs/master.conf ! -path /app/configs/master.conf > /app/hardlinks.txt
