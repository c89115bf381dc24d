#!/bin/bash
rm -f /app/tmp.log
