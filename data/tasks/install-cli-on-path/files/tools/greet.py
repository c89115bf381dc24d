#!/usr/bin/env python3
"""Greeting CLI."""
import argparse

p = argparse.ArgumentParser(prog="greet")
p.add_argument("--name", required=True)
p.add_argument("--shout", action="store_true")
a = p.parse_args()
msg = "Hello, %s!" % a.name
print(msg.upper() if a.shout else msg)
