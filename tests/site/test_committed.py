"""The browser tests' committed runs (committed.py): a run is taken only for the very key it was
made from, a changed input makes it again, and a run made again is kept without noise."""
from __future__ import annotations

import json
import warnings

import pytest

import committed

ORIGIN = "http://127.0.0.1:8000"


@pytest.fixture
def store(tmp_path, monkeypatch):
    site = tmp_path / "site"
    (site / "assets").mkdir(parents=True)
    (site / "index.html").write_text("<p>home</p>")
    (site / "assets" / "site.css").write_text("p { color: red }")
    driver = tmp_path / "driver.py"
    driver.write_text("# drives the browser\n")
    monkeypatch.setattr(committed, "STORE", tmp_path / "results" / "browser")
    monkeypatch.setattr(committed, "REPO", tmp_path)
    monkeypatch.setattr(committed, "DRIVERS", ())
    monkeypatch.setattr(committed, "sampled", lambda name: False)
    monkeypatch.setattr(committed, "RUNS", {"taken": []})
    monkeypatch.delenv("BROWSER_COMMITTED", raising=False)
    return site, driver


def test_a_run_is_made_when_not_taken_and_kept_only_when_it_says_so(store):
    site, driver = store
    browser = committed.Browser(site, "156.0", ORIGIN)
    made = []

    def make(data, keep):
        return lambda: made.append(data) or (data, ["index.html"], keep)

    assert browser.run("pasted-en", driver, make({"late": 1}, False)) == {"late": 1}
    assert not (committed.STORE / "pasted-en.json").exists()  # a late answer is asked again
    assert browser.run("pasted-en", driver, make({"hrefs": 2}, True)) == {"hrefs": 2}
    assert browser.run("pasted-en", driver, make({"other": 3}, True)) == {"hrefs": 2}  # taken
    assert made == [{"late": 1}, {"hrefs": 2}]


def test_the_requested_files_are_the_sites_files_a_page_asked_for():
    origin = "http://127.0.0.1:8000"
    assert committed.requested_files(
        [f"{origin}/", f"{origin}/es/warning/?h=cudnn", f"{origin}/assets/site.css#x",
         f"{origin}/assets/a%20b.js", "data:image/png;base64,xx", "https://fonts.example/a.css"],
        origin) == ["assets/a b.js", "assets/site.css", "es/warning/index.html", "index.html"]


def test_a_run_is_taken_only_while_everything_it_read_is_the_same(store):
    site, driver = store
    files = ["assets/site.css", "index.html"]

    def fresh():
        return committed.Browser(site, "156.0", ORIGIN)  # a new session: files hashed again

    fresh().keep("visits/phone-en-", driver, files, {"loads": {"data": [1]}}, {"src": "a"})
    assert fresh().taken("visits/phone-en-", driver, {"src": "a"}) == {"loads": {"data": [1]}}
    assert fresh().taken("visits/phone-en-", driver, {"src": "b"}) is None  # an input
    assert committed.Browser(site, "157.0", ORIGIN).taken("visits/phone-en-", driver, {"src": "a"}) is None
    (site / "assets" / "site.css").write_text("p { color: blue }")  # a file the page asked for
    assert fresh().taken("visits/phone-en-", driver, {"src": "a"}) is None
    (site / "assets" / "site.css").write_text("p { color: red }")
    driver.write_text("# drives the browser otherwise\n")  # the code that drove it
    assert fresh().taken("visits/phone-en-", driver, {"src": "a"}) is None
    driver.write_text("# drives the browser\n")
    (site / "index.html").unlink()  # a file it asked for is gone
    assert fresh().taken("visits/phone-en-", driver, {"src": "a"}) is None
    assert fresh().taken("visits/none", driver) is None
    assert committed.RUNS["taken"] == ["visits/phone-en-"]
    assert len(committed.RUNS["its inputs changed"]) == 5
    assert committed.RUNS["none committed"] == ["visits/none"]
    assert committed.summary(committed.RUNS).startswith("browser runs: 1 taken from results/browser/")
    # two workers that took or made the same run count it once
    assert committed.summary({"taken": ["a", "b", "a"], "its inputs changed": ["c", "c"]}) == (
        "browser runs: 2 taken from results/browser/ (same key), 1 made (1 its inputs changed)")


def test_a_sample_or_the_switch_makes_a_run_again(store, monkeypatch):
    site, driver = store
    browser = committed.Browser(site, "156.0", ORIGIN)
    browser.keep("pasted-en", driver, ["index.html"], [1, 2])
    monkeypatch.setattr(committed, "sampled", lambda name: name == "pasted-en")
    assert browser.taken("pasted-en", driver) is None
    monkeypatch.setattr(committed, "sampled", lambda name: False)
    monkeypatch.setenv("BROWSER_COMMITTED", "0")
    assert browser.taken("pasted-en", driver) is None
    assert committed.RUNS["this commit's sample"] == ["pasted-en"]
    assert committed.RUNS["BROWSER_COMMITTED=0"] == ["pasted-en"]


def test_the_sample_is_about_one_run_in_sample_one_in_and_changes_with_the_commit(monkeypatch):
    names = [f"visits/phone-en-page{i}" for i in range(2000)]
    picked = {}
    for commit in ("a" * 40, "b" * 40):
        monkeypatch.setattr(committed, "_commit", lambda c=commit: c)
        picked[commit] = {n for n in names if committed.sampled(n)}
        assert 0.5 < len(picked[commit]) / (len(names) / committed.SAMPLE_ONE_IN) < 1.5
    assert picked["a" * 40] != picked["b" * 40]


def test_the_same_run_again_leaves_the_file_and_other_data_is_said(store):
    site, driver = store
    browser = committed.Browser(site, "156.0", ORIGIN)
    browser.keep("visits/desktop-en-", driver, ["index.html"], {"x": 1})
    file = committed.STORE / "visits" / "desktop-en-.json"
    before = file.read_text()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        browser.keep("visits/desktop-en-", driver, ["index.html"], {"x": 1})
    assert file.read_text() == before
    with warnings.catch_warnings():  # a number (a size, a position) varies from load to load
        warnings.simplefilter("error")
        browser.keep("visits/desktop-en-", driver, ["index.html"], {"x": 2})
    assert json.loads(file.read_text())["data"] == {"x": 2}  # the run just made is kept
    with pytest.warns(UserWarning, match=r"same key, its data differ .*/x: '2' then 'two'"):
        browser.keep("visits/desktop-en-", driver, ["index.html"], {"x": "two"})
    kept = json.loads(file.read_text())
    assert kept["data"] == {"x": "two"} and kept["provenance"]["chromium"] == "156.0"
    assert not [p for p in file.parent.iterdir() if p.name.endswith(".part")]


def test_the_address_a_run_was_served_at_reads_as_the_current_one(store):
    """Each session serves the site on a free port: a run's data carries a placeholder for it."""
    site, driver = store
    data = {"url": f"{ORIGIN}/es/criteria/?h=cudnn", "problems": [f"HTTP 404: GET {ORIGIN}/x"]}
    committed.Browser(site, "156.0", ORIGIN).keep("pasted-es", driver, ["index.html"], data)
    assert ORIGIN not in (committed.STORE / "pasted-es.json").read_text()
    later = "http://127.0.0.1:41999"
    assert committed.Browser(site, "156.0", later).taken("pasted-es", driver) == {
        "url": f"{later}/es/criteria/?h=cudnn", "problems": [f"HTTP 404: GET {later}/x"]}


def test_every_committed_run_is_of_a_page_or_language_the_tests_still_visit():
    """A committed run of a page that is gone (renamed, removed) is found here: delete it."""
    from browsing import LANGS, PAGES
    from test_finding import run_names
    from visits import committed_name
    known = {committed_name(kind, lang, url) for lang, url in PAGES for kind in ("phone", "desktop")}
    known |= {f"{run}-{lang}" for run in ("pasted", "first-results", "worker-queries")
              for lang in LANGS}
    known |= run_names()
    kept = {p.relative_to(committed.STORE).with_suffix("").as_posix()
            for p in committed.STORE.rglob("*.json")}
    assert kept, f"no committed browser run in {committed.STORE}"
    assert kept - known == set(), sorted(kept - known)
