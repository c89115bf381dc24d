"""Placement over Docker engines (sandboxing/hosts.py): pure functions with hand-computed cases."""

import pytest

from configs import ConfigError, SandboxConfig, TrainConfig, validate
from sandboxing.hosts import (
    EngineState,
    NoEngineError,
    backoff_s,
    episodes_fit,
    has_room,
    load,
    parse_entry,
    place,
)

A, B, C = "unix:///run/a.sock", "unix:///run/b.sock", "tcp://10.1.2.3:2376"


def test_the_least_loaded_engine_takes_the_episode():
    # loads: 3/8 = 0.375, 1/4 = 0.25, 5/16 = 0.3125 -> B
    engines = [EngineState(A, 8, 3), EngineState(B, 4, 1), EngineState(C, 16, 5)]
    assert place(engines, now=100.0) == 1


def test_equal_loads_go_to_fewer_in_flight_then_the_earlier_entry():
    # 2/4 and 4/8 are both 0.5: B has 2 in flight, A 4 -> B; then A and C both 0/8 -> A
    assert place([EngineState(A, 8, 4), EngineState(B, 4, 2)], now=0.0) == 1
    assert place([EngineState(A, 8, 0), EngineState(C, 8, 0)], now=0.0) == 0


def test_a_full_engine_is_skipped():
    # A 8/8 is full although B 7/8 is more loaded than nothing: B
    assert place([EngineState(A, 8, 8), EngineState(B, 8, 7)], now=0.0) == 1


def test_an_engine_backing_off_is_skipped_until_its_back_off_ends():
    engines = [EngineState(A, 8, 0, down_until=50.0, failures=1), EngineState(B, 8, 6)]
    assert place(engines, now=49.9) == 1
    assert (
        place(engines, now=50.0) == 0
    )  # over: tried again (acquire pings it first), and it is empty


def test_none_fits_names_every_engine_and_its_reason():
    engines = [EngineState(A, 2, 2), EngineState(B, 4, 0, down_until=30.0, failures=2)]
    with pytest.raises(NoEngineError) as e:
        place(engines, now=18.0)
    assert str(e.value) == (
        "no Docker engine has room for an episode: unix:///run/a.sock: full 2/2; "
        "unix:///run/b.sock: backing off 12.0 s more"
    )


def test_no_cap_means_no_limit_and_load_is_the_count():
    e = EngineState("local", 0, 1000)
    assert has_room(e, 0.0) is True
    assert load(e) == 1000.0


def test_back_off_doubles_from_two_seconds_up_to_sixty():
    assert [backoff_s(n) for n in (1, 2, 3, 4, 5, 6, 7)] == [2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]


def test_episodes_fit_the_memory_and_the_disk():
    gib = 2**30
    # an episode: 2 x 1024 MiB memory, 2 x 2048 MiB disk (admission.episode_bytes)
    mem, disk = 2 * gib, 4 * gib
    # memory: floor(0.8 * 25_275_990_016 / 2 GiB) = floor(9.416) = 9; disk unknown
    assert episodes_fit(25_275_990_016, mem, None, disk) == 9
    # disk: floor(0.9 * 20 GiB / 4 GiB) = floor(4.5) = 4 < 9
    assert episodes_fit(25_275_990_016, mem, 20 * gib, disk) == 4
    # 2 GiB of memory: floor(0.8 * 2 GiB / 2 GiB) = 0: refused by configure
    assert episodes_fit(2 * gib, mem, None, disk) == 0


def test_entries_parse_to_url_and_cap():
    assert parse_entry("unix:///run/termrl-docker2.sock=8") == (
        "unix:///run/termrl-docker2.sock",
        8,
    )
    assert parse_entry("local") == ("local", 0)
    assert parse_entry("tcp://10.0.0.5:2376=32") == ("tcp://10.0.0.5:2376", 32)
    assert parse_entry("ssh://ci@node3") == ("ssh://ci@node3", 0)


@pytest.mark.parametrize(
    "entry, why",
    [
        ("unix:///run/x.sock=0", "cap = 0: must be >= 1"),
        ("unix:///run/x.sock=many", "the cap after '=' must be an integer >= 1"),
        ("http://node:2375", "must be 'local', unix:///PATH, tcp://HOST:PORT or ssh://[USER@]HOST"),
        ("tcp://node", "must be 'local', unix:///PATH, tcp://HOST:PORT or ssh://[USER@]HOST"),
    ],
)
def test_a_bad_entry_is_named(entry, why):
    with pytest.raises(ValueError) as e:
        parse_entry(entry)
    assert f"sandbox.docker_hosts entry {entry!r}" in str(e.value) and why in str(e.value)


def _validate_hosts(*entries: str) -> None:
    validate(TrainConfig(sandbox=SandboxConfig(docker_hosts=entries)), check_paths=False)


def test_config_validation_names_the_field():
    with pytest.raises(ConfigError, match=r"sandbox.docker_hosts entry 'unix:///a=0': cap = 0"):
        _validate_hosts("unix:///a=0")
    with pytest.raises(ConfigError, match="sandbox.docker_hosts = .*an engine is listed twice"):
        _validate_hosts("unix:///a=2", "unix:///a=4")
    _validate_hosts("local=4", "unix:///run/termrl-docker2.sock=4")
