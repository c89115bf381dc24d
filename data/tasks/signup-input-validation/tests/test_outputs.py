import importlib.util


def v():
    spec = importlib.util.spec_from_file_location("validate", "/app/validate.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m.validate_signup


GOOD = {"username": "alice_01", "email": "alice.smith+tag@mail.example.com", "password": "Sunny-Day-2024", "age": 30}


def err(**kw):
    form = dict(GOOD)
    for k, val in kw.items():
        if val is KeyError:
            form.pop(k)
        else:
            form[k] = val
    return v()(form)


def test_valid_forms():
    assert v()(GOOD) == {}
    assert err(username="Bob", age=13, email="b@x.io", password="aaaaaaaaaaA1") == {}
    assert err(username="z" * 20, age=120, email="o'neil@example.org".replace("'", ""), password="Xy1" + "q" * 125) == {}


def test_username_and_age():
    for u in ["al", "a" * 21, "1alice", "_alice", "alice!", "alice smith", "ålice", " alice", "alice\n", None, 123, ["alice"], KeyError]:
        assert err(username=u).get("username") == "invalid_username", repr(u)
    for a in [12, 121, -1, "30", 30.0, True, None, [30], KeyError]:
        assert err(age=a) == {"age": "invalid_age"}, repr(a)
    assert err(username="abc") == {}


def test_email():
    for e in ["plain", "a@b", "a@@b.com", "a@b@c.com", "@example.com", ".a@example.com", "a.@example.com",
              "a b@example.com", "a@-example.com", "a@example-.com", "a@example.c", "a@example.c0m", "a@example..com",
              "a@.example.com", "a@example.com.", "a@" + "x" * 64 + ".com", "x" * 250 + "@ab.cd", " a@example.com",
              "a@example.com ", None, 5, KeyError]:
        assert err(email=e) == {"email": "invalid_email"}, repr(e)
    for e in ["a@b.co", "first.last@sub.domain.example", "x_y%z+w-v@my-host.io", "A1@" + "x" * 63 + ".com"]:
        assert err(email=e) == {}, e


def test_password_and_garbage():
    for p in ["Short1a", "alllowercase123", "ALLUPPERCASE123", "NoDigitsHereAtAll", "Xy1" + "q" * 126,
              "my-ALICE_01-Pass9", None, 123456789012, KeyError]:
        assert err(password=p) == {"password": "weak_password"}, repr(p)
    assert err(password="Alice_0x-Pass9") == {}
    bad = v()({})
    assert bad == {"username": "invalid_username", "email": "invalid_email", "password": "weak_password", "age": "invalid_age"}
    assert set(v()({"username": None, "email": [], "password": {}, "age": {}})) == {"username", "email", "password", "age"}
