"""An encoder's job (80 of them in the miniature paper run, 200 at paper scale) does not load scikit-learn:
it is imported where the TF-IDF and gradient-boosting baselines use it (about 3 s of CPU a job)."""

import os
import subprocess
import sys


def test_the_experiment_steps_import_without_scikit_learn():
    code = "import sys, medfc.experiments.steps, medfc.experiments.healthfc; print(sorted(m for m in ('sklearn', 'scipy.stats') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.strip() == "[]"
