"""Golden questions of the three rule sets of rule-based QG, by the ``qg_rules`` values the score caches' signatures
name: ``"v1"`` the sentence rules, ``"v2"`` the clause rules, ``"v3"`` the repaired clause rules (current). The
expected questions were written from the rule sets' output when the modules and functions were renamed from
version numbers to what they do; committed score caches were computed with each rule set, so any change to one
of these questions is a change to those caches' meaning, not a refactoring."""
import pytest

from tfc.scorers import qgqa
from tfc.scorers.qgqa import (RULE_SETS, RuleQG, clause_questions, parse, reading_text, repaired_clause_questions,
                              sentence_questions)

# (sentence as given, answer, {qg_rules value: [moved question, in-situ question] (fewer where a rule set asks
# one only)}); each rule set reads the sentence as the scorers do (reading_text: detokenised under "v3")
GOLDEN = [
    ('Barack Obama was born in Hawaii on August 4, 1961.', 'Barack Obama', {
        "v1": ['Who was born in Hawaii on August 4, 1961?'],
        "v2": ['Who was born in Hawaii on August 4, 1961?'],
        "v3": ['Who was born in Hawaii on August 4, 1961?'],
    }),
    ('Barack Obama was born in Hawaii on August 4, 1961.', 'Hawaii', {
        "v1": ['Where was Barack Obama born on August 4, 1961?',
               'Barack Obama was born where on August 4, 1961?'],
        "v2": ['Where was Barack Obama born on August 4, 1961?',
               'Barack Obama was born where on August 4, 1961?'],
        "v3": ['Where was Barack Obama born on August 4, 1961?',
               'Barack Obama was born where on August 4, 1961?'],
    }),
    ('Barack Obama was born in Hawaii on August 4, 1961.', 'August 4, 1961', {
        "v1": ['When was Barack Obama born in Hawaii?', 'Barack Obama was born in Hawaii when?'],
        "v2": ['When was Barack Obama born in Hawaii?', 'Barack Obama was born in Hawaii when?'],
        "v3": ['When was Barack Obama born in Hawaii?', 'Barack Obama was born in Hawaii when?'],
    }),
    ('The river does not flow through Paris, but it passes near Lyon.', 'Paris', {
        "v1": ['What does the river not flow through, but it passes near Lyon?',
               'The river does not flow through what, but it passes near Lyon?'],
        "v2": ['What does the river not flow through?', 'The river does not flow through what?'],
        "v3": ['What does the river not flow through?', 'The river does not flow through what?'],
    }),
    ('The river does not flow through Paris, but it passes near Lyon.', 'Lyon', {
        "v1": ['What does the river not flow through Paris, but it passes near?',
               'The river does not flow through Paris, but it passes near what?'],
        "v2": ['What does it pass near?', 'It passes near what?'],
        "v3": ['What does it pass near?', 'It passes near what?'],
    }),
    ('The scientist who discovered penicillin was Alexander Fleming.', 'penicillin', {
        "v1": ['What was the scientist who discovered penicillin Alexander Fleming?',
               'The scientist who discovered what was Alexander Fleming?'],
        "v2": ['The scientist who discovered what was Alexander Fleming?'],
        "v3": ['The scientist who discovered what was Alexander Fleming?'],
    }),
    ('The scientist who discovered penicillin was Alexander Fleming.', 'Alexander Fleming', {
        "v1": ['Who was the scientist who discovered penicillin?',
               'The scientist who discovered penicillin was who?'],
        "v2": ['Who was the scientist who discovered penicillin?',
               'The scientist who discovered penicillin was who?'],
        "v3": ['Who was the scientist who discovered penicillin?',
               'The scientist who discovered penicillin was who?'],
    }),
    ('According to the BBC, the movie has earned $50 million in Europe.', 'BBC', {
        "v1": ['What has the movie According to the, earned $ 50 million in Europe?',
               'According to the what, the movie has earned $ 50 million in Europe?'],
        "v2": ['What has the movie earned $ 50 million in Europe, according to the?',
               'According to the what, the movie has earned $ 50 million in Europe?'],
        "v3": ['What has the movie earned $ 50 million in Europe, according to?',
               'According to what, the movie has earned $ 50 million in Europe?'],
    }),
    ('According to the BBC, the movie has earned $50 million in Europe.', '$50 million', {
        "v1": ['How much has the movie According to the BBC, earned in Europe?',
               'According to the BBC, the movie has earned how much in Europe?'],
        "v2": ['How much has the movie earned in Europe, according to the BBC?',
               'According to the BBC, the movie has earned how much in Europe?'],
        "v3": ['How much has the movie earned in Europe, according to the BBC?',
               'According to the BBC, the movie has earned how much in Europe?'],
    }),
    ('According to the BBC, the movie has earned $50 million in Europe.', 'Europe', {
        "v1": ['Where has the movie According to the BBC, earned $ 50 million?',
               'According to the BBC, the movie has earned $ 50 million where?'],
        "v2": ['Where has the movie earned $ 50 million, according to the BBC?',
               'According to the BBC, the movie has earned $ 50 million where?'],
        "v3": ['Where has the movie earned $ 50 million, according to the BBC?',
               'According to the BBC, the movie has earned $ 50 million where?'],
    }),
    ("Megatron's music video has over 2 million views on YouTube.", 'Megatron', {
        "v1": ["Who does Megatron's music video have over 2 million views on YouTube?",
               "Who 's music video has over 2 million views on YouTube?"],
        "v2": ['Whose music video has over 2 million views on YouTube?'],
        "v3": ['Whose music video has over 2 million views on YouTube?'],
    }),
    ("Megatron's music video has over 2 million views on YouTube.", 'over 2 million', {
        "v1": ["How many views does Megatron's music video have on YouTube?",
               "Megatron 's music video has how many views on YouTube?"],
        "v2": ["How many views does Megatron's music video have on YouTube?",
               "Megatron 's music video has how many views on YouTube?"],
        "v3": ["How many views does Megatron's music video have on YouTube?",
               "Megatron's music video has how many views on YouTube?"],
    }),
    ('The 2012 NHL Entry Draft was held in Pittsburgh.', '2012', {
        "v1": ['When was the 2012 NHL Entry Draft held in Pittsburgh?',
               'The when NHL Entry Draft was held in Pittsburgh?'],
        "v2": ['The when NHL Entry Draft was held in Pittsburgh?'],
        "v3": ['Which NHL Entry Draft was held in Pittsburgh?'],
    }),
    ('The 2012 NHL Entry Draft was held in Pittsburgh.', 'Pittsburgh', {
        "v1": ['Where was the 2012 NHL Entry Draft held?', 'The 2012 NHL Entry Draft was held where?'],
        "v2": ['Where was the 2012 NHL Entry Draft held?', 'The 2012 NHL Entry Draft was held where?'],
        "v3": ['Where was the 2012 NHL Entry Draft held?', 'The 2012 NHL Entry Draft was held where?'],
    }),
    ('Razorlight is an American rock band formed in London in 2004.', 'American', {
        "v1": ['Who is razorlight an rock band formed in London in 2004?',
               'Razorlight is an who rock band formed in London in 2004?'],
        "v2": ['Who is Razorlight an rock band formed in London in 2004?',
               'Razorlight is an who rock band formed in London in 2004?'],
        "v3": ['What kind of rock band is Razorlight formed in London in 2004?',
               'Razorlight is what kind of rock band formed in London in 2004?'],
    }),
    ('Razorlight is an American rock band formed in London in 2004.', 'London', {
        "v1": ['Where is razorlight an American rock band formed in 2004?',
               'Razorlight is an American rock band formed where in 2004?'],
        "v2": ['Where is Razorlight an American rock band formed in 2004?',
               'Razorlight is an American rock band formed where in 2004?'],
        "v3": ['Razorlight is an American rock band formed where in 2004?'],
    }),
    ('Razorlight is an American rock band formed in London in 2004.', '2004', {
        "v1": ['When is razorlight an American rock band formed in London?',
               'Razorlight is an American rock band formed in London when?'],
        "v2": ['When is Razorlight an American rock band formed in London?',
               'Razorlight is an American rock band formed in London when?'],
        "v3": ['Razorlight is an American rock band formed in London when?'],
    }),
    ('There are only 49 zoos in China.', 'only 49', {
        "v1": ['How many zoos are there in China?', 'There are how many zoos in China?'],
        "v2": ['How many zoos are there in China?', 'There are how many zoos in China?'],
        "v3": ['There are how many zoos in China?'],
    }),
    ('There are only 49 zoos in China.', 'China', {
        "v1": ['Where are there only 49 zoos?', 'There are only 49 zoos where?'],
        "v2": ['Where are there only 49 zoos?', 'There are only 49 zoos where?'],
        "v3": ['There are only 49 zoos where?'],
    }),
    ("yeah, i ' ve never been to Japan but i would love to go.", 'Japan', {
        "v1": ["Where ' i ve never been but i would love to go?",
               "I ' ve never been where but i would love to go?"],
        "v2": ["Where ' i ve never been?", "I ' ve never been where?"],
        "v3": ['Where have i never been?', "I've never been where?"],
    }),
    ("Well, the team didn't win a single game in the 1998 season.", 'the team', {
        "v1": ["What didn't win a single game in the 1998 season?",
               "Well, what did n't win a single game in the 1998 season?"],
        "v2": ["What did n't win a single game in the 1998 season?"],
        "v3": ["What didn't win a single game in the 1998 season?"],
    }),
    ("Well, the team didn't win a single game in the 1998 season.", 'the 1998 season', {
        "v1": ["When did the team Well, n't win a single game?",
               "Well, the team did n't win a single game when?"],
        "v2": ["When did the team n't win a single game, well?",
               "Well, the team did n't win a single game when?"],
        "v3": ["When did the teamn't win a single game?", "The team didn't win a single game when?"],
    }),
]


def test_rule_sets_by_cache_name():
    # the keys are the names in the committed caches' signatures; the functions say what each rule set does
    assert RULE_SETS == {"v1": sentence_questions, "v2": clause_questions, "v3": repaired_clause_questions}
    assert [RuleQG(rules=r).identity() for r in RULE_SETS] == [f"rule-qg-{r}+{qgqa.SPACY_MODEL}"
                                                             for r in ("v1", "v2", "v3")]


@pytest.mark.parametrize("rules", ["v1", "v2", "v3"])
def test_golden_questions(rules):
    texts = reading_text([s for s, _, _ in GOLDEN], rules)
    got = [[q for q, _ in qs] for qs in RuleQG(num_return=2, rules=rules).generate(texts, [a for _, a, _ in GOLDEN])]
    assert got == [want[rules] for _, _, want in GOLDEN]
    # the rule-set functions themselves, on the answer's first occurrence (as RuleQG locates a plain string)
    for doc, text, (_, a, want) in zip(parse(texts), texts, GOLDEN):
        i = text.find(a)
        assert RULE_SETS[rules](doc, i, i + len(a))[:2] == want[rules]


def test_repairs_flag_is_the_current_rule_set():
    text = reading_text(["yeah, i ' ve never been to Japan but i would love to go."], "v3")[0]
    doc, i = parse([text])[0], text.find("Japan")
    assert clause_questions(doc, i, i + 5, repairs=True) == repaired_clause_questions(doc, i, i + 5)
    assert clause_questions(doc, i, i + 5) != repaired_clause_questions(doc, i, i + 5)
