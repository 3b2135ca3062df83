"""#35: the YAML/JSON files a user hands counterfair (configs, packs, placebo lists) cannot blow up memory or time:
aliases are refused, size and item count are capped, binary content and unknown languages are named."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from counterfair.cli import app
from counterfair.errors import ConfigError
from counterfair.lexicons.attributes import load_attribute
from counterfair.yamlfiles import read_mapping

BOMB = "".join(
    [
        'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n',
        "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n",
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n",
        "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
        "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n",
        "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n",
        "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n",
        "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n",
    ]
)


def test_an_alias_bomb_is_refused_in_configs_and_packs(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(BOMB)
    with pytest.raises(ConfigError, match=r"line 2: a YAML alias \(\*a\); aliases are not accepted"):
        read_mapping(bomb, "--config")
    done = CliRunner().invoke(app, ["audit", "--demo", "--config", str(bomb), "--out", str(tmp_path / "run")])
    assert isinstance(done.exception, ConfigError) and "--config" in str(done.exception)
    assert not (tmp_path / "run").exists()
    done = CliRunner().invoke(app, ["attributes", "validate", str(bomb)])
    assert isinstance(done.exception, ConfigError) and "alias" in str(done.exception)


def test_size_items_binary_encoding_and_language_are_named(tmp_path: Path) -> None:
    path = tmp_path / "pack.yaml"
    path.write_bytes(b"name: x\x00\x01\x02")
    with pytest.raises(ConfigError, match="a binary file"):
        read_mapping(path, "pack")
    path.write_bytes("name: café".encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        read_mapping(path, "pack")
    path.write_text("name: x\nablation:\n" + "".join(f"  - t{i}\n" for i in range(20_001)))
    with pytest.raises(ConfigError, match=r"20,00\d list items and keys; at most 20,000"):
        read_mapping(path, "pack")
    with pytest.raises(ConfigError, match="at most 1,000 are read"):
        read_mapping(path, "pack", max_bytes=1000)
    path.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="expected a mapping of keys to values at the top, got list"):
        read_mapping(path, "pack")
    path.write_text("name: x\nkind: wordlist\nlanguage: xx\nsubject: x\nablation: [a]\nsubstitution: {a: b}\n")
    with pytest.raises(ConfigError, match="'language': unknown language 'xx'"):
        load_attribute(str(path))
    path.write_text("\ufeffname: x\nkind: wordlist\nsubject: things\nablation: [apple]\nsubstitution: {apple: pear}\n")
    assert load_attribute(str(path)).name == "x"  # a byte-order mark is fine


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_a_mapping_or_one_config_error(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "config.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    outcome: object
    try:
        outcome = read_mapping(path, "--config")
    except ConfigError as err:
        outcome = str(err)
    assert isinstance(outcome, dict) or str(outcome).startswith(f"--config {path}: ")


def test_a_pack_or_config_that_is_a_device_or_grows_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    """#87 B5: a pack or --config that is a symbolic link to /dev/zero passed the size cap (``stat()`` says 0 bytes)
    and was read until MemoryError. Only a regular file is read, and never more than the cap and one byte."""
    from counterfair.errors import ConfigError
    from counterfair.lexicons.attributes import load_identity_set
    from counterfair.yamlfiles import read_capped, read_mapping

    zero = tmp_path / "pack.yaml"
    zero.symlink_to("/dev/zero")
    with pytest.raises(ConfigError, match="not a regular file"):
        read_mapping(zero, "attribute pack")
    words = tmp_path / "terms.txt"
    words.symlink_to("/dev/zero")
    with pytest.raises(ConfigError, match="not a regular file"):
        load_identity_set(str(words))
    with pytest.raises(ConfigError, match="not a regular file"):
        read_capped(tmp_path, "--config")
    pipe = tmp_path / "config.yaml"
    os.mkfifo(pipe)  # opening it to read would wait for a writer: refused before it is opened
    with pytest.raises(ConfigError, match="not a regular file"):
        read_mapping(pipe, "--config")
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: 1\n" + b"#" * 200)
    with pytest.raises(ConfigError, match="more than 100 bytes"):
        read_mapping(big, "--config", max_bytes=100)
    assert read_mapping(big, "--config", max_bytes=1000) == {"a": 1}


def test_a_key_given_twice_is_refused_naming_both_lines(tmp_path: Path) -> None:
    """#87 B12: YAML keeps the last of two equal keys silently (a term list or a rule written twice lost the first)."""
    pack = tmp_path / "pack.yaml"
    pack.write_text("name: mine\nterms:\n  - gay\nterms:\n  - straight\n")
    with pytest.raises(ConfigError, match=r"line 4: the key 'terms' is given twice \(also on line 2\)"):
        read_mapping(pack, "attribute pack")
    nested = tmp_path / "nested.yaml"
    nested.write_text("groups:\n  a: [x]\n  b: [y]\n  a: [z]\n")
    with pytest.raises(ConfigError, match="'a' is given twice"):
        read_mapping(nested, "attribute pack")
