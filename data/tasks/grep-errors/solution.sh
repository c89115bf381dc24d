#!/bin/bash
awk '$3 == "ERROR"' /app/app.log > /app/errors.txt
