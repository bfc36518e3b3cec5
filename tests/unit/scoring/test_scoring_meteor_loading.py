"""What makes METEOR cheap to start changes no answer: nltk imported without scikit-learn and scipy.stats
(medfc.common.nltk_import), WordNet's files read by a faster line reader, its tables built with the
garbage collector paused (medfc.scoring.meteor)."""

from __future__ import annotations

import gc
import json
import os
import random
import subprocess
import sys
import warnings

from nltk.data import SeekableUnicodeStreamReader

from medfc.scoring import nltk_data
from medfc.scoring.meteor import _LineFile, english_wordnet

# one line ending of each kind NLTK's reader knows, a two-byte character, a last line without an ending
LINES = b"alpha 1\nbeta\r\ngamma\rdelta \xc3\x9c\x0cepsilon\n\nlast"


def test_the_line_reader_reads_as_nltks_reader(tmp_path):
    path = tmp_path / "data.noun"
    path.write_bytes(LINES)
    with open(path, "rb") as fh:
        theirs = list(SeekableUnicodeStreamReader(fh, "utf8"))
    with _LineFile(open(path, "rb"), "utf8") as ours:
        assert list(ours) == theirs == ["alpha 1\n", "beta\r\n", "gamma\r", "delta Ü\x0c", "epsilon\n", "\n", "last"]
    # by offset, as a synset is read: the same line and the same position after it, for every start
    with open(path, "rb") as fh, _LineFile(open(path, "rb"), "utf8") as ours:
        reader = SeekableUnicodeStreamReader(fh, "utf8")
        for offset in (0, 8, 14, 20, 29, 38, 39):
            reader.seek(offset)
            ours.seek(offset)
            assert (ours.readline(), ours.tell()) == (reader.readline(), reader.tell()), offset


def test_english_wordnet_has_nltks_tables_and_synsets(meteor):
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    collections = []
    count = lambda phase, info: collections.append(info["generation"]) if phase == "start" else None  # noqa: E731
    was_enabled, frozen = gc.isenabled(), gc.get_freeze_count()
    gc.callbacks.append(count)
    try:
        ours = english_wordnet()
    finally:
        gc.callbacks.remove(count)
    # one full collection before the load, none during it (about 470 without the pause), at most one young
    # collection once the collector is back; the collector as before, nothing frozen
    assert collections[0] == 2 and len(collections) <= 2
    assert gc.isenabled() == was_enabled and gc.get_freeze_count() == frozen
    class Plain(WordNetCorpusReader):  # NLTK's reader with NLTK's file reader; without its map of 3.0 onto 3.0
        def map_wn(self, version="wordnet"):
            return None

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # no multilingual reader: not needed for English
        theirs = Plain(str(nltk_data.nltk_data_dir() / "corpora" / "wordnet"), None)
    assert dict(ours._lemma_pos_offset_map) == dict(theirs._lemma_pos_offset_map)
    assert len(ours._lemma_pos_offset_map) == 147_306
    assert ours._exception_map == theirs._exception_map
    assert ours.satellite_offsets == theirs.satellite_offsets and ours._lexnames == theirs._lexnames
    words = random.Random(0).sample(sorted(theirs._lemma_pos_offset_map), 400)
    words += ["geese", "running", "better", "was", "feet", "studies", "trials", "reduced", "lowest"]
    synonyms = lambda wn, w: [(s.name(), [lemma.name() for lemma in s.lemmas()]) for s in wn.synsets(w)]  # noqa: E731
    for word in words:
        assert synonyms(ours, word) == synonyms(theirs, word), word
    # read by offset through tell/readline: every adverb synset in file order
    assert [s.name() for s in ours.all_synsets("r")] == [s.name() for s in theirs.all_synsets("r")]
    assert ours.map30 is None


# one fresh process each: nltk imported light (as the workflow's jobs do) or plainly; what they say and load
PROBE = """
import json, sys
light = sys.argv[1] == "light"
if light:
    from medfc.common.nltk_import import import_nltk
    nltk = import_nltk()
else:
    import nltk
from nltk.translate.meteor_score import single_meteor_score
from medfc.scoring.meteor import english_wordnet
wordnet = english_wordnet()
loaded = sorted(m for m in ("sklearn", "scipy.stats", "pandas") if m in sys.modules)
pairs = [("The trial reduced deaths in older patients.", "Mortality was lower among elderly participants."),
         ("Vitamin D does not prevent colds.", "No effect of vitamin D supplements on respiratory infections.")]
tok = nltk.word_tokenize
scores = [single_meteor_score(tok(ref), tok(hyp), wordnet=wordnet) for hyp, ref in pairs]
import sklearn, scipy.stats  # still importable in the process afterwards
print(json.dumps({"loaded": loaded, "tokens": [tok(h) for h, _ in pairs], "scores": scores}))
"""


def test_nltk_without_its_optional_libraries_gives_the_same_tokens_and_scores(meteor):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    light, plain = (json.loads(subprocess.run([sys.executable, "-c", PROBE, kind], capture_output=True, text=True,
                                              check=True, env=env).stdout) for kind in ("light", "plain"))
    assert light["loaded"] == [] and plain["loaded"] == ["pandas", "scipy.stats", "sklearn"]
    assert light["tokens"] == plain["tokens"] and light["tokens"][1][:4] == ["Vitamin", "D", "does", "not"]
    assert light["scores"] == plain["scores"] and all(0 < s < 1 for s in light["scores"])


def test_a_failed_nltk_import_leaves_the_optional_libraries_importable(tmp_path):
    (tmp_path / "nltk").mkdir()
    (tmp_path / "nltk" / "__init__.py").write_text("raise ImportError('half-installed nltk')\n")
    code = ("import sys\nfrom medfc.common.nltk_import import import_nltk\n"
            "try:\n    import_nltk()\nexcept ImportError as exc:\n    print(exc)\n"
            "print([n for n in ('sklearn', 'scipy.stats') if n in sys.modules])\nimport sklearn\nprint('sklearn ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}).stdout
    assert out.splitlines() == ["half-installed nltk", "[]", "sklearn ok"]
