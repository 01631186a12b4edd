"""Opens the `parity explain` HTML reports in headless Chromium and checks what a
person sees: the verdict, the failing element, the diverging op, the witness,
and the links from a spec tensor to its plan shards. Run by
scripts/browser-test.sh, which writes the reports into $PARITY_REPORT_DIR.
"""
import json
import math
import os
import re
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import sync_playwright

DIR = Path(os.environ.get("PARITY_REPORT_DIR", ""))
SHOTS = Path(os.environ.get("PARITY_SCREENSHOT_DIR", str(DIR)))


@pytest.fixture(scope="module")
def browser():
    assert os.environ.get("PARITY_REPORT_DIR"), "PARITY_REPORT_DIR is not set (run scripts/browser-test.sh)"
    with sync_playwright() as p:
        # Debian's Chromium by its path: nothing is downloaded.
        b = p.chromium.launch(
            executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"])
        yield b
        b.close()


class Report:
    """A report opened in a page; every request must stay inside the file (the
    report is self-contained) and the page must run without script errors."""

    def __init__(self, browser, name):
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.outside, self.errors = [], []
        self.page.on("request", lambda r: None if r.url.startswith("file:") else self.outside.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto((DIR / name).resolve().as_uri())

    def text(self, sel):
        return self.page.text_content(sel)

    def hash(self):
        return "#" + urlparse(self.page.url).fragment

    def close(self):
        assert self.outside == [], "the report loads nothing from outside"
        assert self.errors == [], "no script errors"
        self.page.close()


def in_view(locator):
    """True when the element is (at least partly) inside the viewport."""
    return locator.evaluate(
        "el => { const r = el.getBoundingClientRect(); return r.bottom > 0 && r.top < window.innerHeight; }")


def close_to(text, want):
    return math.fabs(float(text) - want) <= 1e-8 * max(1.0, math.fabs(want))


def test_mismatch_report_shows_failing_element_diverging_op_and_witness(browser):
    cex = json.loads((DIR / "mismatch.json").read_text())["counterexample"]
    r = Report(browser, "mismatch.html")
    page = r.page

    assert r.text("#verdict").strip() == "MISMATCH"
    element = f"{cex['program']}.{cex['value']}[{','.join(map(str, cex['plan_index']))}]"
    assert r.text("#failing-element").strip() == element
    assert r.text("#diverging-op").strip() == cex["op"]
    assert re.match(r"^identity -> o \(line \d+\)$", cex["op"])
    assert r.text("#failing-rank").strip() == cex["rank_text"]
    assert isinstance(cex["rank"], int) and cex["rank"] >= 0
    assert all(isinstance(c, int) for c in cex["coords"].values())

    # The op is highlighted in the plan listing, and only that one.
    diverge = page.locator("#plan-listing .line.diverge")
    assert diverge.count() == 1
    assert re.search(r"%o = identity\(%o_part\)", diverge.text_content())
    assert "first divergence" in diverge.text_content()
    spec_side = page.locator("#spec-listing .line.diverge-spec")
    assert re.search(r"%o = matmul\(%a, %w2\)", spec_side.text_content())

    # The witness: both values and every input, as the JSON report has them.
    assert close_to(r.text("#witness-spec"), cex["spec_num"]), "spec value of the witness"
    assert close_to(r.text("#witness-plan"), cex["plan_num"]), "plan value of the witness"
    rows = page.locator("#witness-inputs tbody tr")
    assert rows.count() == len(cex["inputs"])
    for name, value in cex["inputs"].items():
        row = rows.filter(has=page.locator("td", has_text=re.compile("^" + re.escape(name) + "$")))
        assert row.count() == 1, f"witness input {name}"
        assert close_to(row.locator("td.num").text_content(), value), f"value of {name}"
    assert "spec also has" in r.text("#difference")
    assert len(r.text("#spec-expr")) > 0
    assert len(r.text("#plan-expr")) > 0
    page.screenshot(path=str(SHOTS / "explain-mismatch.png"), full_page=True)

    # Placement table: the failing rows are marked; the filter narrows the rows.
    failing = page.locator("#placement-table tbody tr.fail")
    assert failing.count() >= 1
    page.check("#only-failing")
    visible = page.locator("#placement-table tbody tr:visible")
    assert visible.count() == failing.count()
    page.uncheck("#only-failing")
    page.fill("#filter", "w1")
    for t in visible.all_text_contents():
        assert "w1" in t
    page.fill("#filter", "")

    # Navigation: spec element -> spec listing; spec tensor -> its plan shard in the plan listing.
    page.click("#spec-element a")
    assert r.hash() == "#s-o"
    assert in_view(page.locator("#s-o"))

    page.click('nav a[href="#tensors"]')
    tensor = page.locator("#t-o")
    assert "tp.%o_part" in tensor.text_content()
    assert "partial, summed over tp" in tensor.text_content()
    assert "rank 0 (tp=0)" in tensor.text_content()
    tensor.locator("a.shard", has_text="tp.%o_part").click()
    shard = page.locator("#v-tp--o_5fpart")
    assert in_view(shard), "the plan shard is scrolled into view"
    assert re.search(r"\bcurrent\b", shard.get_attribute("class"))
    assert "%o_part = matmul(%as, %w2s)" in shard.text_content()
    assert re.search(r"tp\.%o_part .*partial of spec %o summed over tp", r.text("#selected"))
    page.screenshot(path=str(SHOTS / "explain-shard.png"))

    # And back: the shard's annotation links to the spec tensor.
    shard.locator("a", has_text="→ spec %o").click()
    assert r.hash() == "#t-o"
    assert in_view(page.locator("#t-o"))

    # The lineage table lists the walk back from the diverging value; a step's
    # "reads" links jump to the steps it reads.
    assert page.locator("#lineage tbody tr").count() == len(cex["lineage"])
    assert len(cex["lineage"]) >= 2
    page.locator("#lin-0 a", has_text="#1").click()
    assert r.hash() == "#lin-1"
    r.close()


def test_verified_report_lists_every_placement_with_obligations_and_time(browser):
    doc = json.loads((DIR / "verified.json").read_text())
    r = Report(browser, "verified.html")
    page = r.page
    assert r.text("#verdict").strip() == "VERIFIED"
    assert page.locator("#failing").count() == 0
    assert re.search(r"checked in \d+\.\d+ s", r.text("#summary"))
    rows = page.locator("#placement-table tbody tr")
    assert rows.count() == len(doc["placements"])
    for p in doc["placements"]:
        value = p["placement"].split(" -> ")[0]
        prog, name = value.split(".", 1)
        row = rows.filter(has=page.locator(
            "td:first-child", has_text=re.compile("^" + re.escape(f"{prog}.%{name}") + "$")))
        assert row.count() == 1, p["placement"]
        cells = row.locator("td").all_text_contents()
        assert cells[4] == str(p["obligations"])
        assert cells[5] == str(p["proved"])
        assert cells[8] == "proved"
    # Proved by stages: each distinct stage is listed with its key hash and instance count.
    assert len(doc["stage_list"]) > 0, "the correct case is proved by stages"
    stage_rows = page.locator("#stage-table tbody tr")
    assert stage_rows.count() == len(doc["stage_list"])
    instances = 0
    for st in doc["stage_list"]:
        row = stage_rows.filter(has=page.locator("td", has_text=st["hash"]))
        assert row.count() == 1, st["hash"]
        cells = row.locator("td").all_text_contents()
        assert cells[0] == f"%{st['spec_value']}"
        assert cells[2] == str(st["instances"])
        instances += st["instances"]
    assert instances == doc["stages"]["total"]
    page.click('nav a[href="#stages"]')
    assert in_view(page.locator("#stages"))
    page.screenshot(path=str(SHOTS / "explain-verified.png"), full_page=True)
    r.close()
