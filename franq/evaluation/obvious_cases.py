"""Obvious cases for the verdict checks (issue 25): a passage that states a fact, an answer
that repeats it (supported, true) and one with that fact swapped (contradicted, false): a
city, a year, an author, a number, a material, a negation. Written for these checks
(general knowledge, stated in their passages); nothing is fitted on them. Read by
benchmarks/bench_verdicts.py and experiments/2026-11-24-verifier-candidates-v2-v4/bench_verifier_candidates.py."""
from __future__ import annotations

# (question, passage, supported answer, contradicted answer)
CASES = [
    ("What is the capital of Australia?",
     "Canberra is the capital city of Australia. Founded following the federation of the colonies of Australia as "
     "the seat of government for the new nation, it is the country's largest inland city.",
     "The capital of Australia is Canberra.", "The capital of Australia is Sydney."),
    ("When did the Berlin Wall fall?",
     "The Berlin Wall was a guarded concrete barrier that encircled West Berlin from 1961 to 1989. The wall fell on "
     "9 November 1989, when the East German government announced that citizens could cross the border.",
     "The Berlin Wall fell in 1989.", "The Berlin Wall fell in 1975."),
    ("Who wrote Pride and Prejudice?",
     "Pride and Prejudice is an 1813 novel of manners by the English author Jane Austen. It follows the character "
     "development of Elizabeth Bennet.",
     "Pride and Prejudice was written by Jane Austen.", "Pride and Prejudice was written by Charles Dickens."),
    ("How tall is Mount Everest?",
     "Mount Everest is Earth's highest mountain above sea level, located in the Himalayas. Its elevation of "
     "8,849 metres was most recently established in 2020 by Chinese and Nepali authorities.",
     "Mount Everest is 8,849 metres tall.", "Mount Everest is 3,200 metres tall."),
    ("What is the Statue of Liberty made of?",
     "The Statue of Liberty is a colossal neoclassical sculpture on Liberty Island in New York Harbor. The copper "
     "statue, a gift from the people of France, was designed by Frederic Auguste Bartholdi.",
     "The Statue of Liberty is made of copper.", "The Statue of Liberty is made of marble."),
    ("Is the Great Wall of China visible from the Moon with the naked eye?",
     "The Great Wall of China is a series of fortifications in northern China. Contrary to a popular myth, the wall "
     "is not visible from the Moon with the naked eye.",
     "The Great Wall of China is not visible from the Moon with the naked eye.",
     "The Great Wall of China is visible from the Moon with the naked eye."),
    ("Where is the Colosseum?",
     "The Colosseum is an elliptical amphitheatre in the centre of the city of Rome, Italy. Construction began "
     "under the emperor Vespasian in AD 72.",
     "The Colosseum is in Rome, Italy.", "The Colosseum is in Athens, Greece."),
    ("Who painted the Mona Lisa?",
     "The Mona Lisa is a half-length portrait painting by the Italian artist Leonardo da Vinci. It has been "
     "described as the best known work of art in the world.",
     "The Mona Lisa was painted by Leonardo da Vinci.", "The Mona Lisa was painted by Vincent van Gogh."),
]
