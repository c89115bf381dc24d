import json
import subprocess
import tempfile


def render(tmpl, data):
    d = tempfile.mkdtemp()
    with open(f"{d}/t.tmpl", "w") as f:
        f.write(tmpl)
    with open(f"{d}/d.json", "w") as f:
        json.dump(data, f)
    return subprocess.run(["/app/render", f"{d}/t.tmpl", f"{d}/d.json"], capture_output=True, text=True, timeout=20)


def ok(tmpl, data):
    r = render(tmpl, data)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_example_page():
    r = subprocess.run(["/app/render", "/app/page.tmpl", "/app/page.json"], capture_output=True, text=True, timeout=20)
    assert r.stdout == ("<h1>Fish &amp; Chips &lt;cheap&gt;</h1>\n<p>admin: O&#39;Neil</p>\n"
                        "<ul><li>0: cod (7) EUR</li><li>1: chips (3) EUR</li></ul>\n<em>bye</em>\n")
    # the example template with other data: the output must follow the data, not a fixed text
    data = {"title": "T", "user": {"name": "x", "admin": False}, "currency": "$", "items": [], "footer": "&"}
    assert ok(open("/app/page.tmpl").read(), data) == "<h1>T</h1>\n<p>guest</p>\n<ul><li>none</li></ul>\n&\n"


def test_hidden_templates():
    data = {"s": "a\"b'c", "n": 0, "t": True, "f": False, "z": None, "e": "", "lst": [], "obj": {},
            "rows": [{"id": 1, "tags": ["x", "y"]}, {"id": 2, "tags": []}], "nested": {"a": {"b": {"c": 42}}},
            "m": {"k": [1, "two", None]}}
    assert ok("[{{s}}|{{{s}}}|{{ n }}|{{t}}|{{f}}|{{z}}|{{missing.deep}}|{{nested.a.b.c}}|{{nested.a.b.c.d}}]", data) == \
        "[a&quot;b&#39;c|a\"b'c|0|true|false|||42|]"
    assert ok("{{{m}}} {{{ nested.a }}}", data) == '{"k":[1,"two",null]} {"b":{"c":42}}'
    falsy = "".join("{{#if %s}}T{{else}}F{{/if}}" % k for k in ["n", "t", "f", "z", "e", "lst", "obj", "missing", "rows", "s"])
    assert ok(falsy, data) == "FTFFFFFFTT"
    tmpl = ("{{#each rows}}<r{{@index}} id={{id}}>{{#each tags}}[{{@index}}:{{this}}/{{../id}}/{{../../s}}]"
            "{{else}}no tags for {{id}}{{/each}}</r>{{/each}}")
    assert ok(tmpl, data) == "<r0 id=1>[0:x/1/a&quot;b&#39;c][1:y/1/a&quot;b&#39;c]</r><r1 id=2>no tags for 2</r>"
    assert ok("{{#each nope}}x{{else}}empty{{/each}}|{{#each s}}x{{/each}}|{{#if t}}{{#if n}}a{{else}}b{{/if}}{{/if}}", data) == "empty||b"
    assert ok("{ {x} } {{ n }}\n  spaced  {{#each lst}}{{/each}}end", {"x": 1, "n": 5}) == "{ {x} } 5\n  spaced  end"
    assert ok("{{#each this}}{{this}},{{/each}}", [3, "<", True]) == "3,&lt;,true,"


def test_template_errors():
    for tmpl in ["{{#if a}}x", "{{#each a}}x{{/if}}", "x{{/each}}", "{{else}}", "{{#if a}}{{else}}{{else}}{{/if}}",
                 "{{#with a}}x{{/with}}", "{{#if a}}{{#each b}}{{/if}}{{/each}}"]:
        r = render(tmpl, {"a": 1, "b": [1]})
        assert r.returncode == 1 and r.stdout == "" and r.stderr.startswith("error:"), tmpl
    assert ok("{{#if a}}y{{/if}}", {"a": 1}) == "y"
