import subprocess

HIDDEN = """*filter
:INPUT ACCEPT [10:2000]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
:BLOCKLIST - [0:0]
:SERVICES - [0:0]
:ADMIN - [0:0]
# comment line
-A INPUT -i lo -j ACCEPT
-A INPUT -j BLOCKLIST
-A INPUT -p tcp -j SERVICES
-A INPUT -p udp -m udp --dport 53 -j ACCEPT
-A INPUT -p udp -j DROP
-A INPUT -p icmp -s 10.1.0.0/16 -j ACCEPT
-A INPUT -p icmp -j REJECT
-A BLOCKLIST -s 45.0.0.0/8 -j DROP
-A BLOCKLIST -s 45.10.0.0/16 -j LOG --log-prefix "never reached"
-A BLOCKLIST -j RETURN
-A BLOCKLIST -j DROP
-A SERVICES -p tcp -m tcp --dport 22 -j ADMIN
-A SERVICES -p tcp -m multiport --dports 80,443 -j ACCEPT
-A SERVICES -p tcp -m tcp --dport 1000:2000 -j DROP
-A ADMIN -i eth+ -s 10.1.2.0/24 -j ACCEPT
-A ADMIN -i wg0 -j ACCEPT
-A ADMIN -j RETURN
-A SERVICES -p tcp -m tcp --dport 22 -j DROP
COMMIT
"""

NEG = """*filter
:INPUT DROP [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT
-A INPUT ! -s 172.16.0.0/12 -p tcp -m tcp --dport 3306 -j DROP
-A INPUT -p tcp -m tcp --dport 3306 -j ACCEPT
-A INPUT -p tcp -m tcp ! --dport 5000:5999 -m conntrack --ctstate NEW,UNTRACKED -j LOG
-A INPUT -p tcp -m tcp ! --dport 5000:5999 -m conntrack --ctstate NEW -j DROP
-A INPUT -p tcp -j ACCEPT
-A INPUT ! -i eth0 -p udp -j ACCEPT
-A INPUT -p udp -s 8.8.8.8
COMMIT
"""


def ask(rules, *q):
    r = subprocess.run(["python3", "/app/fwcheck.py", rules, *map(str, q)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def write(text, name):
    p = "/tmp/" + name
    open(p, "w").write(text)
    return p


def test_example_rules():
    ex = "/app/rules/example.rules"
    cases = [("lo", "127.0.0.1", "127.0.0.1", "tcp", 5432, "ACCEPT"), ("eth0", "8.8.8.8", "10.0.0.1", "icmp", 0, "ACCEPT"),
             ("eth0", "10.9.8.7", "10.0.0.1", "tcp", 22, "ACCEPT"), ("eth0", "203.0.113.7", "10.0.0.1", "tcp", 22, "ACCEPT"),
             ("eth0", "203.0.113.8", "10.0.0.1", "tcp", 22, "DROP"), ("eth0", "1.2.3.4", "10.0.0.1", "tcp", 443, "ACCEPT"),
             ("eth0", "1.2.3.4", "10.0.0.1", "tcp", 8050, "ACCEPT"), ("eth0", "1.2.3.4", "10.0.0.1", "tcp", 8101, "DROP"),
             ("eth0", "198.51.100.9", "10.0.0.1", "tcp", 80, "DROP"), ("eth0", "192.168.50.3", "10.0.0.1", "udp", 161, "ACCEPT"),
             ("eth0", "192.168.51.3", "10.0.0.1", "udp", 161, "DROP"), ("eth0", "1.2.3.4", "10.0.0.1", "udp", 80, "DROP")]
    for iface, s, d, p, port, want in cases:
        assert ask(ex, iface, s, d, p, port) == want, (iface, s, p, port)


def test_hidden_ruleset_jumps_and_returns():
    h = write(HIDDEN, "hidden.rules")
    cases = [("eth0", "45.10.1.1", "tcp", 80, "DROP"), ("lo", "45.1.1.1", "tcp", 80, "ACCEPT"),
             ("eth0", "8.8.8.8", "tcp", 443, "ACCEPT"), ("eth1", "10.1.2.77", "tcp", 22, "ACCEPT"),
             ("wg0", "99.9.9.9", "tcp", 22, "ACCEPT"), ("ens3", "10.1.2.77", "tcp", 22, "DROP"),
             ("eth0", "10.1.3.1", "tcp", 22, "DROP"), ("eth0", "8.8.8.8", "tcp", 1500, "DROP"),
             ("eth0", "8.8.8.8", "tcp", 2001, "ACCEPT"), ("eth0", "8.8.8.8", "udp", 53, "ACCEPT"),
             ("eth0", "8.8.8.8", "udp", 54, "DROP"), ("eth0", "10.1.9.9", "icmp", 0, "ACCEPT"),
             ("eth0", "10.2.9.9", "icmp", 0, "DROP")]
    for iface, s, p, port, want in cases:
        assert ask(h, iface, s, "10.0.0.1", p, port) == want, (iface, s, p, port)


def test_negation_ranges_and_ctstate():
    n = write(NEG, "neg.rules")
    cases = [("eth0", "172.20.1.1", "tcp", 3306, "ACCEPT"), ("eth0", "172.32.1.1", "tcp", 3306, "DROP"),
             ("eth0", "1.1.1.1", "tcp", 5500, "ACCEPT"), ("eth0", "1.1.1.1", "tcp", 4999, "DROP"),
             ("eth0", "1.1.1.1", "tcp", 6000, "DROP"), ("eth0", "1.1.1.1", "udp", 53, "DROP"),
             ("eth1", "1.1.1.1", "udp", 53, "ACCEPT"), ("eth0", "8.8.8.8", "udp", 53, "DROP")]
    for iface, s, p, port, want in cases:
        assert ask(n, iface, s, "10.0.0.1", p, port) == want, (iface, s, p, port)
