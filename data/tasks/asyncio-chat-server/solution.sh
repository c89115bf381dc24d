#!/bin/bash
set -e
cat > /app/chat/server.py <<'PY'
"""asyncio chat server (see PROTOCOL.md)."""
import argparse
import asyncio
import collections
import re

NICK = re.compile(r"[A-Za-z0-9_]{1,16}")
ROOM = re.compile(r"#[a-z0-9-]{1,20}")


class Client:
    def __init__(self, writer):
        self.writer, self.nick, self.rooms = writer, None, set()

    def send(self, line):
        if not self.writer.is_closing():
            self.writer.write((line + "\n").encode())


class Server:
    def __init__(self, history):
        self.clients = set()
        self.rooms = collections.defaultdict(set)
        self.history = collections.defaultdict(lambda: collections.deque(maxlen=history))

    def by_nick(self, nick):
        for c in self.clients:
            if c.nick and c.nick.lower() == nick.lower():
                return c
        return None

    def leave_all(self, c):
        for room in sorted(c.rooms):
            self.rooms[room].discard(c)
            for o in self.rooms[room]:
                o.send("PARTED %s %s" % (room, c.nick))
        c.rooms.clear()

    def command(self, c, line):
        cmd, _, rest = line.partition(" ")
        if cmd == "QUIT":
            c.send("OK bye")
            if c.nick:
                self.leave_all(c)
            return False
        if cmd == "NICK":
            if not NICK.fullmatch(rest):
                c.send("ERR bad-nick")
            elif (o := self.by_nick(rest)) is not None and o is not c:
                c.send("ERR nick-taken")
            else:
                c.nick = rest
                c.send("OK nick %s" % rest)
            return True
        if cmd not in ("JOIN", "PART", "MSG", "PRIV", "WHO"):
            c.send("ERR unknown-command")
            return True
        if c.nick is None:
            c.send("ERR no-nick")
            return True
        if cmd == "PRIV":
            target, _, text = rest.partition(" ")
            o = self.by_nick(target) if target else None
            if o is None:
                c.send("ERR no-such-nick")
            else:
                c.send("OK priv")
                o.send("PRIV %s %s" % (c.nick, text))
            return True
        room, _, text = rest.partition(" ")
        if not ROOM.fullmatch(room):
            c.send("ERR bad-room")
            return True
        if cmd == "JOIN":
            new = room not in c.rooms
            c.send("OK join %s" % room)
            for nick, t in self.history[room]:
                c.send("HIST %s %s %s" % (room, nick, t))
            c.send("END %s" % room)
            if new:
                for o in self.rooms[room]:
                    o.send("JOINED %s %s" % (room, c.nick))
                self.rooms[room].add(c)
                c.rooms.add(room)
        elif cmd == "PART":
            if room not in c.rooms:
                c.send("ERR not-in-room")
            else:
                c.send("OK part %s" % room)
                c.rooms.discard(room)
                self.rooms[room].discard(c)
                for o in self.rooms[room]:
                    o.send("PARTED %s %s" % (room, c.nick))
        elif cmd == "MSG":
            if room not in c.rooms:
                c.send("ERR not-in-room")
            else:
                c.send("OK msg")
                self.history[room].append((c.nick, text))
                for o in self.rooms[room]:
                    if o is not c:
                        o.send("MSG %s %s %s" % (room, c.nick, text))
        else:
            nicks = sorted((o.nick for o in self.rooms[room]), key=lambda n: (n.lower(), n))
            c.send(" ".join(["WHO", room] + nicks))
        return True

    async def handle(self, reader, writer):
        c = Client(writer)
        self.clients.add(c)
        try:
            while True:
                raw = await reader.readline()
                if not raw:
                    break
                if not self.command(c, raw.decode("utf-8", "replace").rstrip("\r\n")):
                    await writer.drain()
                    break
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self.clients.discard(c)
            if c.rooms:
                self.leave_all(c)
            writer.close()


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--history", type=int, default=10)
    a = p.parse_args()
    srv = Server(a.history)
    server = await asyncio.start_server(srv.handle, "127.0.0.1", a.port)
    async with server:
        await server.serve_forever()


asyncio.run(main())
PY
