import html
import importlib.util
import random

import pytest


def load():
    spec = importlib.util.spec_from_file_location("minitpl", "/app/minitpl.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def test_variables_filters_escaping():
    m = load()
    r = m.render
    assert r("Hi {{ name }}!", {"name": "Ada"}) == "Hi Ada!"
    assert r("{{user.name|upper}} {{ user.tags.1 }}", {"user": {"name": "bo", "tags": ["x", "y"]}}) == "BO y"
    assert r("{{ o.title|title }}", {"o": Obj(title="hello world")}) == "Hello World"
    assert r("[{{ missing }}][{{ none }}][{{ missing.deep }}]", {"none": None}) == "[][][]"
    assert r('{{ missing|default:"n/a"|upper }}', {}) == "N/A"
    assert r('{{ e|default:"x" }}{{ z|default:"x" }}', {"e": "", "z": 0}) == "x0"
    assert r('{{ xs|join:", " }} ({{ xs|length }})', {"xs": [1, "two", 3]}) == "1, two, 3 (3)"
    rng = random.Random(8)
    for _ in range(50):
        s = "".join(rng.choice("ab<>&\"' ") for _ in range(rng.randint(0, 12)))
        assert r("<p>{{ s }}</p>", {"s": s}) == "<p>" + html.escape(s, quote=True) + "</p>"
        assert r("{{ s|safe }}", {"s": s}) == s
    assert r("{{ s|lower }}", {"s": "<B>"}) == "&lt;b&gt;"
    assert r("{# hidden {{ x }} #}plain { text } %}", {"x": 1}) == "plain { text } %}"


def test_if_else():
    r = load().render
    t = "{% if user %}Hello {{ user.name }}{% else %}Anonymous{% endif %}"
    assert r(t, {"user": {"name": "Kim"}}) == "Hello Kim"
    assert r(t, {}) == "Anonymous" and r(t, {"user": None}) == "Anonymous"
    assert r("{% if not items %}empty{% endif %}", {"items": []}) == "empty"
    assert r("{% if not items %}empty{% endif %}", {"items": [0]}) == ""
    assert r("{% if a %}{% if b %}AB{% else %}A{% endif %}{% else %}-{% endif %}", {"a": 1, "b": 0}) == "A"
    assert r("{% if s|length %}has{% endif %}", {"s": "x"}) == "has"


def test_for_loops_nested():
    r = load().render
    t = "{% for x in xs %}{{ loop.index }}:{{ x }}{% if not loop.last %},{% endif %}{% endfor %}"
    rng = random.Random(9)
    for _ in range(20):
        xs = [rng.randint(0, 99) for _ in range(rng.randint(0, 6))]
        assert r(t, {"xs": xs}) == ",".join("%d:%d" % (i + 1, x) for i, x in enumerate(xs))
    t2 = ("{% for row in rows %}[{% for c in row.cells %}{% if loop.first %}^{% endif %}{{ c|upper }}"
          "{% endfor %}/{{ loop.index }}]{% endfor %}")
    assert r(t2, {"rows": [{"cells": ["a", "b"]}, {"cells": []}, {"cells": ["<"]}]}) == "[^AB/1][/2][^&lt;/3]"
    assert r("{{ x }}{% for x in xs %}{{ x }}{% endfor %}{{ x }}", {"x": "o", "xs": "ab"}) == "oabo"
    assert r("{% for k in d %}{{ k }}={{ d.k }};{% endfor %}", {"d": {"p": 1}}) == "p=;"
    assert r("a{% for x in nothing %}X{% endfor %}b", {}) == "ab"
    assert r("{% for t in ts %}{{ t.0 }}{{ t.1 }}{% endfor %}", {"ts": [(1, 2), (3, 4)]}) == "1234"


def test_syntax_errors():
    m = load()
    bad = ["{{ x ", "{% if x %}never closed", "{% endif %}", "{% for x in xs %}{% endif %}", "{{ x|explode }}",
           "{% unknown %}", "{% else %}", "{# open", "{% if x %}{% else %}{% endfor %}", "text {% for x in y %}"]
    for t in bad:
        with pytest.raises(m.TemplateSyntaxError):
            m.render(t, {"x": 1, "xs": [1], "y": [2]})
    assert issubclass(m.TemplateSyntaxError, Exception)
