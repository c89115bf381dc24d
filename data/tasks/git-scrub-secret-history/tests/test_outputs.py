import hashlib
import subprocess
from pathlib import Path

REPO = "/app/webapp"
SECRET = "AKIAZ7QW3RT5YU2IOP9X"
# per ref: [subject, author, raw author date, {path: sha256 of the expected (redacted) content}]
EXPECTED = {
 "main": [
  [
   "Initial import",
   "Dana Dev",
   "1709283600 +0000",
   {
    "README.md": "4c85009e8439e09375375f20d3ba9d55c1a651c6dfb6741d9f566e0f367582d7",
    "app/handler.py": "a4bbe4279e9eeb88c87a4a349c759b45c906d33a71a2304c977952ae0c27949e",
    "config/settings.py": "3b6b3db281c1727fde065dace4ed0b020e0c7c20d1cab11d2b5b86deaa519507"
   }
  ],
  [
   "Configure S3 uploads",
   "Dana Dev",
   "1709370000 +0000",
   {
    "README.md": "4c85009e8439e09375375f20d3ba9d55c1a651c6dfb6741d9f566e0f367582d7",
    "app/handler.py": "a4bbe4279e9eeb88c87a4a349c759b45c906d33a71a2304c977952ae0c27949e",
    "config/settings.py": "32be66dd45d99e13c0ab107f7c13a4b6cec781e96d4f615c4a8edb9d905f5332"
   }
  ],
  [
   "Add upload helper",
   "Dana Dev",
   "1709456400 +0000",
   {
    "README.md": "4c85009e8439e09375375f20d3ba9d55c1a651c6dfb6741d9f566e0f367582d7",
    "app/handler.py": "a4bbe4279e9eeb88c87a4a349c759b45c906d33a71a2304c977952ae0c27949e",
    "app/upload.py": "a569cab2eebcdcc554f37d3a1d23206b7fea8b78b6c5dbd4387aba3bfcd8963b",
    "config/settings.py": "32be66dd45d99e13c0ab107f7c13a4b6cec781e96d4f615c4a8edb9d905f5332"
   }
  ],
  [
   "Read AWS key from the environment",
   "Dana Dev",
   "1709715600 +0000",
   {
    "README.md": "4c85009e8439e09375375f20d3ba9d55c1a651c6dfb6741d9f566e0f367582d7",
    "app/handler.py": "a4bbe4279e9eeb88c87a4a349c759b45c906d33a71a2304c977952ae0c27949e",
    "app/upload.py": "170f2b92d62ad0463ed28eb6eb63f241bab9e9738ac433ba0f0d42f1347104d2",
    "config/settings.py": "8993353eed2a716f87bacd5b963db405cd0d5f7f5dc519c5dbee0b365b173127"
   }
  ],
  [
   "Return items",
   "Dana Dev",
   "1709802000 +0000",
   {
    "README.md": "4c85009e8439e09375375f20d3ba9d55c1a651c6dfb6741d9f566e0f367582d7",
    "app/handler.py": "99ca9fb63a1825b6938cd69fb1c82e435173a0c7f30d5a8c3e405d1591af7b6a",
    "app/upload.py": "170f2b92d62ad0463ed28eb6eb63f241bab9e9738ac433ba0f0d42f1347104d2",
    "config/settings.py": "8993353eed2a716f87bacd5b963db405cd0d5f7f5dc519c5dbee0b365b173127"
   }
  ],
  [
   "Document deploy",
   "Dana Dev",
   "1709888400 +0000",
   {
    "README.md": "3bb08f77b96a21ce1c2e9a397af2d6725ccb9cbefac0b1ab40cf1493b54f42a3",
    "app/handler.py": "99ca9fb63a1825b6938cd69fb1c82e435173a0c7f30d5a8c3e405d1591af7b6a",
    "app/upload.py": "170f2b92d62ad0463ed28eb6eb63f241bab9e9738ac433ba0f0d42f1347104d2",
    "config/settings.py": "8993353eed2a716f87bacd5b963db405cd0d5f7f5dc519c5dbee0b365b173127"
   }
  ]
 ],
 "release/1.x": [
  [
   "Initial import",
   "Dana Dev",
   "1709283600 +0000",
   {
    "README.md": "4c85009e8439e09375375f20d3ba9d55c1a651c6dfb6741d9f566e0f367582d7",
    "app/handler.py": "a4bbe4279e9eeb88c87a4a349c759b45c906d33a71a2304c977952ae0c27949e",
    "config/settings.py": "3b6b3db281c1727fde065dace4ed0b020e0c7c20d1cab11d2b5b86deaa519507"
   }
  ],
  [
   "Configure S3 uploads",
   "Dana Dev",
   "1709370000 +0000",
   {
    "README.md": "4c85009e8439e09375375f20d3ba9d55c1a651c6dfb6741d9f566e0f367582d7",
    "app/handler.py": "a4bbe4279e9eeb88c87a4a349c759b45c906d33a71a2304c977952ae0c27949e",
    "config/settings.py": "32be66dd45d99e13c0ab107f7c13a4b6cec781e96d4f615c4a8edb9d905f5332"
   }
  ],
  [
   "Add upload helper",
   "Dana Dev",
   "1709456400 +0000",
   {
    "README.md": "4c85009e8439e09375375f20d3ba9d55c1a651c6dfb6741d9f566e0f367582d7",
    "app/handler.py": "a4bbe4279e9eeb88c87a4a349c759b45c906d33a71a2304c977952ae0c27949e",
    "app/upload.py": "a569cab2eebcdcc554f37d3a1d23206b7fea8b78b6c5dbd4387aba3bfcd8963b",
    "config/settings.py": "32be66dd45d99e13c0ab107f7c13a4b6cec781e96d4f615c4a8edb9d905f5332"
   }
  ],
  [
   "Start 1.x maintenance",
   "Dana Dev",
   "1709542800 +0000",
   {
    "README.md": "dd6b2ab0933f3b796c43dfd27f4d12d84ae96504a8940f2d2a194c96f7a13102",
    "app/handler.py": "a4bbe4279e9eeb88c87a4a349c759b45c906d33a71a2304c977952ae0c27949e",
    "app/upload.py": "a569cab2eebcdcc554f37d3a1d23206b7fea8b78b6c5dbd4387aba3bfcd8963b",
    "config/settings.py": "32be66dd45d99e13c0ab107f7c13a4b6cec781e96d4f615c4a8edb9d905f5332"
   }
  ],
  [
   "Hotfix handler",
   "Dana Dev",
   "1709629200 +0000",
   {
    "README.md": "dd6b2ab0933f3b796c43dfd27f4d12d84ae96504a8940f2d2a194c96f7a13102",
    "app/handler.py": "01a85682ff319963dfe790575233304836b1bffe882ba9ab9b6e68187a2a2984",
    "app/upload.py": "a569cab2eebcdcc554f37d3a1d23206b7fea8b78b6c5dbd4387aba3bfcd8963b",
    "config/settings.py": "32be66dd45d99e13c0ab107f7c13a4b6cec781e96d4f615c4a8edb9d905f5332"
   }
  ]
 ],
 "v1.0": [
  [
   "Initial import",
   "Dana Dev",
   "1709283600 +0000",
   {
    "README.md": "4c85009e8439e09375375f20d3ba9d55c1a651c6dfb6741d9f566e0f367582d7",
    "app/handler.py": "a4bbe4279e9eeb88c87a4a349c759b45c906d33a71a2304c977952ae0c27949e",
    "config/settings.py": "3b6b3db281c1727fde065dace4ed0b020e0c7c20d1cab11d2b5b86deaa519507"
   }
  ],
  [
   "Configure S3 uploads",
   "Dana Dev",
   "1709370000 +0000",
   {
    "README.md": "4c85009e8439e09375375f20d3ba9d55c1a651c6dfb6741d9f566e0f367582d7",
    "app/handler.py": "a4bbe4279e9eeb88c87a4a349c759b45c906d33a71a2304c977952ae0c27949e",
    "config/settings.py": "32be66dd45d99e13c0ab107f7c13a4b6cec781e96d4f615c4a8edb9d905f5332"
   }
  ],
  [
   "Add upload helper",
   "Dana Dev",
   "1709456400 +0000",
   {
    "README.md": "4c85009e8439e09375375f20d3ba9d55c1a651c6dfb6741d9f566e0f367582d7",
    "app/handler.py": "a4bbe4279e9eeb88c87a4a349c759b45c906d33a71a2304c977952ae0c27949e",
    "app/upload.py": "a569cab2eebcdcc554f37d3a1d23206b7fea8b78b6c5dbd4387aba3bfcd8963b",
    "config/settings.py": "32be66dd45d99e13c0ab107f7c13a4b6cec781e96d4f615c4a8edb9d905f5332"
   }
  ]
 ]
}


def git(*args, check=True):
    r = subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True)
    if check:
        assert r.returncode == 0, r.stderr
    return r.stdout


def history(ref):
    out = []
    for line in git("log", "--reverse", "--format=%H%x09%s%x09%an%x09%ad", "--date=raw", ref).splitlines():
        h, subj, an, ad = line.split("\t")
        out.append((h, subj, an, ad))
    return out


def test_secret_gone_from_object_database():
    check_history_shape_preserved()
    dump = subprocess.run(["git", "-C", REPO, "cat-file", "--batch-all-objects", "--batch"],
                          capture_output=True, timeout=60).stdout
    assert dump, "could not read the object database"
    assert SECRET.encode() not in dump
    for p in Path(REPO).rglob("*"):
        if p.is_file() and ".git" not in p.parts:
            assert SECRET not in p.read_text(errors="ignore"), p
    assert git("for-each-ref", "refs/original").strip() == ""


def check_history_shape_preserved():
    # a guard, not a scored test: every scored test calls it, so an empty or destructive attempt scores 0
    assert sorted(git("for-each-ref", "--format=%(refname)", "refs/heads", "refs/tags").split()) ==         ["refs/heads/main", "refs/heads/release/1.x", "refs/tags/v1.0"]
    for ref, commits in EXPECTED.items():
        assert [c[1:] for c in history(ref)] == [tuple(c[:3]) for c in commits], ref
    assert git("cat-file", "-t", "v1.0").strip() == "tag"
    assert git("tag", "-l", "--format=%(contents:subject)", "v1.0").strip() == "Release 1.0"
    assert git("merge-base", "main", "release/1.x").strip() == git("rev-parse", "v1.0^{commit}").strip()
    assert git("rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert git("status", "--porcelain", "--untracked-files=no").strip() == ""


def test_contents_redacted_in_every_commit():
    check_history_shape_preserved()
    for ref, commits in EXPECTED.items():
        got = history(ref)
        assert len(got) == len(commits), ref
        for (h, subj, _, _), want in zip(got, commits):
            files = {}
            for p in git("ls-tree", "-r", "--name-only", h).splitlines():
                files[p] = hashlib.sha256(git("show", f"{h}:{p}").encode()).hexdigest()
            assert files == want[3], (ref, subj)
