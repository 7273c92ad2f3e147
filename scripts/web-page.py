#!/usr/bin/env python3
# keel: load the browser verifier's page in headless Chromium and keep what it
# shows once it has settled. MIT licence, see LICENSE.
#
# Usage: scripts/web-page.py [--serve DIR] [--screenshot PNG] [--pick FILE[,FILE]] URL DOM.html
#                            [[--pick FILE[,FILE]] URL DOM.html ...]
#
# Loads each URL in turn in one headless Chromium (one start for them all)
# and writes its DOM to the file after it; --screenshot: the last page, whole,
# 1000 pixels wide. --serve DIR: a static server for DIR on 127.0.0.1 (a free
# port, in this process, Python's http.server) answers the URLs that begin
# with "/". --pick: once the next URL has settled, choose these files in the
# page's file input (#pick), as a user would, and wait for that verdict;
# several --pick before a URL are chosen one after the other on that page.
# Drives Chromium over the DevTools protocol on a pipe (--remote-debugging-
# pipe: JSON messages ending in a NUL byte, Chromium reading fd 3 and writing
# fd 4), so no port is opened and nothing but the Python standard library is
# needed. "Settled" is the page's own state, not a time: #module's
# data-state is no longer "loading" and #verdict's data-result is not
# "running" (web/verifier.js sets them). The caller bounds the whole run
# (timeout); this script never judges by the clock. Exit 0 with every DOM
# (and the screenshot) written; 1 when Chromium fails or closes; 2 usage.
import base64
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

# Resolves once the page has settled (the busy states: a list, %s).
SETTLED = """new Promise((resolve) => {
  const busy = %s;
  const settled = () => {
    const m = document.getElementById('module'), v = document.getElementById('verdict');
    return m && v && m.dataset.state !== 'loading' && !busy.includes(v.dataset.result);
  };
  if (settled())
    return resolve(true);
  new MutationObserver(() => { if (settled()) resolve(true); })
    .observe(document.documentElement, { subtree: true, childList: true, attributes: true, characterData: true });
})"""

WIDTH = 1000


class Browser:
    def __init__(self, profile):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def fds():  # in the child; dup2 onto itself would keep close-on-exec
            r, w = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.log = open(os.path.join(profile, "chromium.log"), "wb")
        self.proc = subprocess.Popen(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--user-data-dir=" + profile, "--window-size=%d,800" % WIDTH, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, preexec_fn=fds, close_fds=False)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buffer = b""
        self.events = []
        self.last_id = 0

    def read(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe (exit %s)" % self.proc.poll())
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None):
        self.last_id += 1
        message = {"id": self.last_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            m = self.read()
            if m.get("id") == self.last_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"].get("message")))
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def wait_event(self, method, session):
        while True:
            for i, m in enumerate(self.events):
                if m["method"] == method and m.get("sessionId") == session:
                    return self.events.pop(i)
            self.events.append(self.read())

    def evaluate(self, expression, session):
        r = self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True},
                      session)
        if "exceptionDetails" in r:
            raise RuntimeError("the page threw: %s" % r["exceptionDetails"].get("text"))
        return r["result"].get("value")

    def close(self):
        try:
            self.call("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


def serve(directory):
    """A static server for directory on 127.0.0.1, a free port; its base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(QuietHandler, directory=directory))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return "http://127.0.0.1:%d" % server.server_address[1]


def main():
    args = sys.argv[1:]
    shot_path = None
    base = ""
    loads = []  # (url, dom_path, files to pick)
    pick = []
    while len(args) >= 2:
        if args[0] == "--serve":
            base = serve(args[1])
        elif args[0] == "--screenshot":
            shot_path = args[1]
        elif args[0] == "--pick":
            pick.append([os.path.abspath(f) for f in args[1].split(",")])
        else:
            loads.append((args[0], args[1], pick))
            pick = []
        args = args[2:]
    if args or not loads:
        print("usage: scripts/web-page.py [--serve DIR] [--screenshot PNG] [--pick FILE[,FILE]] URL DOM.html ...",
              file=sys.stderr)
        return 2
    profile = tempfile.mkdtemp(prefix="keel-web-")
    browser = Browser(profile)
    url = "about:blank"
    try:
        target = browser.call("Target.createTarget", {"url": url})["targetId"]
        session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        browser.call("Page.enable", session=session)
        for url, dom_path, picks in loads:
            if base and url.startswith("/"):
                url = base + url
            browser.call("Page.navigate", {"url": url}, session)
            browser.wait_event("Page.loadEventFired", session)
            browser.evaluate(SETTLED % '["running"]', session)
            for files in picks:
                # "idle" until the change event's handler has read the files
                browser.evaluate("document.getElementById('verdict').dataset.result = 'idle'", session)
                root = browser.call("DOM.getDocument", session=session)["root"]["nodeId"]
                node = browser.call("DOM.querySelector", {"nodeId": root, "selector": "#pick"}, session)["nodeId"]
                browser.call("DOM.setFileInputFiles", {"files": files, "nodeId": node}, session)
                browser.evaluate(SETTLED % '["running", "idle"]', session)
            with open(dom_path, "w", encoding="utf-8") as f:
                f.write(browser.evaluate("document.documentElement.outerHTML", session) + "\n")
        if shot_path:
            height = browser.evaluate("document.documentElement.scrollHeight", session)
            browser.call("Emulation.setDeviceMetricsOverride",
                         {"width": WIDTH, "height": int(height), "deviceScaleFactor": 1, "mobile": False}, session)
            png = browser.call("Page.captureScreenshot", {"format": "png"}, session)["data"]
            with open(shot_path, "wb") as f:
                f.write(base64.b64decode(png))
        return 0
    except (RuntimeError, OSError) as e:
        print("web-page: %s: %s" % (url, e), file=sys.stderr)
        browser.log.flush()
        with open(os.path.join(profile, "chromium.log"), "rb") as f:
            sys.stderr.write(f.read()[-2000:].decode(errors="replace"))
        return 1
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
