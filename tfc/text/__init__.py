"""Text utilities shared by the scorers: sentence splitting, token-budgeted chunking, claim cleaning.

(``tfc.text.words`` -- word tokenisation for length statistics -- belongs to the data layer.)
"""
from __future__ import annotations

from tfc.text.chunking import Chunks, chunk_many, chunk_text, count_tokens
from tfc.text.claims import clean_claim, clean_claims
from tfc.text.sentences import resolve_splitter, split_many, split_sentences

__all__ = ["Chunks", "chunk_many", "chunk_text", "count_tokens", "clean_claim", "clean_claims",
           "resolve_splitter", "split_many", "split_sentences"]
