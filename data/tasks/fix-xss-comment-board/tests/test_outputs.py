import importlib.util
from html.parser import HTMLParser


def board():
    spec = importlib.util.spec_from_file_location("board", "/app/board.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


class Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def parse(s):
    p = Collect()
    p.feed(s)
    return p.tags


def one(**c):
    return board().render_comments([c])


def test_normal_comments_unchanged():
    m = board()
    out = m.render_comments([
        {"author": "Ann", "text": "Nice post\nThanks", "color": "#1a2b3c", "website": "https://ann.example.com/blog?x=1"},
        {"author": "Bob", "text": "Agreed"},
    ])
    assert out == ('<div class="comment" style="border-color: #1a2b3c"><a class="author" href="https://ann.example.com/blog?x=1" '
                   'rel="nofollow">Ann</a><p>Nice post<br>Thanks</p></div>\n'
                   '<div class="comment" style="border-color: #333333"><span class="author">Bob</span><p>Agreed</p></div>')
    assert one(author="Tom & Jerry", text="a<b") == ('<div class="comment" style="border-color: #333333"><span class="author">'
                                                     'Tom &amp; Jerry</span><p>a&lt;b</p></div>')


def test_text_and_author_escaped():
    out = one(author="<img src=x onerror=alert(1)>", text="<script>alert('x')</script>\n\"quoted\" & more")
    assert [t for t, _ in parse(out)] == ["div", "span", "p", "br"]
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;<br>&quot;quoted&quot; &amp; more" in out
    assert "&lt;img src=x onerror=alert(1)&gt;" in out
    out2 = one(author='x" onmouseover="alert(1)', website="https://ok.example", text="hi")
    tags = parse(out2)
    assert tags[1] == ("a", {"class": "author", "href": "https://ok.example", "rel": "nofollow"})


def test_links_and_colors_sanitised():
    assert parse(one(author="a", website="HTTPS://Example.com/p"))[1][1]["href"] == "HTTPS://Example.com/p"
    assert parse(one(author="a", website="http://x.io/?a=1&b=2"))[1][1]["href"] == "http://x.io/?a=1&b=2"
    assert 'href="http://x.io/?a=1&amp;b=2"' in one(author="a", website="http://x.io/?a=1&b=2")
    for bad in ["javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)", "data:text/html,<script>",
                'https://x.io" onclick="alert(1)', "https://x.io/ onclick=alert(1)", "//evil.example", "ftp://x.io",
                "https://x.io/<script>", "http://x.io/'a"]:
        out = one(author="a", website=bad, text="t")
        assert out == '<div class="comment" style="border-color: #333333"><span class="author">a</span><p>t</p></div>', bad
    for bad in ["red", "#12345", "#1234567", "#12345g", "#123456; background:url(javascript:alert(1))",
                '#123456" onmouseover="alert(1)', "expression(alert(1))"]:
        out = one(author="a", color=bad, text="t")
        assert out == '<div class="comment" style="border-color: #333333"><span class="author">a</span><p>t</p></div>', bad
    assert 'border-color: #ABCdef"' in one(author="a", color="#ABCdef")
