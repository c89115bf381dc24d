#!/bin/bash
head -n 1 /app/products.csv > /app/header.txt
