from pathlib import Path

EXPECTED = ['name,email,phone,team', 'alice,alice@example.com,+44 20 7946 0100,dev', 'carol,carol@example.com,+44 20 7946 0102,dev', 'bob,bob@example.com,+44 20 7946 0101,ops', 'frank,frank@example.com,+44 20 7946 0105,dev', 'hugo,hugo@example.com,+44 20 7946 0107,dev', 'dan,dan@example.com,+44 20 7946 0103,ops', 'gina,gina@example.com,+44 20 7946 0106,dev', 'Alice,alice@example.com,+44 20 7946 0100,dev', 'iris,iris@example.com,+44 20 7946 0108,sales', 'jack,jack@example.com,+44 20 7946 0109,ops', 'bob,bob@example.com,+44 20 7946 0101,ops ', 'liam,liam@example.com,+44 20 7946 0111,dev', 'erin,erin@example.com,+44 20 7946 0104,dev']


def test_unique_lines_in_order():
    lines = Path("/app/contacts_unique.csv").read_text().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    assert lines == EXPECTED
