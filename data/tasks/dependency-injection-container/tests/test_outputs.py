import importlib.util
import sys

import pytest


def load():
    spec = importlib.util.spec_from_file_location("container", "/app/container.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["container"] = mod
    spec.loader.exec_module(mod)
    return mod


class Config:
    def __init__(self):
        self.dsn = "sqlite://"


class Database:
    def __init__(self, config: Config):
        self.config = config


class Repo:
    def __init__(self, db: "Database", table: str = "users"):
        self.db, self.table = db, table


class Service:
    def __init__(self, repo: Repo, cfg: Config):
        self.repo, self.cfg = repo, cfg


def test_autowiring_and_lifetimes():
    m = load()
    c = m.Container()
    c.register(Config, lifetime="singleton")
    c.register(Database)
    c.register(Repo)
    c.register(Service)
    s1, s2 = c.resolve(Service), c.resolve(Service)
    assert isinstance(s1.repo.db, Database) and s1.repo.table == "users"
    assert s1 is not s2 and s1.repo.db is not s2.repo.db
    assert s1.cfg is s2.cfg is s1.repo.db.config is c.resolve(Config)
    c.register(Database, lifetime="singleton")
    assert c.resolve(Repo).db is c.resolve(Repo).db
    cfg = Config()
    cfg.dsn = "pg://"
    c.register_instance(Config, cfg)
    assert c.resolve(Service).cfg is cfg
    with pytest.raises(ValueError):
        c.register(Repo, lifetime="forever")


class Clock:
    pass


class Unregistered:
    pass


def make_clock(label: str = "utc") -> Clock:
    c = Clock()
    c.label = label
    return c


class NeedsPlain:
    def __init__(self, x):
        self.x = x


class NeedsMissing:
    def __init__(self, u: Unregistered):
        self.u = u


class DefaultsMissing:
    def __init__(self, u: Unregistered = None, clock: Clock = None):
        self.u, self.clock = u, clock


def test_defaults_factories_and_errors():
    m = load()
    c = m.Container()
    c.register(Clock, make_clock)
    assert c.resolve(Clock).label == "utc"

    def build_repo(db: Database, clock: Clock) -> Repo:
        r = Repo(db, table="events")
        r.clock = clock
        return r
    c.register(Config)
    c.register(Database)
    c.register(Repo, build_repo, lifetime="singleton")
    r = c.resolve(Repo)
    assert r.table == "events" and r.clock.label == "utc" and c.resolve(Repo) is r
    c.register(DefaultsMissing)
    d = c.resolve(DefaultsMissing)
    assert d.u is None and isinstance(d.clock, Clock)
    for bad in [NeedsPlain, NeedsMissing]:
        c.register(bad)
        with pytest.raises(m.ResolutionError):
            c.resolve(bad)
    with pytest.raises(m.ResolutionError):
        c.resolve(Unregistered)


class A:
    def __init__(self, b: "B"):
        self.b = b


class B:
    def __init__(self, c: "C"):
        self.c = c


class C:
    def __init__(self, a: A):
        self.a = a


def test_cycle_message():
    m = load()
    c = m.Container()
    for k in (A, B, C):
        c.register(k)
    with pytest.raises(m.ResolutionError) as ei:
        c.resolve(B)
    assert "B -> C -> A -> B" in str(ei.value)
    c.register(C, lambda: "leaf")
    assert c.resolve(A).b.c == "leaf"


class Session:
    log = []

    def __init__(self, db: Database):
        self.db = db
        self.closed = False

    def close(self):
        self.closed = True
        Session.log.append(("session", id(self)))


class UnitOfWork:
    def __init__(self, session: Session, clock: Clock):
        self.session, self.clock = session, clock

    def close(self):
        Session.log.append(("uow", id(self)))


def test_scopes():
    m = load()
    c = m.Container()
    c.register(Config, lifetime="singleton")
    c.register(Database, lifetime="singleton")
    c.register(Session, lifetime="scoped")
    c.register(UnitOfWork, lifetime="scoped")
    c.register(Clock)
    with pytest.raises(m.ResolutionError):
        c.resolve(Session)
    Session.log.clear()
    with c.scope() as s1:
        u1 = s1.resolve(UnitOfWork)
        assert s1.resolve(Session) is u1.session and s1.resolve(UnitOfWork) is u1
        assert s1.resolve(Clock) is not s1.resolve(Clock)
        with c.scope() as s2:
            u2 = s2.resolve(UnitOfWork)
            assert u2 is not u1 and u2.session is not u1.session
            assert u2.session.db is u1.session.db is c.resolve(Database)
        assert u2.session.closed and not u1.session.closed
    assert u1.session.closed
    assert Session.log == [("uow", id(u2)), ("session", id(u2.session)), ("uow", id(u1)), ("session", id(u1.session))]
