"""A scorer for the adapters' tests: ``fake_scorer()`` that records what each call was given
and how many calls ran at once (an adapter must score one answer at a time)."""
from __future__ import annotations

import threading
import time

from franq.apps.integrations.testing import fake_scorer


class RecordingScorer:
    """``(question, passages, answer) -> AnswerScore``; ``calls`` holds each call's arguments,
    ``seen`` its passages, ``most`` the most calls that were inside at once. ``pause``
    seconds inside each call widen the window in which a second thread could enter."""

    def __init__(self, pause: float = 0.0):
        self.calls: list[tuple] = []
        self.most = 0
        self._inside = 0
        self._pause = pause
        self._count = threading.Lock()  # guards the counters only, never the scoring
        self._score = fake_scorer()

    @property
    def seen(self) -> list:
        return [passages for _, passages, _ in self.calls]

    def __call__(self, question, passages, answer):
        with self._count:
            self._inside += 1
            self.most = max(self.most, self._inside)
        try:
            time.sleep(self._pause)
            self.calls.append((question, passages, answer))
            return self._score(question, passages, answer)
        finally:
            with self._count:
                self._inside -= 1
