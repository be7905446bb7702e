"""The download code, against a real HTTP server on 127.0.0.1 serving the real files.

Each dataset's published URLs are rewritten to ``http://127.0.0.1:<port>/<host>/<path>``;
the server answers with the file of that name from ``$OSFB_DATA`` (a zip built
on the fly for the datasets published as archives), or, on request, with a
404, a truncated body or altered bytes. The real ``urllib`` code, checksum
verification and atomic writes run unchanged.
"""

from __future__ import annotations

import dataclasses
import http.server
import io
import socket
import threading
import urllib.parse
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from osfb_gym.data import DatasetNotFoundError, load, registry, sources


@dataclasses.dataclass
class Server:
    """The running server: its base URL, the paths asked for, and per-file misbehaviour."""

    base: str
    requests: list[str]
    misbehave: dict[str, str]  # file name -> "404", "truncate" or "corrupt"


def _archive(members: dict[str, Path]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for member, path in members.items():
            archive.write(path, member)
    return buffer.getvalue()


@pytest.fixture
def server(osfb_data: Path) -> Iterator[Server]:
    files = {path.name: path for path in osfb_data.glob("*/*") if path.is_file()}
    archives = {
        item.url.rsplit("/", 1)[1]: {item.member: files[item.file]}
        for spec in registry.SPECS
        for item in spec.downloads
        if item.member is not None and item.file in files
    }
    state = Server("", [], {})

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the http.server name)
            state.requests.append(self.path)
            name = urllib.parse.unquote(self.path.rsplit("/", 1)[1])
            if name in archives:
                body = _archive(archives[name])
            elif name in files and state.misbehave.get(name) != "404":
                body = files[name].read_bytes()
            else:
                self.send_error(404)
                return
            declared = len(body)
            if state.misbehave.get(name) == "truncate":
                body = body[: len(body) // 2]  # the connection drops half-way
            elif state.misbehave.get(name) == "corrupt":
                body = body[:100] + b"X" + body[101:]
            self.send_response(200)
            self.send_header("Content-Length", str(declared))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:  # keep the test output clean
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    state.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield state
    httpd.shutdown()
    httpd.server_close()
    thread.join()


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty download cache, and no $OSFB_DATA: only the cache and the server have files."""
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(tmp_path / "sklearn"))
    monkeypatch.delenv(sources.ENV_VAR, raising=False)
    return tmp_path / "sklearn" / sources.CACHE_SUBDIR


def serve(name: str, base: str, monkeypatch: pytest.MonkeyPatch) -> registry.DatasetSpec:
    """Point ``name``'s downloads at ``base`` (``<base>/<host>/<path>`` of each real URL)."""
    spec = registry.get_spec(name)
    downloads = tuple(
        dataclasses.replace(item, url=f"{base}/{item.url.split('://', 1)[1]}")
        for item in spec.downloads
    )
    local = dataclasses.replace(spec, downloads=downloads)
    for key in (spec.name, *spec.aliases):
        monkeypatch.setitem(registry._BY_NAME, key, local)
    return local


def leftovers(folder: Path) -> list[str]:
    """Files in ``folder`` (temporary ones included), sorted."""
    return sorted(path.name for path in folder.iterdir()) if folder.is_dir() else []


# Small and medium datasets: one file, two files, a zip member, a space in the
# name, checksummed or not. Adult and Bank (5-6 MB) run with the slow tests.
FAST = ["german", "blood", "guide", "eeg", "sms_spam"]
SLOW = ["adult", "bank", "compas", "reuters_r8"]


@pytest.mark.parametrize(
    "name", [*FAST, *(pytest.param(name, marks=pytest.mark.slow) for name in SLOW)]
)
def test_download_fills_the_cache_and_reads_as_the_local_copy(
    name: str,
    server: Server,
    cache: Path,
    osfb_data: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = serve(name, server.base, monkeypatch)
    downloaded = load(name)
    folder = cache / str(spec.folder)
    assert leftovers(folder) == sorted(spec.files)
    for file in spec.files:
        assert (folder / file).read_bytes() == (osfb_data / str(spec.folder) / file).read_bytes()
    local = load(name, data_home=osfb_data)
    for attribute in ("X", "y", "texts", "cdf", "repay"):
        if hasattr(local, attribute):
            assert np.array_equal(getattr(downloaded, attribute), getattr(local, attribute))
    asked = len(server.requests)
    assert asked == len({item.url for item in spec.downloads})
    assert load(name) is downloaded and len(server.requests) == asked  # found in the cache now


def test_data_home_receives_the_download(
    server: Server, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve("german", server.base, monkeypatch)
    data = load("german", data_home=tmp_path / "mine")
    assert (tmp_path / "mine" / "german_credit" / "german.data").is_file()
    assert not cache.exists()
    assert data.metadata["source"].startswith(str((tmp_path / "mine").resolve()))


def _one_line_error(name: str, **kwargs: object) -> str:
    with pytest.raises(DatasetNotFoundError) as caught:
        load(name, **kwargs)  # type: ignore[arg-type]
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_404_leaves_no_file_and_says_where_to_put_it(
    server: Server, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve("guide", server.base, monkeypatch)
    server.misbehave["svmguide1.t"] = "404"
    message = _one_line_error("guide")
    folder = cache / "svmguide1"
    # svmguide1 arrived whole and verified; svmguide1.t left nothing behind
    assert leftovers(folder) == ["svmguide1"]
    assert "svmguide1.t not found" in message and "HTTP Error 404" in message
    assert f"put svmguide1.t in {folder}/" in message and "OSFB_DATA=<dir>" in message
    # the one wording of missing data (the test suite's skips end with it too)
    from osfb_gym.data.sources import where_to_put

    assert message.endswith(where_to_put(["svmguide1"], f"put svmguide1.t in {folder}/"))
    assert "--data-home <dir>" in message
    del server.misbehave["svmguide1.t"]  # the server is back: the download resumes
    assert load("guide").n_samples == 7089
    assert leftovers(folder) == ["svmguide1", "svmguide1.t"]


@pytest.mark.parametrize("how", ["truncate", "corrupt"])
def test_a_truncated_or_altered_download_leaves_no_file(
    how: str, server: Server, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve("german", server.base, monkeypatch)
    server.misbehave["german.data"] = how
    message = _one_line_error("german")
    assert leftovers(cache / "german_credit") == []
    expected = "IncompleteRead" if how == "truncate" else "has SHA-256"
    assert expected in message and "german.data not found" in message


def test_connection_refused_leaves_no_file(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    serve("blood", f"http://127.0.0.1:{port}", monkeypatch)
    monkeypatch.setitem(
        registry._BY_NAME, "blood", dataclasses.replace(registry.get_spec("blood"), openml=None)
    )
    message = _one_line_error("blood")
    assert "Connection refused" in message and "transfusion.data not found" in message
    assert leftovers(cache / "blood_transfusion") == []


def test_offline_is_one_line_naming_file_places_and_fix(cache: Path, tmp_path: Path) -> None:
    # tests have no internet (tests/conftest.py): the real URLs fail as offline
    message = _one_line_error("adult", data_home=tmp_path / "home")
    assert message.startswith("dataset 'adult': adult.data, adult.test not found")
    assert str(tmp_path / "home" / "adult") in message and str(cache / "adult") in message
    assert "archive.ics.uci.edu" in message
    assert "OpenML" not in message  # no network at all: OpenML is not tried in vain
    assert f"put adult.data, adult.test in {tmp_path / 'home' / 'adult'}/" in message
    assert not (tmp_path / "home").exists()


def test_download_false_tries_nothing_and_says_so(cache: Path, tmp_path: Path) -> None:
    message = _one_line_error("compas", data_home=tmp_path, download=False)
    assert "not downloaded (download=False)" in message


def test_every_checksum_is_that_of_the_real_file(osfb_data: Path) -> None:
    import hashlib

    checked = 0
    for spec in registry.SPECS:
        for item in spec.downloads:
            if item.sha256 is not None:
                data = (osfb_data / str(spec.folder) / item.file).read_bytes()
                assert hashlib.sha256(data).hexdigest() == item.sha256, item.file
                checked += 1
    assert checked >= 10
