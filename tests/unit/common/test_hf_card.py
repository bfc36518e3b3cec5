"""Hugging Face dataset-card metadata: YAML front matter the Hub reads."""

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


def test_extra_configs_follow_the_default_one():
    text = front_matter(license="mit", languages=["en"], task_categories=["text-classification"], n_rows=3, data_files={"train": "train.csv"},
                        pretty_name="x", extra_configs={"parquet": {"train": "train.parquet"}, "instruction": {"train": "instruction/train.jsonl"}})
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta["configs"] == [{"config_name": "default", "data_files": [{"split": "train", "path": "train.csv"}]},
                               {"config_name": "parquet", "data_files": [{"split": "train", "path": "train.parquet"}]},
                               {"config_name": "instruction", "data_files": [{"split": "train", "path": "instruction/train.jsonl"}]}]
