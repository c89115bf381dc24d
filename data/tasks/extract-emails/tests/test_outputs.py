def test_emails():
    want = sorted({
        "alice.smith@example.com", "bob@mail.example.org", "BOB+lists@Example.NET", "neil@corp.io",
        "carol.oneil@corp.io", "support-team@help-desk.example.co.uk", "sales@example.com",
        "billing@example.com", "eve.92@sub.domain.example.info", "frank%ops@example.com",
    })
    got = open("/app/emails.txt").read().split("\n")
    if got and got[-1] == "":
        got.pop()
    assert got == want
