from pathlib import Path

EXPECTED = """# worker configuration for production
[worker]
queue_url = amqp://mq-1.prod.internal:5671/jobs
concurrency = 32
log_level = warning

[storage]
bucket = acme-prod-assets
# retries stay fixed across environments
retries = 3
public_url = https://cdn.acme.example/acme-prod-assets/
"""


def test_rendered_config():
    assert Path("/app/rendered/worker.conf").read_text().rstrip("\n") == EXPECTED.rstrip("\n")
