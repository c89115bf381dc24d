"""A small synchronous event emitter. Implement EventEmitter."""


class EventEmitter:
    pass
