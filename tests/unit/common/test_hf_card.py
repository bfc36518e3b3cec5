"""Hugging Face dataset-card metadata (issue 43, item 5): YAML front matter the Hub reads."""

from __future__ import annotations

import yaml

from medfc.common.hf_card import front_matter, relative_files, size_category


def test_front_matter_is_yaml_with_the_hubs_keys_and_relative_data_files(tmp_path):
    files = relative_files(tmp_path / "card" / "README.md", {"train": tmp_path / "card" / "train.csv", "test": tmp_path / "data" / "t: x.csv"})
    assert files == {"train": "train.csv", "test": "../data/t: x.csv"}
    text = front_matter(license="mit", languages=["en"], task_categories=["text-classification"], n_rows=12_345, data_files=files,
                        pretty_name='Clini"Fact', task_ids=["fact-checking"])
    assert text.startswith("---\n") and text.endswith("---\n\n")
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta == {"pretty_name": 'Clini"Fact', "license": "mit", "language": ["en"], "task_categories": ["text-classification"],
                    "task_ids": ["fact-checking"], "size_categories": ["10K<n<100K"],
                    "configs": [{"config_name": "default", "data_files": [{"split": "train", "path": "train.csv"},
                                                                          {"split": "test", "path": "../data/t: x.csv"}]}]}
    assert [size_category(n) for n in (0, 999, 1000, 10**7)] == ["n<1K", "n<1K", "1K<n<10K", "n>10M"]
