"""Errors of the data layer (all subclasses of ValueError/OSError so callers can catch broadly)."""
from __future__ import annotations


class DataError(ValueError):
    """Base class of the data layer's errors."""


class ChecksumError(DataError):
    """A raw file's sha256 differs from ``data/MANIFEST`` (the builders refuse to read it)."""


class MissingRawFileError(DataError, FileNotFoundError):
    """A raw file listed in the manifest is not in the mirror (``rel``: its path inside the mirror)."""

    rel: str | None = None


class LabelOnlyError(DataError):
    """The dataset has labels (and imported peer scores) but no text offline."""


class UnavailableError(DataError):
    """The dataset is listed for completeness but cannot be built offline."""


class UnknownDatasetError(DataError, KeyError):
    """No dataset of that name is registered."""

    def __str__(self):  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""
