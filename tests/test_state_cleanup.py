"""Temp files that a run killed mid-rewrite leaves in <home>/state do not pile up."""

from conftest import write_spool


def test_a_distribution_removes_temp_files_left_by_a_killed_rewrite(cli, spool_path, m1nd_home, make_repo):
    repo = make_repo("repo-a")
    write_spool(spool_path, [{"repo": "repo-a", "what": "first"}])
    assert cli("distribute", "--root", str(repo)).code == 0
    stale = [m1nd_home / "state" / ".m1nd-k1ll3d.tmp", m1nd_home / "state" / "boxes" / ".m1nd-t0rn.tmp"]
    for path in stale:
        path.write_bytes(b"half a rewrite")
    keep = m1nd_home / "state" / "boxes" / "not-a-temp-file.tmp"
    keep.write_bytes(b"someone else's")
    assert cli("distribute", "--root", str(repo)).code == 0
    assert not any(path.exists() for path in stale)
    assert keep.exists()
