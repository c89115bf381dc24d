#!/bin/bash
ls /app/docs > /app/listing.txt
