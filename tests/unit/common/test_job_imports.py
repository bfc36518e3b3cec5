"""What a workflow job loads before it works: the miniature paper run has 80 experiment and 80 scoring jobs
(200 each at paper scale), each a fresh Python process, so a heavy import nobody uses costs minutes.
An encoder's experiment job does not load scikit-learn (imported where the TF-IDF and gradient-boosting
baselines use it: about 3 s of CPU a job); a score job does not load scipy.optimize (the AVeriTeC
matching imports it when it scores evidence: 1.5 s)."""

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("modules, absent", [
    ("medfc.experiments.steps, medfc.experiments.healthfc", ("sklearn", "scipy.stats")),
    ("medfc.scoring.steps", ("scipy.optimize", "sklearn")),
])
def test_a_job_imports_only_what_it_uses(modules, absent):
    code = f"import sys, {modules}; print(sorted(m for m in {absent!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.strip() == "[]"
