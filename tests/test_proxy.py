"""deploy/haproxy.cfg's optional parts, as the README sets them: an access code for the class and HTTPS. The
app processes are stand-ins here (the stickiness and a real run across two processes: tests/test_deploy.py)."""
import base64
import http.server
import os
import shutil
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

from conftest import ROOT, _free_port


class StandIn(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"ok" if self.path == "/_stcore/health" else b"RNN Lab stand-in"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def stand_ins():
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), StandIn) for _ in range(2)]
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    yield [f"127.0.0.1:{s.server_address[1]}" for s in servers]
    for s in servers:
        s.shutdown()


def start_proxy(stand_ins, **env):
    haproxy = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/usr/local/sbin")
    if haproxy is None:
        pytest.fail("HAProxy is not installed: scripts/test.sh installs it (apt-get install haproxy).")
    env = dict(os.environ, APP1=stand_ins[0], APP2=stand_ins[1], **env)
    proc = subprocess.Popen([haproxy, "-db", "-f", str(ROOT / "deploy" / "haproxy.cfg")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return proc


def get(url, code=None, context=None):
    request = urllib.request.Request(url)
    if code is not None:
        request.add_header("Authorization", "Basic " + base64.b64encode(f"class:{code}".encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=5, context=context) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


def wait_for(url, status, seconds=30, **kw):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if get(url, **kw)[0] == status:
                return True
        except OSError:
            pass
        time.sleep(0.3)
    return False


def test_an_access_code_keeps_out_whoever_does_not_have_it(stand_ins):
    front = f"127.0.0.1:{_free_port()}"
    proc = start_proxy(stand_ins, LISTEN=front, ACCESS_CODE="tuesday-9")
    try:
        assert wait_for(f"http://{front}/", 200, code="tuesday-9"), proc.stderr
        assert get(f"http://{front}/")[0] == 401                      # no code: nothing
        assert get(f"http://{front}/", code="monday-1")[0] == 401     # a wrong code: nothing
        assert get(f"http://{front}/", code="tuesday-9") == (200, b"RNN Lab stand-in")
    finally:
        proc.terminate()
        proc.wait(10)


def _certificate(tmp_path):
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed (to make a throwaway certificate)")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=localhost"], check=True, capture_output=True)
    pem = tmp_path / "rnnlab.pem"
    pem.write_bytes(cert.read_bytes() + key.read_bytes())
    return cert, pem


def redirect_of(url: str) -> str:
    """Where plain HTTP sends the browser (the Location of the redirect, not followed)."""
    no_redirects = urllib.request.build_opener(type("Stop", (urllib.request.HTTPRedirectHandler,),
                                                    {"redirect_request": lambda *a, **k: None}))
    with pytest.raises(urllib.error.HTTPError) as answer:
        no_redirects.open(url, timeout=5)
    assert answer.value.code in (301, 302)
    return answer.value.headers["Location"]


@pytest.mark.parametrize("tls_port", [True, False], ids=["TLS_PORT set (8080/8443)", "HTTPS on 443"])
def test_https_with_a_certificate_and_plain_http_redirected_to_its_port(stand_ins, tmp_path, tls_port):
    """The README's pattern, plain HTTP on one port and HTTPS on another: the redirect names the HTTPS port (it
    kept the plain one, and the browser met an SSL error there), with the path and query kept."""
    cert, pem = _certificate(tmp_path)
    plain, secure_port = f"127.0.0.1:{_free_port()}", _free_port()
    secure = f"127.0.0.1:{secure_port}"
    env = dict(LISTEN=plain, TLS_LISTEN=secure, TLS_CERT=str(pem), **({"TLS_PORT": str(secure_port)} if tls_port else {}))
    proc = start_proxy(stand_ins, **env)
    context = ssl.create_default_context(cafile=str(cert))
    context.check_hostname = False                                     # the certificate names localhost
    try:
        assert wait_for(f"https://{secure}/", 200, context=context)
        assert get(f"https://{secure}/", context=context) == (200, b"RNN Lab stand-in")
        location = redirect_of(f"http://{plain}/forecasting?tau=8")
        if tls_port:
            assert location == f"https://127.0.0.1:{secure_port}/forecasting?tau=8"
            assert get(location, context=context) == (200, b"RNN Lab stand-in")   # where it sends, HTTPS answers
        else:
            assert location == "https://127.0.0.1/forecasting?tau=8"            # the default port, not the plain one
    finally:
        proc.terminate()
        proc.wait(10)
