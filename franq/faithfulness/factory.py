"""Build the faithfulness backend a :class:`~franq.config.FranqConfig` names."""
from __future__ import annotations

from franq.errors import InputError


def backend_from_config(config, lm):
    """The backend for ``config.faithfulness``; ``lm`` is the pipeline's loaded CausalLM
    (the judge reuses it unless ``judge_model`` names another)."""
    kind = config.faithfulness
    if kind == "lexical":
        from franq.faithfulness.lexical import LexicalFaithfulness

        return LexicalFaithfulness()
    if kind == "combined":
        from franq.faithfulness.combined import CombinedFaithfulness

        return CombinedFaithfulness(config.faithfulness_map, lm_name=lm.name)
    if kind == "context_pmi":
        from franq.faithfulness.context_pmi import ContextPMIFaithfulness

        return ContextPMIFaithfulness(config.faithfulness_map, lm_name=lm.name)
    if kind == "alignscore":
        from franq.faithfulness.alignscore import AlignScoreFaithfulness

        return AlignScoreFaithfulness(config.alignscore_checkpoint, config.alignscore_base_model,
                                      device=config.device)
    if kind == "nli":
        from franq.faithfulness.nli import NLIFaithfulness

        return NLIFaithfulness(config.nli_model, device=config.device)
    if kind == "judge":
        from franq.faithfulness.judge import LMJudgeFaithfulness, OpenAIJudgeFaithfulness

        if config.judge_base_url:
            return OpenAIJudgeFaithfulness(config.judge_model, base_url=config.judge_base_url)
        if config.judge_model:
            from franq.lm import CausalLM

            lm = CausalLM.load(config.judge_model, device=config.device, dtype=config.dtype)
        return LMJudgeFaithfulness(lm, max_batch_tokens=config.max_batch_tokens)
    raise InputError(f"config 'faithfulness': unknown backend {kind!r}")
