"""franq where RAG engineers already work: one small module per framework, each using only
franq's public API and importing its framework lazily (a one-line error names the pip extra).

    ragas       RAGAS: ``FranqMetric`` (``ascore(user_input, response, retrieved_contexts)``), ``FranqEvalMetric``
    deepeval    DeepEval: ``FranqMetric`` (``measure(LLMTestCase)``, ``a_measure``)
    llamaindex  LlamaIndex: ``FranqEvaluator`` (``aevaluate(query, response, contexts)`` -> EvaluationResult)
    langchain   a guard Runnable that attaches claim scores and flags an answer in a chain; a callback handler
    haystack    Haystack: ``FranqEvaluator``, a component with FaithfulnessEvaluator's sockets
    otel        OpenTelemetry: ``gen_ai.evaluation.result`` events on the current span
    openevals   LangSmith / openevals: ``franq_evaluator(inputs=, outputs=)`` -> {"key", "score", "comment"}
    scores      the per-answer value and reason every adapter reports (no framework)
    testing     ``fake_scorer()``: a tiny deterministic scorer for examples and tests

Every adapter takes ``scorer=``: a :class:`franq.Franq`, or any callable
``(question, passages, answer) -> AnswerScore``. See docs/integrations.md.
"""
