"""Reading a Hugging Face dataset as an input table (``hf-dataset:NAME[:SPLIT]`` or ``hf-dataset:DIR[:SPLIT]``):
the ``datasets`` package is needed only here, and only when a run names such a source
(:func:`counterfair.io.read_table`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .errors import InputError

if TYPE_CHECKING:
    import pandas as pd

HF_DATASET = "hf-dataset:"


def read_hf_dataset(spec: str) -> pd.DataFrame:
    """``hf-dataset:NAME[:SPLIT]`` (the hub, with the user's cache and network settings) or
    ``hf-dataset:DIR[:SPLIT]`` (a dataset saved with ``save_to_disk``), as a DataFrame; split ``train`` by default."""
    try:
        import datasets
    except ImportError as err:
        from .errors import ModelNotAvailable

        needs = "reading Hugging Face datasets needs the datasets package"
        raise ModelNotAvailable(needs, pip="pip install datasets") from err
    name, _, split = spec[len(HF_DATASET) :].partition(":")
    split = split or "train"
    try:
        if Path(name).is_dir():
            loaded = datasets.load_from_disk(name)
            data = loaded[split] if isinstance(loaded, datasets.DatasetDict) else loaded
        else:
            data = datasets.load_dataset(name, split=split)
    except Exception as err:
        raise InputError(f"{spec}: cannot load the dataset ({type(err).__name__}: {err})") from err
    return data.to_pandas()
