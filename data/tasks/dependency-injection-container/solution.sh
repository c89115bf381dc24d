#!/bin/bash
set -e
cat > /app/container.py <<'PY'
"""A small dependency-injection container."""
import contextlib
import inspect
import typing

LIFETIMES = ("transient", "singleton", "scoped")


class ResolutionError(Exception):
    pass


def _name(k):
    return getattr(k, "__name__", repr(k))


class _Scope:
    def __init__(self, container):
        self.container, self.objects, self.created = container, {}, []

    def resolve(self, key):
        return self.container._resolve(key, self, [])


class Container:
    def __init__(self):
        self._regs = {}  # key -> (provider, lifetime) or ("instance", obj)
        self._singletons = {}

    def register(self, key, provider=None, lifetime="transient"):
        if lifetime not in LIFETIMES:
            raise ValueError("bad lifetime %r" % lifetime)
        self._regs[key] = (provider if provider is not None else key, lifetime)
        self._singletons.pop(key, None)

    def register_instance(self, key, obj):
        self._regs[key] = (obj, "instance")

    def resolve(self, key):
        return self._resolve(key, None, [])

    @contextlib.contextmanager
    def scope(self):
        s = _Scope(self)
        try:
            yield s
        finally:
            for obj in reversed(s.created):
                if callable(getattr(obj, "close", None)):
                    obj.close()

    def _resolve(self, key, scope, chain):
        if key in chain:
            raise ResolutionError("dependency cycle: " + " -> ".join(_name(k) for k in chain + [key]))
        if key not in self._regs:
            raise ResolutionError("%s is not registered" % _name(key))
        provider, lifetime = self._regs[key]
        if lifetime == "instance":
            return provider
        if lifetime == "singleton" and key in self._singletons:
            return self._singletons[key]
        if lifetime == "scoped":
            if scope is None:
                raise ResolutionError("%s is scoped; resolve it inside a scope" % _name(key))
            if key in scope.objects:
                return scope.objects[key]
        obj = self._build(provider, scope, chain + [key])
        if lifetime == "singleton":
            self._singletons[key] = obj
        elif lifetime == "scoped":
            scope.objects[key] = obj
            scope.created.append(obj)
        return obj

    def _build(self, provider, scope, chain):
        target = provider.__init__ if inspect.isclass(provider) else provider
        try:
            hints = typing.get_type_hints(target)
        except Exception as e:
            raise ResolutionError("cannot read annotations of %s: %s" % (_name(provider), e))
        sig = inspect.signature(provider)
        kwargs = {}
        for name, p in sig.parameters.items():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            ann = hints.get(name)
            if ann is not None and ann in self._regs:
                kwargs[name] = self._resolve(ann, scope, chain)
            elif p.default is not p.empty:
                continue
            else:
                raise ResolutionError("cannot satisfy parameter %r of %s" % (name, _name(provider)))
        return provider(**kwargs)
PY
