"""The graph page and the JupyterLab explorer in a real browser: headless Chromium (Debian's
package, driven by Playwright with the system browser) opens them, waits for the graph to be
drawn, reads the number of nodes from the page and saves screenshots under
results/screenshots/. `make test` installs Chromium where it is missing (tools/browser.sh);
these tests skip, saying why, only where it cannot be installed."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mags_lib.paths import NOTEBOOKS_DIR, SCREENSHOTS_DIR

pytestmark = pytest.mark.slow
CHROMIUM = os.environ.get("MAGS_CHROMIUM") or shutil.which("chromium") or shutil.which(
    "chromium-browser")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]
DRAWN = "window.magsDrawn === true"


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright is a dev dependency (make setup)")
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine and it could not be installed: run "
                    "`sudo apt-get install chromium` (make test does it as root)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield browser
        browser.close()


def _shot(page, name: str) -> Path:
    SCREENSHOTS_DIR.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS_DIR / name
    page.screenshot(path=str(path))
    assert path.stat().st_size > 5_000  # a picture, not an empty page
    return path


def _memory():
    from mags_lib.embed import HashingEmbedder
    from mags_lib.memory import LiquidMemory

    m = LiquidMemory(embedder=HashingEmbedder())
    m.observe("The purple glarb eats carrots on rainy turns.", block="semantic", key="g",
              source="turn:1")
    m.step()
    for i, text in enumerate(["The zwoorp eats stones on sunny turns.",
                              "The teal breep takes only the wrench on rainy turns.",
                              "We talked about the garden."]):
        m.observe(text, block="semantic" if i < 2 else "episodic", source=f"turn:{i + 2}")
        m.step()
    m.observe("The purple glarb now eats turnips on rainy turns.", block="semantic", key="g",
              source="turn:6")
    m.recall("what does the purple glarb eat", 3)
    m.step(1.0)
    m.perceive("a turn in working memory")
    return m


def test_the_graph_page_draws_every_node(browser, tmp_path):
    from mags_lib.graph_html import write_graph_html

    memory = _memory()
    path = write_graph_html(memory, tmp_path / "graph.html", title="browser test")
    page = browser.new_page(viewport={"width": 1100, "height": 760})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(path.as_uri())
    page.wait_for_function(DRAWN, timeout=30_000)
    expected = memory.to_networkx(valid_only=False).number_of_nodes() + len(memory.working)
    assert page.evaluate("nodes.length") == expected == 6
    assert page.evaluate("network.body.data.nodes.get(0).valid") is False  # superseded, shown
    assert "superseded" in page.inner_text("#mags-legend")
    canvas = page.evaluate("""() => { const c = document.querySelector('canvas');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let ink = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) ink++; return ink; }""")
    assert canvas > 1_000  # the nodes and edges are on the canvas
    page.wait_for_timeout(800)
    _shot(page, "graph_page.png")
    assert not errors, errors
    page.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def jupyterlab(tmp_path):
    """A JupyterLab server on localhost over a copy of the explorer notebook."""
    shutil.copy(NOTEBOOKS_DIR / "explore_memory.ipynb", tmp_path / "explore_memory.ipynb")
    port, token = _free_port(), "mags-browser-test"
    log = open(tmp_path / "lab.log", "w")  # noqa: SIM115 (closed below)
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
         f"--ServerApp.token={token}", f"--ServerApp.root_dir={tmp_path}",
         "--LabApp.expose_app_in_browser=True", "--allow-root",
         "--ServerApp.disable_check_xsrf=True"],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "JUPYTER_PLATFORM_DIRS": "1"})
    deadline = time.time() + 90
    while time.time() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        if server.poll() is not None:
            break
        time.sleep(0.5)
    try:
        if server.poll() is not None:
            pytest.fail("JupyterLab did not start: " + (tmp_path / "lab.log").read_text()[-2000:])
        yield f"http://127.0.0.1:{port}/lab/tree/explore_memory.ipynb?token={token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def test_the_explorer_notebook_draws_the_memory_in_jupyterlab(browser, jupyterlab):
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.goto(jupyterlab)
    page.wait_for_function("window.jupyterapp && document.querySelector('.jp-Notebook')",
                           timeout=90_000)
    page.wait_for_function("""() => { const w = window.jupyterapp.shell.currentWidget;
        return w && w.sessionContext && w.sessionContext.session &&
               w.sessionContext.session.kernel &&
               w.sessionContext.session.kernel.status === 'idle'; }""", timeout=90_000)
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    # the explorer's iframe holds the graph page; find it and wait for its first frame
    deadline = time.time() + 180
    frame = None
    while time.time() < deadline and frame is None:
        for f in page.frames:
            try:
                if f != page.main_frame and f.evaluate(DRAWN):
                    frame = f
            except Exception:  # noqa: BLE001 (a frame still loading)
                continue
        page.wait_for_timeout(500)
    assert frame is not None, "the explorer's graph was not drawn within 3 minutes"
    printed = page.locator("text=/memory: \\d+ nodes/").first.inner_text()
    n_nodes = int(printed.split("memory: ")[1].split(" nodes")[0])
    assert n_nodes > 10
    assert frame.evaluate("nodes.length") == n_nodes + frame.evaluate(
        "nodes.get().filter(n => n.block === 'working').length")
    assert page.locator("text=/snapshot: now/").count() == 1  # the time slider's readout
    frame.evaluate("0")  # still alive
    page.locator(".jp-OutputArea-output iframe").first.scroll_into_view_if_needed()
    page.wait_for_timeout(1000)
    _shot(page, "explorer_jupyterlab.png")
    page.close()
