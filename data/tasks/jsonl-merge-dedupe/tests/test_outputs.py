import json
from pathlib import Path

EXPECTED = [
 {
  "id": "u01",
  "name": "hal",
  "plan": "free",
  "updated_at": "2024-05-28T08:01:00Z"
 },
 {
  "id": "u03",
  "name": "bo",
  "plan": "team",
  "updated_at": "2024-05-25T13:10:00Z"
 },
 {
  "id": "u04",
  "name": "bo",
  "plan": "free",
  "updated_at": "2024-05-28T12:30:00Z"
 },
 {
  "id": "u05",
  "name": "ed",
  "plan": "team",
  "updated_at": "2024-05-02T20:51:00Z"
 },
 {
  "id": "u06",
  "name": "bo",
  "plan": "free",
  "updated_at": "2024-05-18T21:05:00Z"
 },
 {
  "id": "u07",
  "name": "lu",
  "plan": "team",
  "updated_at": "2024-05-25T08:23:00Z"
 },
 {
  "id": "u08",
  "name": "gil",
  "plan": "team",
  "updated_at": "2024-05-22T16:49:00Z"
 },
 {
  "id": "u09",
  "name": "di",
  "plan": "free",
  "updated_at": "2024-05-11T06:15:00Z"
 },
 {
  "id": "u10",
  "name": "hal",
  "plan": "pro",
  "updated_at": "2024-05-17T02:01:00Z"
 },
 {
  "id": "u11",
  "name": "jo",
  "plan": "pro",
  "updated_at": "2024-05-28T02:06:00Z"
 },
 {
  "id": "u12",
  "name": "ed",
  "plan": "team",
  "updated_at": "2024-05-25T13:07:00Z"
 },
 {
  "id": "u13",
  "name": "cy",
  "plan": "team",
  "updated_at": "2024-05-17T22:04:00Z"
 },
 {
  "id": "u14",
  "name": "bo",
  "plan": "team",
  "updated_at": "2024-05-28T08:18:00Z"
 },
 {
  "id": "u15",
  "name": "gil",
  "plan": "free",
  "updated_at": "2024-05-16T17:44:00Z"
 },
 {
  "id": "u16",
  "name": "lu",
  "plan": "team",
  "updated_at": "2024-05-02T20:30:00Z"
 },
 {
  "id": "u17",
  "name": "gil",
  "plan": "pro",
  "updated_at": "2024-05-13T16:34:00Z"
 },
 {
  "id": "u18",
  "name": "ana",
  "plan": "free",
  "updated_at": "2024-05-28T02:27:00Z"
 }
]


def records():
    return [json.loads(l) for l in Path("/app/merged.jsonl").read_text().splitlines() if l.strip()]


def test_valid_jsonl():
    assert all(isinstance(r, dict) for r in records())
    assert records()


def test_ids_unique_and_sorted():
    assert [r["id"] for r in records()] == [e["id"] for e in EXPECTED]


def test_latest_records_kept():
    assert records() == EXPECTED
