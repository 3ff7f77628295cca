from m1nd import __version__


def test_version_prints_the_package_version(cli):
    result = cli("--version")
    assert result.code == 0
    assert result.stdout == f"m1nd {__version__}\n"


def test_sweep_with_nothing_anywhere_is_a_valid_empty_document(cli):
    result = cli("--inbox-sweep", "--no-distribute")
    assert result.code == 0
    doc = result.json
    assert doc["schema"] == "m1nd-inbox-sweep-v0"
    assert doc["total"] == 0 and doc["letters"] == [] and doc["distribution"] is None
