"""The text the labs learn from: The Time Machine (H. G. Wells, public domain) or a learner's upload.

load_corpus looks, in order, at: an explicit path; the environment variable RNNLAB_CORPUS (a file, any UTF-8
text; or a folder, whose timemachine.txt is used when it holds one, else the search goes on); a copy beside
the clone (../shared/data/timemachine.txt, as the scripts and tests use); the cache file under the user's cache
directory; else it downloads the file from its usual public location, checks its
SHA-1 and caches it. Every failure raises CorpusError, whose message says what to do.
"""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from core.i18n import N_, _

CORPUS_URL = "http://d2l-data.s3-accelerate.amazonaws.com/timemachine.txt"
CORPUS_SHA1 = "090b5e7e70c295757f55df93cb0a180b9691891a"
CORPUS_FILE = "timemachine.txt"
ENV_CORPUS = "RNNLAB_CORPUS"
ENV_CACHE = "RNNLAB_CACHE_DIR"
BESIDE_CLONE = Path(__file__).resolve().parents[3] / "shared" / "data" / CORPUS_FILE   # checked like the cache
MAX_DOWNLOAD_BYTES = 5_000_000
MAX_UPLOAD_BYTES = 5_000_000
MIN_UPLOAD_CHARS = 200
MIN_DISTINCT_CHARS = 10

HOW_TO_GET = N_("Set the environment variable {env} to a local copy of The Time Machine (sha1 {sha1}), let RNN Lab "
                "download it (needs the internet), or upload a .txt file.")


def how_to_get() -> str:
    """How to get the corpus, in the language in force."""
    return _(HOW_TO_GET).format(env=ENV_CORPUS, sha1=CORPUS_SHA1)


class CorpusError(ValueError):
    """The corpus could not be found, fetched, verified or read; the message says what to do."""


def cache_dir() -> Path:
    """RNNLAB_CACHE_DIR, else $XDG_CACHE_HOME/rnnlab, else ~/.cache/rnnlab."""
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "rnnlab"


def sha1_of(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def _read_text(path: Path, check_sha1: bool) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CorpusError(f"Cannot read the corpus at {path}: {exc.strerror or exc}. {how_to_get()}") from None
    if check_sha1 and sha1_of(data) != CORPUS_SHA1:
        raise CorpusError(f"The file at {path} is not the expected Time Machine text (its SHA-1 is "
                          f"{sha1_of(data)}, expected {CORPUS_SHA1}). {how_to_get()}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CorpusError(f"The corpus at {path} is not UTF-8 text. {how_to_get()}") from None


def atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def download_corpus(url: str = CORPUS_URL, dest: Path | None = None, timeout: float = 30.0) -> Path:
    """Fetch the corpus, check its SHA-1, write it atomically to dest (default: the cache file)."""
    dest = dest or cache_dir() / CORPUS_FILE
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            data = response.read(MAX_DOWNLOAD_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise CorpusError(f"Could not download the corpus from {url} ({reason}). {how_to_get()}") from None
    if len(data) > MAX_DOWNLOAD_BYTES:
        raise CorpusError(f"The download from {url} is larger than {MAX_DOWNLOAD_BYTES} bytes: not the corpus. {how_to_get()}")
    if sha1_of(data) != CORPUS_SHA1:
        raise CorpusError(f"The file downloaded from {url} has SHA-1 {sha1_of(data)}, expected {CORPUS_SHA1}; "
                          f"it was not saved. {how_to_get()}")
    atomic_write(dest, data)
    return dest


def find_corpus(path: str | os.PathLike | None = None, download: bool = True, url: str = CORPUS_URL,
                timeout: float = 30.0) -> Path:
    """Where the corpus is: the explicit path, RNNLAB_CORPUS, a copy beside the clone, the cache, or a fresh
    download."""
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise CorpusError(f"No corpus file at {p}. {how_to_get()}")
        return p
    env = os.environ.get(ENV_CORPUS)
    if env and Path(env).is_dir():   # a folder (a container's /data): its copy if it has one
        if (Path(env) / CORPUS_FILE).is_file():
            return Path(env) / CORPUS_FILE
    elif env:
        p = Path(env)
        if not p.is_file():
            raise CorpusError(f"{ENV_CORPUS} points to {p}, which is not a file. {how_to_get()}")
        return p
    if BESIDE_CLONE.is_file():
        return BESIDE_CLONE
    cached = cache_dir() / CORPUS_FILE
    if cached.is_file():
        return cached
    if not download:
        raise CorpusError(f"The corpus is not cached yet. {how_to_get()}")
    return download_corpus(url, cached, timeout)


def load_corpus(path: str | os.PathLike | None = None, download: bool = True, url: str = CORPUS_URL,
                timeout: float = 30.0) -> str:
    """The Time Machine as a string. An explicit path or RNNLAB_CORPUS may hold any UTF-8 text of your
    choice; the cached and downloaded copies are checked against the known SHA-1."""
    found = find_corpus(path, download, url, timeout)
    explicit = path is not None or (bool(os.environ.get(ENV_CORPUS)) and not Path(os.environ[ENV_CORPUS]).is_dir())
    return _read_text(found, check_sha1=not explicit)   # a copy in a folder is The Time Machine: checked


def corpus_available() -> bool:
    """True when load_corpus would succeed without the network."""
    try:
        find_corpus(download=False)
        return True
    except CorpusError:
        return False


def validate_upload(data: bytes, max_bytes: int = MAX_UPLOAD_BYTES) -> str:
    """A learner's uploaded file as text, or CorpusError saying what is wrong with it."""
    if not isinstance(data, (bytes, bytearray)):
        raise CorpusError(_("The upload must be the bytes of a .txt file."))
    if len(data) == 0:
        raise CorpusError(_("The uploaded file is empty."))
    if len(data) > max_bytes:
        raise CorpusError(_("The uploaded file has {n:,} bytes; the limit is {most:,}. Upload a shorter text.").format(
            n=len(data), most=max_bytes))
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # a UTF-16 byte-order mark (Windows' "Unicode")
        raise CorpusError(_("The uploaded file is UTF-16 text (or starts like it), not UTF-8: save it as UTF-8 "
                            "(in most editors: Save as, Encoding: UTF-8) and upload it again."))
    head = bytes(data[:65536])
    if b"\x00" in head:
        if head[1::2].count(0) > 0.9 * len(head[1::2]) or head[0::2].count(0) > 0.9 * len(head[0::2]):
            raise CorpusError(_("The uploaded file looks like UTF-16 text without a byte-order mark: save it as "
                                "UTF-8 (in most editors: Save as, Encoding: UTF-8) and upload it again."))
        raise CorpusError(_("The uploaded file looks binary (it contains NUL bytes): upload plain text."))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CorpusError(_("The uploaded file is not UTF-8 text (bad byte at position {at}; perhaps Latin-1 or "
                            "Windows-1252). Save it as UTF-8 and upload it again.").format(at=exc.start)) from None
    control = sum(1 for ch in text[:65536] if ord(ch) < 32 and ch not in "\n\r\t\f")
    if control > 0.01 * min(len(text), 65536):
        raise CorpusError(_("The uploaded file looks binary (many control characters): upload plain text."))
    if len(text.strip()) < MIN_UPLOAD_CHARS:
        raise CorpusError(_("The uploaded text is too short ({n} characters); give at least {least}.").format(
            n=len(text.strip()), least=MIN_UPLOAD_CHARS))
    if len(set(text)) < MIN_DISTINCT_CHARS:
        raise CorpusError(_("The uploaded text uses only {n} distinct characters; a language model needs at least "
                            "{least}.").format(n=len(set(text)), least=MIN_DISTINCT_CHARS))
    return text


_NOT_LETTERS = re.compile(r"[^a-z]+")
_NOT_KEPT = re.compile(r"[^a-z0-9.,;:!?'\"()\-\n ]+")
_SPACES = re.compile(r"[ \t\r\f\v]+")

CLEANINGS = ("letters", "punctuation")


def clean_letters(text: str) -> str:
    """The book's character setup: lower case; every run of non-letters becomes one space."""
    if not isinstance(text, str):
        raise ValueError("text must be a string.")
    return _NOT_LETTERS.sub(" ", text.lower())


def clean_keep_punctuation(text: str) -> str:
    """Lower case, keeping digits, common punctuation and line breaks; runs of anything else or of
    spaces become one space, and three or more line breaks become two."""
    if not isinstance(text, str):
        raise ValueError("text must be a string.")
    text = text.lower().replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    text = text.replace("\u2014", "-").replace("\u2013", "-")
    text = _NOT_KEPT.sub(" ", text)
    text = _SPACES.sub(" ", text)
    text = re.sub(r" *\n *", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text)


def clean(text: str, how: str = "letters") -> str:
    if how == "letters":
        return clean_letters(text)
    if how == "punctuation":
        return clean_keep_punctuation(text)
    raise ValueError(f"cleaning must be one of {', '.join(CLEANINGS)}; got {how!r}.")
