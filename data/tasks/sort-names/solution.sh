#!/bin/bash
sort -f /app/names.txt > /app/sorted.txt
