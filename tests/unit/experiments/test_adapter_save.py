"""Fine-tuned adapters are written atomically: a save killed with SIGKILL halfway, or a rerun killed the same
way, leaves the adapters of the last complete save, never a mix of old and new files; the next complete save
replaces them whole and leaves no temporary folder behind."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from medfc.experiments.clinifact.fine_tune import save_adapters


def _lora(base: Path, seed: int):
    """A LoRA model on the tiny Llama whose adapters are seeded (not the zero init: two seeds differ)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    return get_peft_model(AutoModelForCausalLM.from_pretrained(base),
                          LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights=False))


def _killed_save(model, directory: Path) -> int:
    """save_adapters in a forked process (the model already loaded) that is killed with SIGKILL in the middle
    of the save: peft's files written, the weights then cut in half and the config not there yet. Returns
    the signal that ended it."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            real = model.save_pretrained

            def dying(folder, **kw):
                real(folder, **kw)
                weights = Path(folder) / "adapter_model.safetensors"
                weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
                (Path(folder) / "adapter_config.json").unlink()
                os.kill(os.getpid(), signal.SIGKILL)

            model.save_pretrained = dying
            save_adapters(model, directory)
        finally:
            os._exit(3)  # not killed: the test sees exit status 3
    deadline = time.monotonic() + 120
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.WTERMSIG(status) if os.WIFSIGNALED(status) else -os.WEXITSTATUS(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked save did not end")
        time.sleep(0.05)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_a_killed_save_and_a_killed_rerun_leave_the_last_complete_adapters(tiny_llama, tmp_path):
    old, new = _lora(tiny_llama, 1), _lora(tiny_llama, 2)
    expected = {seed: _files(save_adapters(m, tmp_path / f"alone{seed}")) for seed, m in ((1, old), (2, new))}
    assert expected[1] != expected[2] and {"adapter_model.safetensors", "adapter_config.json"} <= set(expected[1])

    adapters = tmp_path / "fine_tuned" / "tinyllama" / "adapters"
    save_adapters(old, adapters)
    assert _files(adapters) == expected[1]
    for attempt in range(2):  # the save of new adapters killed halfway, then its rerun killed the same way
        assert _killed_save(new, adapters) == signal.SIGKILL
        assert _files(adapters) == expected[1], f"attempt {attempt}: the folder holds a mix of two saves"

    save_adapters(new, adapters)
    assert _files(adapters) == expected[2]
    assert sorted(p.name for p in adapters.parent.iterdir()) == ["adapters"]  # no temporary folder left


def test_an_atomic_directory_keeps_the_old_folder_on_an_error_and_swaps_whole(tmp_path):
    from medfc.common.io import atomic_directory

    target = tmp_path / "out"
    with atomic_directory(target) as tmp:
        (tmp / "a.txt").write_text("one")
    assert _files(target) == {"a.txt": b"one"}
    with pytest.raises(RuntimeError), atomic_directory(target) as tmp:
        (tmp / "b.txt").write_text("two")
        raise RuntimeError("the save failed")
    assert _files(target) == {"a.txt": b"one"} and sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    (tmp_path / ".out.dead.tmp").mkdir()  # what a killed save leaves
    with atomic_directory(target) as tmp:
        (tmp / "b.txt").write_text("two")
    assert _files(target) == {"b.txt": b"two"} and sorted(p.name for p in tmp_path.iterdir()) == ["out"]
