"""The ownership law (contract section 3): normalize, projectless, resolve, roots."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import write_spool
from m1nd.routing import MEDULLA, PENDING, PROJECT, build_roots, normalize


@pytest.fixture
def home(m1nd_home) -> str:
    return str(m1nd_home)


def law(home: str, bound=None, roster=(), extra=()):
    return build_roots(str(bound) if bound else None, [str(p) for p in roster], [str(p) for p in extra], home)


def mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def route_of(rs, repo="", brain=""):
    r = rs.resolve(brain, repo)
    if r.kind == PROJECT:
        return (PROJECT, r.root.path)
    if r.kind == PENDING:
        return (PENDING, r.name)
    return (MEDULLA,)


# --- normalize ---------------------------------------------------------------------

NORMALIZE = [
    ("repo-a", "repo-a"),
    ("repo-a (the api server)", "repo-a"),
    ("repo-a(x) (y)", "repo-a"),
    ("  repo-a \t", "repo-a"),
    ("\trepo-a (note)  ", "repo-a"),
    ("/src/repo-a", "repo-a"),
    ("/src/repo-a/", "repo-a"),
    ("/src/repo-a///", "repo-a"),
    ("src/repo-a", "repo-a"),
    ("Repo-A", "Repo-A"),
    (".", "."),
    ("..", ".."),
    ("./", "."),
    ("../", ".."),
    ("/src/..", "/src/.."),
    ("src/.", "src/."),
    ("", ""),
    ("   ", ""),
    ("(only a note)", ""),
    ("~repo-a", "~repo-a"),
    ("a(b/c)", "a"),
]


@pytest.mark.parametrize("field,name", NORMALIZE)
def test_normalize_cuts_the_annotation_trims_and_takes_the_last_component(field, name):
    assert normalize(field) == name


def test_normalize_of_a_lone_slash_is_the_empty_string_after_trailing_slashes_go():
    # Step 2 removes trailing "/": "/" becomes "", whose last component is "" → keep "".
    assert normalize("/") == ""
    assert normalize("///") == ""


def test_normalize_expands_a_leading_tilde_slash_with_the_home_env(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "someone" / "home-b"))
    assert normalize("~/code/repo-b/") == "repo-b"
    assert normalize("~") == "home-b"
    assert normalize("~/") == "home-b"
    assert normalize(" ~ (my home)") == "home-b"


def test_a_tilde_not_followed_by_a_slash_is_not_expanded(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "home-b"))
    assert normalize("~other/repo-c") == "repo-c"
    assert normalize("~other") == "~other"


WORKTREES = [
    ("repo-a", "repo-a"),
    ("repo-a-feature", "repo-a"),
    ("/src/wt/repo-a-hotfix-2/", "repo-a"),
    ("repo-a-", "repo-a"),
    ("repo-a (main checkout)", "repo-a"),
    ("repo-ab", "repo-ab"),
    ("repo-a_x", "repo-a_x"),
    ("Repo-A-feature", "Repo-A-feature"),
    ("xrepo-a", "xrepo-a"),
]


@pytest.mark.parametrize("field,name", WORKTREES)
def test_worktree_names_collapse_onto_the_base_exactly_and_case_sensitively(field, name):
    assert normalize(field, "repo-a") == name


def test_without_a_base_worktree_names_do_not_collapse():
    assert normalize("repo-a-feature", "") == "repo-a-feature"


# --- projectless -------------------------------------------------------------------


@pytest.mark.parametrize("field", [
    "all", "ALL", "All (every repo)", "  all  ", "", "   ", "(nothing)",
    "research task", "Research Task 7", "RESEARCH TASK: caching", "research tasks",
])
def test_projectless_fields_go_to_the_medulla_box(home, field):
    rs = law(home)
    assert route_of(rs, repo=field) == (MEDULLA,)


@pytest.mark.parametrize("field", ["research", "a research task", "allx", "al l", "research-task"])
def test_fields_that_only_resemble_projectless_ones_are_not_projectless(home, field):
    rs = law(home)
    assert rs.resolve("", field).kind == PENDING


def test_the_home_path_and_anything_inside_it_is_projectless(home):
    rs = law(home)
    for field in (home, home + "/", home + "/notes", home + "/a/b/c (scratch)", " " + home + "/x "):
        assert route_of(rs, repo=field) == (MEDULLA,), field


def test_a_sibling_of_the_home_sharing_its_prefix_is_not_projectless(home):
    rs = law(home)
    assert route_of(rs, repo=home + "-other/repo-z") == (PENDING, "repo-z")


def test_a_tilde_path_into_the_default_home_is_projectless(monkeypatch, tmp_path):
    user_home = tmp_path / "user-home"
    monkeypatch.setenv("HOME", str(user_home))
    rs = law(str(user_home / ".m1nd"))
    assert route_of(rs, repo="~/.m1nd") == (MEDULLA,)
    assert route_of(rs, repo="~/.m1nd/scratch/") == (MEDULLA,)
    assert route_of(rs, repo="~/.m1nd-old") == (PENDING, ".m1nd-old")


def test_a_root_inside_the_home_does_not_win_over_projectless(home, tmp_path):
    inner = mkdir(Path(home) / "repo-h")
    rs = law(home, roster=[inner])
    assert route_of(rs, repo=str(inner / "src")) == (MEDULLA,)


# --- brain -------------------------------------------------------------------------


def test_a_non_blank_brain_wins_over_repo(home, tmp_path):
    a, b = mkdir(tmp_path / "src" / "repo-a"), mkdir(tmp_path / "src" / "repo-b")
    rs = law(home, roster=[a, b])
    assert route_of(rs, repo="repo-a", brain="repo-b") == (PROJECT, str(b))
    assert route_of(rs, repo="repo-a", brain=str(b / "lib")) == (PROJECT, str(b))


def test_a_blank_brain_falls_back_to_repo(home, tmp_path):
    a = mkdir(tmp_path / "src" / "repo-a")
    rs = law(home, roster=[a])
    assert route_of(rs, repo="repo-a", brain="") == (PROJECT, str(a))
    assert route_of(rs, repo="repo-a", brain=" \t ") == (PROJECT, str(a))


@pytest.mark.parametrize("brain", ["medulla", "MEDULLA", "Medulla", "mEdUlLa"])
def test_brain_medulla_in_any_case_goes_to_the_medulla_box_whatever_repo_says(home, tmp_path, brain):
    a = mkdir(tmp_path / "src" / "repo-a")
    rs = law(home, roster=[a])
    assert route_of(rs, repo="repo-a", brain=brain) == (MEDULLA,)
    assert route_of(rs, repo=str(a), brain=brain) == (MEDULLA,)


def test_repo_medulla_is_not_the_medulla_box_it_is_a_pending_name(home):
    rs = law(home)
    assert route_of(rs, repo="medulla") == (PENDING, "medulla")


def test_brain_project_name_resolves_as_if_the_field_were_the_name(home, tmp_path):
    a, b = mkdir(tmp_path / "src" / "repo-a"), mkdir(tmp_path / "src" / "repo-b")
    rs = law(home, roster=[a, b])
    assert route_of(rs, repo="repo-a", brain="project:repo-b") == (PROJECT, str(b))
    assert route_of(rs, repo="repo-a", brain="project:REPO-B") == (PROJECT, str(b))
    assert route_of(rs, repo="repo-a", brain="project:" + str(b / "src" / "x.py")) == (PROJECT, str(b))
    assert route_of(rs, repo="repo-a", brain="project:all") == (MEDULLA,)
    assert route_of(rs, repo="repo-a", brain="project:repo-z (later)") == (PENDING, "repo-z")


# --- absolute paths ----------------------------------------------------------------


def test_an_absolute_path_inside_a_root_goes_to_that_root(home, tmp_path):
    a = mkdir(tmp_path / "src" / "repo-a")
    mkdir(a / "lib")
    rs = law(home, roster=[a])
    assert route_of(rs, repo=str(a)) == (PROJECT, str(a))
    assert route_of(rs, repo=str(a) + "/") == (PROJECT, str(a))
    assert route_of(rs, repo=str(a / "lib") + " (the library)") == (PROJECT, str(a))


def test_an_absolute_path_that_does_not_exist_yet_still_lies_inside_its_root(home, tmp_path):
    a = mkdir(tmp_path / "src" / "repo-a")
    rs = law(home, roster=[a])
    target = a / "src" / "new" / "module.py"
    assert not target.exists()
    assert route_of(rs, repo=str(target)) == (PROJECT, str(a))


def test_an_absolute_path_goes_to_the_deepest_of_nested_roots(home, tmp_path):
    outer = mkdir(tmp_path / "src" / "outer")
    inner = mkdir(outer / "vendor" / "inner")
    for roster in ([outer, inner], [inner, outer]):
        rs = law(home, roster=roster)
        assert route_of(rs, repo=str(inner / "x.c")) == (PROJECT, str(inner))
        assert route_of(rs, repo=str(inner)) == (PROJECT, str(inner))
        assert route_of(rs, repo=str(outer / "vendor")) == (PROJECT, str(outer))
        assert route_of(rs, repo=str(outer / "vendor" / "inner-2")) == (PROJECT, str(outer))


def test_absolute_path_matching_beats_the_name_of_the_last_component(home, tmp_path):
    a, b = mkdir(tmp_path / "src" / "repo-a"), mkdir(tmp_path / "src" / "repo-b")
    rs = law(home, roster=[a, b])
    assert route_of(rs, repo=str(a / "repo-b")) == (PROJECT, str(a))


def test_symlinks_in_the_existing_part_of_a_path_are_resolved(home, tmp_path):
    a = mkdir(tmp_path / "src" / "repo-a")
    mkdir(tmp_path / "links")
    link = tmp_path / "links" / "shortcut"
    link.symlink_to(a)
    rs = law(home, roster=[a])
    assert route_of(rs, repo=str(link / "not" / "there")) == (PROJECT, str(a))


def test_a_root_given_through_a_symlink_owns_paths_under_its_real_location(home, tmp_path):
    a = mkdir(tmp_path / "src" / "repo-a")
    link = tmp_path / "repo-a-link"
    link.symlink_to(a)
    rs = law(home, roster=[link])
    assert route_of(rs, repo=str(a / "lib")) == (PROJECT, str(link))


def test_a_symlink_inside_a_root_that_leads_outside_does_not_make_the_path_the_roots(home, tmp_path):
    a = mkdir(tmp_path / "src" / "repo-a")
    outside = mkdir(tmp_path / "outside" / "elsewhere")
    (a / "escape").symlink_to(outside)
    rs = law(home, roster=[a])
    assert route_of(rs, repo=str(a / "escape" / "new")) == (PENDING, "new")


def test_an_absolute_path_outside_every_root_goes_on_to_name_matching(home, tmp_path):
    a = mkdir(tmp_path / "src" / "repo-a")
    rs = law(home, roster=[a])
    assert route_of(rs, repo="/nowhere/else/repo-a") == (PROJECT, str(a))
    assert route_of(rs, repo=str(tmp_path / "other" / "repo-a") + "/") == (PROJECT, str(a))
    assert route_of(rs, repo="/nowhere/else/repo-z") == (PENDING, "repo-z")


def test_a_prefix_sibling_of_a_root_is_not_inside_it(home, tmp_path):
    a = mkdir(tmp_path / "src" / "repo-a")
    mkdir(tmp_path / "src" / "repo-a2")
    rs = law(home, roster=[a])
    assert route_of(rs, repo=str(tmp_path / "src" / "repo-a2" / "x")) == (PENDING, "x")


# --- known names, ambiguity, reachability --------------------------------------------


def test_known_names_are_matched_case_insensitively(home, tmp_path):
    a = mkdir(tmp_path / "src" / "Repo-A")
    rs = law(home, roster=[a])
    assert set(rs.known) == {"repo-a"}
    for field in ("repo-a", "REPO-A", "Repo-A (api)", "/elsewhere/rEpO-a/"):
        assert route_of(rs, repo=field) == (PROJECT, str(a)), field


def test_pending_keeps_the_normalized_name_with_its_case(home):
    rs = law(home)
    assert route_of(rs, repo="/far/away/Repo-Z/ (later)") == (PENDING, "Repo-Z")


def test_a_key_shared_by_two_reachable_roots_is_ambiguous_and_its_letters_wait(home, tmp_path):
    one = mkdir(tmp_path / "one" / "repo-a")
    two = mkdir(tmp_path / "two" / "REPO-A")
    rs = law(home, roster=[one, two])
    assert "repo-a" not in rs.known
    assert set(rs.ambiguous) == {"repo-a"}
    assert route_of(rs, repo="repo-a") == (PENDING, "repo-a")
    assert route_of(rs, repo="REPO-A") == (PENDING, "REPO-A")


def test_an_absolute_path_still_reaches_one_of_two_ambiguous_roots(home, tmp_path):
    one = mkdir(tmp_path / "one" / "repo-a")
    two = mkdir(tmp_path / "two" / "repo-a")
    rs = law(home, roster=[one, two])
    assert route_of(rs, repo=str(two / "src")) == (PROJECT, str(two))


def test_unreachable_roots_are_not_known_and_never_cause_ambiguity(home, tmp_path):
    a = mkdir(tmp_path / "src" / "repo-a")
    gone_a = tmp_path / "gone" / "repo-a"
    gone_c = tmp_path / "gone" / "repo-c"
    rs = law(home, roster=[a, gone_a, gone_c])
    assert set(rs.known) == {"repo-a"}
    assert rs.ambiguous == {}
    assert sorted(r.label for r in rs.unreachable) == ["repo-a", "repo-c"]
    assert route_of(rs, repo="repo-a") == (PROJECT, str(a))
    assert route_of(rs, repo="repo-c") == (PENDING, "repo-c")
    assert route_of(rs, repo=str(gone_c / "x")) == (PENDING, "x")


def test_a_root_that_is_a_regular_file_is_not_reachable(home, tmp_path):
    mkdir(tmp_path / "src")
    f = tmp_path / "src" / "repo-f"
    f.write_text("not a directory")
    rs = law(home, roster=[f])
    assert [r.reachable for r in rs.roots] == [False]
    assert route_of(rs, repo="repo-f") == (PENDING, "repo-f")


def test_the_root_label_is_the_normalized_root_path(home, tmp_path):
    a = mkdir(tmp_path / "src" / "Repo-A")
    rs = law(home, roster=[str(a) + "/"])
    (root,) = rs.roots
    assert root.path == str(a)
    assert root.label == "Repo-A"
    assert root.box == str(a / ".m1nd" / "inbox.jsonl")


def test_a_worktree_letter_goes_to_the_bound_root(home, make_repo):
    a = make_repo("repo-a")
    rs = law(home, bound=a)
    assert rs.base == "repo-a"
    assert route_of(rs, repo="repo-a-feature") == (PROJECT, str(a))
    assert route_of(rs, repo="/elsewhere/worktrees/repo-a-fix-12/") == (PROJECT, str(a))


def test_a_root_label_is_never_folded_onto_the_bound_label(home, make_repo, tmp_path):
    a = make_repo("repo-a")
    wt = mkdir(tmp_path / "wt" / "repo-a-feature")
    rs = law(home, bound=a, roster=[wt])
    assert [r.label for r in rs.roots] == ["repo-a", "repo-a-feature"]
    assert rs.ambiguous == {}
    assert route_of(rs, repo="repo-a") == (PROJECT, str(a))
    assert route_of(rs, repo="repo-a-feature") == (PROJECT, str(wt))
    assert route_of(rs, repo="Repo-A-Feature (review)") == (PROJECT, str(wt))
    assert route_of(rs, repo="repo-a-other") == (PROJECT, str(a)), "a name no root carries still folds"
    assert route_of(rs, repo=str(wt / "x")) == (PROJECT, str(wt))


def test_web_admin_inside_web_keeps_its_own_label(home, make_repo):
    web = make_repo("web")
    admin = make_repo("web-admin")
    rs = law(home, bound=web, roster=[admin])
    assert [r.label for r in rs.roots] == ["web", "web-admin"]
    assert route_of(rs, repo="web-admin") == (PROJECT, str(admin))
    assert route_of(rs, repo="web") == (PROJECT, str(web))


def test_pending_letters_never_go_to_the_medulla_box(cli, spool_path, m1nd_home):
    write_spool(spool_path, [{"repo": "repo-z", "what": "waits"}, {"repo": "medulla", "what": "waits too"}])
    doc = cli("--inbox-sweep").json
    assert doc["distribution"]["pending"] == ["medulla", "repo-z"]
    assert doc["distribution"]["to_medulla"] == 0
    assert not (m1nd_home / "inbox.jsonl").exists()
    assert doc["total"] == 2


def test_a_pending_letter_is_filed_on_a_later_run_once_its_root_is_known(cli, spool_path, make_repo):
    write_spool(spool_path, [{"repo": "repo-b", "what": "waits"}])
    assert cli("distribute", "--json").json["pending"] == ["repo-b"]
    b = make_repo("repo-b")
    receipt = cli("distribute", "--json", "--root", str(b)).json
    assert receipt["pending"] == [] and receipt["appended"] == 1
    assert (b / ".m1nd" / "inbox.jsonl").read_bytes() == b'{"repo":"repo-b","what":"waits"}\n'


# --- roots -------------------------------------------------------------------------


def test_roots_come_in_law_order_bound_then_roster_then_extra(home, make_repo, tmp_path):
    bound = make_repo("repo-a")
    r1, r2 = mkdir(tmp_path / "r" / "repo-b"), mkdir(tmp_path / "r" / "repo-c")
    rs = law(home, bound=bound, roster=[r1], extra=[r2])
    assert [r.path for r in rs.roots] == [str(bound), str(r1), str(r2)]


def test_roots_are_deduplicated_by_real_path_keeping_the_first_occurrence(home, make_repo, tmp_path):
    a = make_repo("repo-a")
    link = tmp_path / "alias"
    link.symlink_to(a)
    rs = law(home, bound=a, roster=[link], extra=[str(a) + "/", a / "." ])
    assert [r.path for r in rs.roots] == [str(a)]
    rs = law(home, roster=[link], extra=[a])
    assert [r.path for r in rs.roots] == [str(link)]
    assert rs.roots[0].label == "alias"


def test_roots_are_made_absolute_with_tilde_expanded_and_trailing_slashes_removed(home, tmp_path, monkeypatch):
    user_home = tmp_path / "user-home"
    mkdir(user_home / "code" / "repo-b")
    mkdir(tmp_path / "work" / "repo-c")
    monkeypatch.chdir(tmp_path / "work")
    rs = law(home, roster=["~/code/repo-b/", "repo-c//"])
    assert [r.path for r in rs.roots] == [str(user_home / "code" / "repo-b"), str(tmp_path / "work" / "repo-c")]
    assert all(r.reachable for r in rs.roots)


def test_a_bound_root_is_found_from_a_subdirectory_and_routes_its_path(cli, spool_path, make_repo):
    a = make_repo("repo-a")
    sub = mkdir(a / "deep" / "er")
    write_spool(spool_path, [{"repo": str(a / "deep" / "file.py"), "what": "x"}])
    receipt = cli("distribute", "--json", cwd=sub).json
    assert receipt["to_project"] == 1
    assert (a / ".m1nd" / "inbox.jsonl").exists()


def test_routing_decisions_in_one_run_follow_each_letter(cli, spool_path, m1nd_home, make_repo):
    a, b = make_repo("repo-a"), make_repo("repo-b")
    letters = [
        {"repo": "repo-a", "what": "1"},
        {"repo": str(b / "x"), "what": "2"},
        {"repo": "all", "what": "3"},
        {"brain": "medulla", "repo": "repo-a", "what": "4"},
        {"repo": "repo-q", "what": "5"},
    ]
    write_spool(spool_path, letters)
    receipt = cli("distribute", "--json", "--root", str(b), cwd=a).json
    assert receipt == {"spool_total": 5, "appended": 4, "to_project": 2, "to_medulla": 2, "pending": ["repo-q"]}
    whats = lambda p: [l.split(b'"what":"')[1][:1].decode() for l in p.read_bytes().splitlines()]
    assert whats(a / ".m1nd" / "inbox.jsonl") == ["1"]
    assert whats(b / ".m1nd" / "inbox.jsonl") == ["2"]
    assert whats(m1nd_home / "inbox.jsonl") == ["3", "4"]


def test_a_field_of_only_slashes_waits_under_the_empty_name(home, tmp_path):
    a = mkdir(tmp_path / "src" / "repo-a")
    rs = law(home, roster=[a])
    assert route_of(rs, repo="/") == (PENDING, "")
    assert route_of(rs, repo="//") == (PENDING, "")


def test_unreachable_lists_sorted_unique_labels_of_roots_that_are_not_directories(cli, tmp_path):
    gone = [tmp_path / "x" / "repo-q", tmp_path / "y" / "repo-q", tmp_path / "x" / "Repo-C"]
    args = []
    for path in gone:
        args += ["--root", str(path)]
    doc = cli("--inbox-sweep", "--no-distribute", *args).json
    assert doc["unreachable"] == ["Repo-C", "repo-q"]
