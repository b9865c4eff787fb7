"""franq's exception types: each names the field or setting that is wrong."""


class FranqError(Exception):
    """Base class for franq's own errors."""


class InputError(FranqError, ValueError):
    """A user-supplied example, config or file is malformed; the message names the field."""


class ModelNotFoundError(FranqError, FileNotFoundError):
    """A model, checkpoint or embedded package is not where the configuration says."""


class ContextOverflowError(InputError):
    """The prompt plus answer does not fit the model's context window."""


class LabelWordsError(FranqError, ValueError):
    """A model's tokenizer cannot tell two answer words (yes / no, True / False) apart by
    their first token."""
