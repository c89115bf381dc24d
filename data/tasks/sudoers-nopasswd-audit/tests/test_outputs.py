def users():
    return [l.strip() for l in open("/app/audit/nopasswd_root.txt").read().splitlines() if l.strip()]


def test_main_file_rules():
    # rules of the main sudoers file: User_Alias (olivia, oscar) and Defaults:ben !authenticate count; the
    # (postgres) run-as (dana), a restricted command (carl), a commented rule (mallory) and password rules don't
    got = set(users())
    assert {"ben", "olivia", "oscar"} <= got
    assert not got & {"root", "alice", "frank", "dana", "carl", "mallory", "deploy"}


def test_nopasswd_users():
    # plus #includedir: %wheel (walt, wendy) and a continued line (erin); "30-old~" and "40-temp.disabled" are ignored
    assert users() == ["ben", "erin", "olivia", "oscar", "walt", "wendy"]
