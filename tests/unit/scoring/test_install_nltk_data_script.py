"""scripts/install_nltk_data.sh: where WordNet comes from, in order, for a user without root.

The script runs as a subprocess with a PATH that holds only stand-ins (``id``, ``sudo``, ``apt-get``,
``dpkg-deb``, each recording its calls) and links to the few real tools it needs, so the real apt-get on
this machine is never called. ``PYTHON`` is a stand-in too: it records the ``-m medfc.scoring.nltk_data``
call, and runs the script's downloader snippet with a real interpreter and a fake ``nltk`` module that
is offline or serves a ``wordnet.zip``. Nothing touches the network or installs anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
SCRIPT = REPO_ROOT / "scripts" / "install_nltk_data.sh"
BASH = shutil.which("bash")
REAL_TOOLS = ("cat", "dirname", "env", "mkdir", "mktemp", "mv", "rm", "timeout")
DEBS = ("wordnet-base_1%3a3.0-37_all.deb", "wordnet-sense-index_1%3a3.0-37_all.deb")

pytestmark = pytest.mark.skipif(
    BASH is None or any(shutil.which(t) is None for t in REAL_TOOLS), reason="needs bash and coreutils"
)

FAKE_NLTK = '''
import os, pathlib, zipfile
def download(package, download_dir=None, **kwargs):
    if os.environ["FAKE_NLTK"] == "offline":
        raise ValueError("Error loading wordnet: <urlopen error [Errno -2] Name or service not known>")
    corpora = pathlib.Path(download_dir, "corpora")
    corpora.mkdir(parents=True)
    with zipfile.ZipFile(corpora / "wordnet.zip", "w") as zf:  # as NLTK's server ships it, unextracted
        zf.writestr("wordnet/data.noun", "noun data\\n")
        zf.writestr("wordnet/index.sense", "sense index\\n")
    return True
'''

# each stand-in appends "<cwd> <args>" to $CALLS/<name>
STANDINS = {
    "id": 'if [ "$1" = "-u" ]; then echo "$FAKE_UID"; else echo "uid=$FAKE_UID"; fi',
    "sudo": "exit 1",  # no passwordless sudo
    "apt-get": '''
case " $* " in
  *" download "*)
    [ "$FAKE_APT" = ok ] || { echo "E: Unable to locate package" >&2; exit 100; }
    echo base > wordnet-base_1%3a3.0-37_all.deb; echo sense > wordnet-sense-index_1%3a3.0-37_all.deb ;;
  *" install "*)
    mkdir -p "$MEDFC_WORDNET_SYSTEM_DIR"; echo n > "$MEDFC_WORDNET_SYSTEM_DIR/data.noun"
    echo s > "$MEDFC_WORDNET_SYSTEM_DIR/index.sense" ;;
esac''',
    "dpkg-deb": '''
[ "$1" = -x ] || exit 2
mkdir -p "$3/usr/share/wordnet"
case "$2" in
  *wordnet-base_*) echo n > "$3/usr/share/wordnet/data.noun" ;;
  *wordnet-sense-index_*) echo s > "$3/usr/share/wordnet/index.sense" ;;
esac''',
}


class Run:
    def __init__(self, tmp_path: Path):
        self.tmp = tmp_path
        self.bin = tmp_path / "bin"
        self.calls = tmp_path / "calls"
        self.home = tmp_path / "home"
        self.system = tmp_path / "system-wordnet"  # absent unless a test makes it
        self.user_copy = self.home / ".local" / "share" / "medfc" / "wordnet"
        self.out = tmp_path / "nltk_data"
        for d in (self.bin, self.calls, self.home):
            d.mkdir()
        for tool in REAL_TOOLS:
            (self.bin / tool).symlink_to(shutil.which(tool))
        (tmp_path / "fakenltk").mkdir()
        (tmp_path / "fakenltk" / "nltk.py").write_text(FAKE_NLTK)
        self.python = self._script(tmp_path / "python", f'''
if [ "$1" = "-" ]; then exec "{sys.executable}" "$@"; fi
exit 0''', "python")

    def _script(self, path: Path, body: str, name: str) -> Path:
        path.write_text(f'#!{BASH}\necho "$PWD $*" >> "$CALLS/{name}"\n{body}\n')
        path.chmod(0o755)
        return path

    def standins(self, *names: str) -> None:
        for name in names:
            self._script(self.bin / name, STANDINS[name], name)

    def __call__(self, uid: int = 1000, apt: str = "ok", nltk: str = "offline", **env: str):
        environ = {
            "PATH": str(self.bin), "HOME": str(self.home), "CALLS": str(self.calls),
            "PYTHON": str(self.python), "PYTHONPATH": str(self.tmp / "fakenltk"),
            "MEDFC_WORDNET_SYSTEM_DIR": str(self.system), "MEDFC_NLTK_DOWNLOAD_TIMEOUT": "2",
            "FAKE_UID": str(uid), "FAKE_APT": apt, "FAKE_NLTK": nltk, **env,
        }
        return subprocess.run([BASH, str(SCRIPT), str(self.out)], env=environ, capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)

    def calls_of(self, name: str) -> list[str]:
        f = self.calls / name
        return f.read_text().splitlines() if f.exists() else []

    def built_from(self) -> str:
        """The --wordnet-src the script handed to python -m medfc.scoring.nltk_data."""
        (call,) = [c for c in self.calls_of("python") if "-m medfc.scoring.nltk_data" in c]
        assert f"-m medfc.scoring.nltk_data {self.out} --wordnet-src " in call
        return call.split("--wordnet-src ", 1)[1]


@pytest.fixture
def run(tmp_path):
    return Run(tmp_path)


def test_unprivileged_without_system_copy_unpacks_debian_packages(run):
    run.standins("id", "sudo", "apt-get", "dpkg-deb")
    proc = run()
    assert proc.returncode == 0, proc.stderr
    # NLTK's downloader was tried first (offline: it gave up), then apt-get download, in a temp dir
    # inside the user's data folder; no apt-get install, no sudo apt-get
    assert len([c for c in run.calls_of("python") if c.split()[1] == "-"]) == 1
    (apt,) = run.calls_of("apt-get")
    cwd, args = apt.split(" ", 1)
    assert args == "download wordnet-base wordnet-sense-index"
    assert Path(cwd).parent == run.user_copy.parent and Path(cwd).name.startswith(".wordnet-tmp.")
    dpkg = [c.split()[1:] for c in run.calls_of("dpkg-deb")]
    assert sorted(Path(deb).name for _, deb, _ in dpkg) == sorted(DEBS)
    assert all(x == "-x" and Path(dest).parent == Path(cwd) for x, _, dest in dpkg)
    assert run.calls_of("sudo") == []
    # the unpacked WordNet is the user copy, and that folder is what the python module copies from
    assert run.built_from() == str(run.user_copy)
    assert (run.user_copy / "data.noun").read_text() == "n\n" and (run.user_copy / "index.sense").is_file()
    assert [p.name for p in run.user_copy.parent.iterdir()] == ["wordnet"]  # temp folders removed


def test_a_copy_on_disk_is_used_without_fetching(run):
    run.standins("id", "sudo", "apt-get", "dpkg-deb")
    run.user_copy.mkdir(parents=True)
    (run.user_copy / "data.noun").write_text("n")
    (run.user_copy / "index.sense").write_text("s")
    proc = run()
    assert proc.returncode == 0, proc.stderr
    assert run.built_from() == str(run.user_copy)
    # the system copy, when there, comes first
    run.system.mkdir()
    for name in ("data.noun", "index.sense"):
        (run.system / name).write_text("x")
    (run.calls / "python").unlink()
    proc = run()
    assert proc.returncode == 0, proc.stderr
    assert run.built_from() == str(run.system)
    assert run.calls_of("apt-get") == [] and run.calls_of("dpkg-deb") == []
    assert [c for c in run.calls_of("python") if c.split()[1] == "-"] == []


def test_nltk_downloader_zip_is_unpacked_into_the_user_copy(run):
    run.standins("id", "sudo", "apt-get", "dpkg-deb")
    proc = run(nltk="online")
    assert proc.returncode == 0, proc.stderr
    assert run.calls_of("apt-get") == []
    assert run.built_from() == str(run.user_copy)
    assert (run.user_copy / "data.noun").read_text() == "noun data\n"
    assert [p.name for p in run.user_copy.parent.iterdir()] == ["wordnet"]


def test_root_falls_back_to_apt_get_install(run):
    run.standins("id", "sudo", "apt-get", "dpkg-deb")
    proc = run(uid=0, apt="broken")  # apt-get download fails, also with private package lists
    assert proc.returncode == 0, proc.stderr
    args = [c.split(" ", 1)[1] for c in run.calls_of("apt-get")]
    assert args[0] == "download wordnet-base wordnet-sense-index"
    assert args[-2:] == ["update", "install -y --no-install-recommends wordnet-base wordnet-sense-index"]
    assert run.built_from() == str(run.system)


def test_no_way_left_is_one_error_naming_both_ways(run):
    run.standins("id", "sudo")  # no apt-get, no dpkg-deb; NLTK's server unreachable
    proc = run()
    assert proc.returncode == 1
    assert proc.stderr.count("error:") == 1
    assert "NLTK's downloader" in proc.stderr
    assert "apt-get download wordnet-base wordnet-sense-index" in proc.stderr and "dpkg-deb -x" in proc.stderr
    assert "MEDFC_WORDNET_DIR=" in proc.stderr
    assert [c for c in run.calls_of("python") if "medfc.scoring.nltk_data" in c] == []
    assert not run.user_copy.exists() and [p.name for p in run.user_copy.parent.iterdir()] == []


def test_skip_apt_never_calls_apt_get(run):
    run.standins("id", "sudo", "apt-get", "dpkg-deb")
    proc = run(uid=0, SKIP_APT="1")
    assert proc.returncode == 1
    assert "SKIP_APT=1" in proc.stderr and "apt-get download" in proc.stderr
    assert run.calls_of("apt-get") == [] and run.calls_of("dpkg-deb") == []


def test_an_incomplete_user_copy_is_reported_not_removed(run):
    run.standins("id", "sudo", "apt-get", "dpkg-deb")
    run.user_copy.mkdir(parents=True)
    (run.user_copy / "mine.txt").write_text("not WordNet")
    proc = run()
    assert proc.returncode == 1 and "lacks data.noun or index.sense" in proc.stderr
    assert (run.user_copy / "mine.txt").is_file() and run.calls_of("apt-get") == []
